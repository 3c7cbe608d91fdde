"""Metrics for sparse token selection, per replica (SPEC B2, B5.3).

The evaluation set of length ``T'`` is drawn with key ``("eval", T')`` from the run's seed:
tokens and subsets from :meth:`TokenSelection.sample`, stochastic encodings from
:meth:`StochasticPE.draw` (a fixed PE uses its frozen rows ``1..T'``). It is identical across
runs that share the seed, whatever the training settings.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..configs import EVAL_SIZE
from ..core.rng import stream_seed
from ..core.validate import int_at_least
from ..exact import products
from ..exact.selection import depends_on_tokens, mean_stderr, per_sequence_loss
from ..models.selector import forward, ground_truth
from ..positional_encodings import FixedPE, StochasticPE
from ..tasks.selection import TokenSelection, sts


def sampled_loss(
    W: torch.Tensor, X: torch.Tensor, P: torch.Tensor, y: torch.Tensor
) -> torch.Tensor:
    """``‖f(X, y) − STS(X, y)‖²`` per sequence, ``E x B`` (plain Monte Carlo, SPEC B1)."""
    f, _ = forward(W, X, P, y)
    return (f - sts(X, y)).pow(2).sum(dim=-1)


def cos_to_ground_truth(W: torch.Tensor, d: int) -> torch.Tensor:
    """Frobenius cosine between each replica's ``W`` and ``W*`` (SPEC B2); ``0`` for ``W = 0``."""
    m_p = W.shape[-1] - d
    target = ground_truth(d, m_p, W.dtype)
    norms = W.flatten(1).norm(dim=1) * target.norm()
    return torch.where(norms > 0, (W * target).sum(dim=(1, 2)) / norms.clamp_min(1e-300), 0.0)


@dataclass(frozen=True)
class LengthEval:
    """Per-replica losses at one length ``T'`` (each tensor has shape ``E``).

    ``loss``/``stderr``: sampled loss on the evaluation set and its standard error.
    ``exact``/``exact_stderr``: exact over the tokens, Monte Carlo over the same ``(y, PE)``
    draws; ``None`` when a replica's logits depend on the tokens (content block nonzero).
    """

    length: int
    d: int
    loss: torch.Tensor
    stderr: torch.Tensor
    exact: torch.Tensor | None
    exact_stderr: torch.Tensor | None

    @property
    def loss_per_coord(self) -> torch.Tensor:
        return self.loss / self.d


def evaluate_length(
    W: torch.Tensor,
    task: TokenSelection,
    pe: StochasticPE | FixedPE,
    length: int,
    seed: int,
    size: int = EVAL_SIZE,
) -> LengthEval:
    """Losses of ``W`` on the fixed evaluation set of ``size`` sequences of ``length`` tokens."""
    int_at_least("eval size", size, 2)
    key = ("eval", length)
    data = task.sample(seed, W.shape[0], size, key, length=length)
    P = pe.draw(key, size, length)
    with torch.no_grad():
        loss, stderr = mean_stderr(sampled_loss(W, data.X, P, data.y))
        exact = exact_stderr = None
        if not bool(depends_on_tokens(W, P.shape[-1]).any()):
            exact, exact_stderr = mean_stderr(per_sequence_loss(W, P, data.y))
    for value in (loss, stderr, exact, exact_stderr):
        if value is not None and not bool(torch.isfinite(value).all()):
            raise ValueError(f"evaluation at length {length} gave a NaN/inf loss")
    return LengthEval(length, task.d, loss, stderr, exact, exact_stderr)


def evaluate_lengths(
    W: torch.Tensor,
    task: TokenSelection,
    pe: StochasticPE | FixedPE,
    lengths: list[int],
    seed: int,
    size: int = EVAL_SIZE,
) -> list[LengthEval]:
    """:func:`evaluate_length` at each ``T'`` in ``lengths`` (length generalization, SPEC B5.3)."""
    return [evaluate_length(W, task, pe, length, seed, size) for length in lengths]


def law_exact_loss(
    W_pp: torch.Tensor, d: int, q: int, length: int, kind: str, seed: int, size: int = EVAL_SIZE
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per replica, mean and s.e. of the exact-over-tokens loss (SPEC B3) of the position block
    ``W_pp`` (``E x m x m``) over ``size`` fresh sequences of ``length`` tokens whose stochastic
    encodings are drawn by law (:mod:`attnsep.exact.products`, ``ratio`` recipe): the subset's
    encodings as they are, the others by their coordinate along ``v = W_pp u_y`` (independent
    of ``v``), exact in distribution. Replica ``e`` draws from stream ``(seed, e, "pe-law",
    "eval", length)``. It holds ``size x q x m`` numbers per replica where
    :func:`evaluate_length` holds ``E x size x length x m`` (8.6 GB at ``E = 8``, ``size =
    4096``, ``length = 128``, ``m = 256``)."""
    int_at_least("eval size", size, 2)
    m_p = W_pp.shape[-1]
    losses = []
    for e in range(W_pp.shape[0]):
        rng = np.random.default_rng(stream_seed(seed, e, "pe-law", "eval", length))
        drawn = products.draw(rng, size, length, q, m_p, kind, "ratio")
        v = drawn.on_y.sum(axis=-2) @ W_pp[e].numpy().T
        inside, outside = products.products(drawn.on_y, drawn.t, v)
        losses.append(products.selection_loss(np.concatenate([inside, outside], -1), q, d))
    loss, stderr = mean_stderr(torch.from_numpy(np.stack(losses)))
    if not bool(torch.isfinite(loss).all() and torch.isfinite(stderr).all()):
        raise ValueError(f"evaluation at length {length} gave a NaN/inf loss")
    return loss, stderr
