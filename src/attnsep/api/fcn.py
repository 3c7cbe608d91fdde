"""The API's fully-connected baselines (SPEC A7.6, B4, B5.4; ``attnsep fcn ...``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..configs import (
    SelectionFCNConfig,
    XorFCNConfig,
)
from ..core.resources import STEP_SECONDS
from ..core.validate import one_of
from ..train.memory import fcn_peak

if TYPE_CHECKING:
    from ..results import (
        FCNResult,
    )

from .guard import Progress, config_of, guarded_run

FCN_TASKS = ("xor", "select")


def train_fcn(
    task: str,
    *,
    seeds: int | None = None,
    seed: int = 0,
    progress: Progress | None = None,
    force: bool = False,
    **options: Any,
) -> FCNResult:
    """Train an ensemble of fully-connected ReLU nets (SPEC A7.6, B4, B5.4).

    The computation of ``attnsep fcn xor`` (``task="xor"``: sparse XOR, success = test sign
    error ``<= success_tol``) and ``attnsep fcn select`` (``task="select"``: an MLP on
    ``[vec X ; 1_y]`` for q-sparse averaging, beside the floor of SPEC B4).

    Parameters
    ----------
    task
        ``xor`` or ``select``.
    seeds
        Number of replicas (``None``: the ``seeds`` default of ``XorFCNConfig`` or
        ``SelectionFCNConfig``).
    seed
        Base seed.
    progress
        Called as ``progress(step, steps)``: with 0 before the first step, then after each
        (training ends early once every replica has finished).
    force
        Run even when training needs more memory than is available (else ``ValueError``).
    **options
        Any other field of ``attnsep.configs.XorFCNConfig`` (``d``, ``width``,
        ``depth``, ``steps``, ``batch``, ``lr``, ``optimizer``, ``loss``, ``samples``, ...) or
        ``attnsep.configs.SelectionFCNConfig`` (``d``, ``T``, ``q``, ``width``, ...).

    Returns
    -------
    FCNResult
        The trained nets and per-replica errors or losses; ``report()`` is the command's JSON.
    """
    one_of("task", task, FCN_TASKS)
    config_type = XorFCNConfig if task == "xor" else SelectionFCNConfig
    named = {"seed": seed} if seeds is None else {"seed": seed, "seeds": seeds}
    config = config_of(config_type, named, options)
    what = f"FCN training ({config.inputs} inputs, width {config.width}, {config.seeds} seeds)"
    guard = (what, fcn_peak(config), _fcn_seconds(config), "seeds, width, steps or batch")

    def compute() -> FCNResult:
        from ..results import FCNResult
        from ..train.fcn import train_selection, train_xor

        return FCNResult(task, (train_xor if task == "xor" else train_selection)(config, progress))

    return guarded_run(compute, guard, force, progress=progress, steps=config.steps)


def _fcn_seconds(config: XorFCNConfig | SelectionFCNConfig) -> float:
    """Training priced by ``fcn-selection``'s model of the same loop
    (``experiments.costs.fcn_steps``: ``seeds x steps x batch x inputs x
    width`` at most, a replica may stop early), and at least ``STEP_SECONDS`` a step."""
    from ..engine.published import price
    from ..experiments.costs import fcn_steps

    work = fcn_steps(config.steps, config.seeds, config.batch, config.inputs, config.width)
    return max(price("fcn-selection", {"fcn": work}) or 0.0, config.steps * STEP_SECONDS)
