"""Training the FCN baselines, all replicas at once: one loop, a part per task (SPEC A7.6, B5.4).

:func:`train` builds the config's task part (:mod:`.xor`: sparse XOR, A7.6; :mod:`.selection`:
token selection, B5.4) and runs the shared loop (:mod:`.loop`): ``E`` nets, each trained on its
own data with its own optimizer state, so replica ``e``'s result does not depend on ``E`` or on
chunking by ``first_replica``. Streams, all named ``(seed, e, ...)``:

* ``"fcn-init"``: the weights (:meth:`MLP.init`);
* ``"support"``: XOR supports; ``"fcn-train"``: XOR training samples, fresh every step or the
  fixed set; ``"fcn-val"`` / ``"fcn-test"``: XOR stopping and test sets (every XOR sample from
  :mod:`attnsep.tasks.parity`'s random bytes);
* ``"fcn-order"``: minibatch order on a fixed set (either task);
* token selection draws from :class:`TokenSelection` with the selector's keys
  (``("train", step)``, ``("fcn-set",)``, ``("eval", T)``): both models see the same sequences.
"""

from __future__ import annotations

from typing import overload

from ...configs import SelectionFCNConfig, XorFCNConfig
from . import selection, xor
from .loop import CHECK_EVERY, EVAL_ROWS, Diverged, Progress
from .loop import train as _train
from .selection import SelectionFCNResult, selection_features
from .xor import VAL_SAMPLES, XorFCNResult, xor_loss

__all__ = [
    "CHECK_EVERY",
    "EVAL_ROWS",
    "VAL_SAMPLES",
    "Diverged",
    "SelectionFCNResult",
    "XorFCNResult",
    "selection_features",
    "train",
    "train_selection",
    "train_xor",
    "xor_loss",
]

PARTS = {XorFCNConfig: xor.part, SelectionFCNConfig: selection.part}
"""The task part of each config type."""


@overload
def train(cfg: XorFCNConfig, progress: Progress | None = None) -> XorFCNResult: ...
@overload
def train(cfg: SelectionFCNConfig, progress: Progress | None = None) -> SelectionFCNResult: ...
def train(cfg, progress=None):
    """Train ``cfg.seeds`` FCNs on ``cfg``'s task and evaluate them; ``progress(step,
    steps)`` after each step, if given."""
    part = PARTS.get(type(cfg))
    if part is None:
        names = " or ".join(c.__name__ for c in PARTS)
        raise TypeError(f"cfg must be a {names}, got {type(cfg).__name__}")
    return _train(cfg, part, progress)


train_xor = train_selection = train
"""The names the callers use: :func:`train` on an ``XorFCNConfig`` / ``SelectionFCNConfig``."""
