"""The API's token-selection computations: training the selector, the exact bounds (SPEC B3,
B4; ``attnsep select ...``)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..configs import (
    EVAL_SIZE,
    SelectionTrainConfig,
    default,
)
from ..core.resources import STEP_SECONDS
from ..core.validate import int_at_least, int_values, require
from ..train.memory import selection_evaluation_peak, selection_peak

if TYPE_CHECKING:
    from ..results import (
        SelectorResult,
    )

from .guard import Progress, config_of, guarded_run


def train_selector(
    T: int,
    q: int,
    pe_dim: int = default(SelectionTrainConfig, "pe_dim"),
    *,
    d: int = default(SelectionTrainConfig, "d"),
    pe: str = default(SelectionTrainConfig, "pe"),
    seeds: int = default(SelectionTrainConfig, "seeds"),
    seed: int = 0,
    eval_lengths: Iterable[int] | None = None,
    eval_size: int = EVAL_SIZE,
    save: str | Path | None = None,
    progress: Progress | None = None,
    force: bool = False,
    **options: Any,
) -> SelectorResult:
    """Train the one-layer selector on q-sparse averaging and evaluate it (SPEC B3, B5.3).

    The computation of ``attnsep select train``: replicas trained at once from ``W = 0``.

    Parameters
    ----------
    T
        Training sequence length.
    q
        Subset size.
    pe_dim
        Positional-encoding width m_p.
    d
        Token dimension.
    pe
        ``stochastic`` or ``fixed``.
    seeds
        Number of replicas, trained at once; the result holds each one's ``W``, curve, losses.
    seed
        Base seed of the training and of the evaluation sets.
    eval_lengths
        Lengths ``T'`` to evaluate at besides ``T`` (``None``: ``2T, 4T, 8T``); a fixed PE
        table covers the longest, its rows beyond ``T`` never trained (why it fails there).
    eval_size
        Evaluation sequences per length.
    save
        An ``.npz`` file for ``W`` (and a fixed PE's table), the curve and the losses.
    progress
        Called as ``progress(step, steps)``: with 0 before the first step, then after each.
    force
        Run even when training needs more memory than is available (else ``ValueError``).
    **options
        Any other field of ``attnsep.train.selection.SelectionTrainConfig`` (``steps``,
        ``batch``, ``lr``, ...; ``attnsep select train --help`` lists each with its help).
    """
    named = {"d": d, "T": T, "q": q, "pe": pe, "pe_dim": pe_dim, "seeds": seeds, "seed": seed}
    config = config_of(SelectionTrainConfig, named, options)
    lengths = _evaluation_lengths(T, q, eval_lengths, eval_size)
    if pe == "fixed":  # the table covers the longest length
        fixed = {**named, "fixed_positions": max(lengths)}
        config = config_of(SelectionTrainConfig, fixed, options)
    compute = partial(_train_and_evaluate, config, progress, lengths, eval_size)
    given = {"save": save, "progress": progress, "steps": config.steps}
    return guarded_run(compute, _selector_guard(config, lengths, eval_size), force, **given)


def _evaluation_lengths(T: int, q: int, others: Iterable[int] | None, eval_size: int) -> list[int]:
    """``T`` and the other lengths to evaluate at (``None``: ``2T, 4T, 8T``), each once, checked
    with the size."""
    others = [2 * T, 4 * T, 8 * T] if others is None else others
    lengths = list(dict.fromkeys([T, *int_values("eval length", others, max(q, 1))]))
    int_at_least("eval size", eval_size, 2)
    return lengths


def _selector_guard(
    config: SelectionTrainConfig, lengths: list[int], eval_size: int
) -> tuple[str, float, float, str]:
    """``guarded_run``'s guard of a selector's training and evaluation."""
    size = f"T={config.T}, m_p={config.pe_dim}, batch {config.batch}, {config.seeds} seeds"
    peak = selection_peak(config) + selection_evaluation_peak(config, lengths, eval_size)
    knobs = "seeds, steps, batch, T, pe_dim, eval lengths or eval size"
    return f"selector training at {size}", peak, _selector_seconds(config), knobs


def _train_and_evaluate(
    config: SelectionTrainConfig, progress: Progress | None, lengths: list[int], eval_size: int
) -> SelectorResult:
    from ..core.device import torch_threads
    from ..metrics.selection import evaluate_lengths
    from ..results import SelectorResult
    from ..tasks.selection import TokenSelection
    from ..train.selection import train

    start = time.perf_counter()
    with torch_threads(1):
        result = train(config, progress)
        task = TokenSelection.of(config)
        rows = evaluate_lengths(result.W, task, result.encodings, lengths, config.seed, eval_size)
    return SelectorResult(result, tuple(rows), time.perf_counter() - start, eval_size)


def _selector_seconds(config: SelectionTrainConfig) -> float:
    """Training priced by ``select-convergence``'s model of the same SGD loop
    (``experiments.costs.selector_steps``: ``E x steps x batch`` sequences, ``W`` of the whole
    width ``d + m_p`` squared), and at least ``STEP_SECONDS`` a step."""
    from ..engine.published import price
    from ..experiments.costs import selector_steps

    width = config.d + config.pe_dim
    steps = selector_steps(config.steps, config.batch, width, width, config.q, config.T)
    seconds = price("select-convergence", {"": config.seeds * steps})
    return max(seconds or 0.0, config.steps * STEP_SECONDS)


def selection_bounds(
    T: int, q: int, d: int | None = None, width: int | None = None
) -> dict[str, Any]:
    """The FCN's loss floor and the reference losses, exact (SPEC B4; ``attnsep select bound``).

    Parameters
    ----------
    T
        Sequence length.
    q
        Subset size.
    d
        Token dimension: the reference losses are summed over ``d`` coordinates (``None``:
        per coordinate).
    width
        The FCN's first-layer width, for the width form of the floor (needs ``d``).

    Returns
    -------
    dict
        Each loss as a float and as its exact fraction, and the floor's form.
    """
    require(width is None or d is not None, "width needs d (the floor is (Td-w)(T-q)/(qT(T-1)))")
    from ..exact.selection_bounds import selection_bounds_report

    return selection_bounds_report(T, q, d, width)
