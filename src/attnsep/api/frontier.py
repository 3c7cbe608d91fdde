"""The API's frontiers: the parameters the transformer and the FCN need per problem size (SPEC
A7.6, Part C; ``attnsep frontier ...``), through the separation experiments."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..configs import (
    OneStepConfig,
    SelectionTrainConfig,
    XorFCNConfig,
)
from ..core.resources import check_resources
from ..core.validate import int_at_least, int_values, one_of, require
from ..engine.store import DEFAULT_PATH
from ..engine.store_state import check_writable
from ..train.memory import fcn_peak, one_step_peak, selection_peak

if TYPE_CHECKING:
    from ..results import (
        ExperimentResult,
        FrontierResult,
    )

from .running import run_experiment

FRONTIER_SOLVERS = ("law", "population", "sgd")
"""``frontier_select``'s solvers (``experiments.select_width.config``)."""


def _increasing(name: str, values: Iterable[int], low: int) -> list[int]:
    """``values`` as a list of integers ``>= low``, strictly increasing."""
    found = int_values(name, values, low)
    require(bool(found), f"{name} needs at least one value")
    require(found == sorted(set(found)), f"{name} must be increasing without repeats, got {found}")
    return found


def _run_stored(name: str, config: dict[str, Any], store: str | Path) -> ExperimentResult:
    """Experiment ``name`` at ``config`` (over its quick preset), every job stored in
    ``store``; a failed job is one error line."""
    ran = run_experiment(name, config=config, store=store)
    failed = [row["error"].splitlines()[0] for row in ran.rows if row["status"] != "done"]
    require(not failed, f"a job failed ({failed[0] if failed else ''}); rerun to retry it")
    return ran


def frontier_xor(
    d_values: Iterable[int] = (16, 32, 64, 128),
    *,
    seeds: int = 8,
    seed: int = 0,
    store: str | Path = DEFAULT_PATH,
) -> FrontierResult:
    """The one-step transformer against two-layer ReLU nets on sparse XOR: the trainable
    parameters each needs per ``d`` (SPEC A7.6; ``attnsep frontier xor``).

    Success: test sign error ``<= 1%`` on fresh samples in ``>= 90%`` of the replicas. The
    jobs are the ``separation-xor`` experiment's: stored in ``store``, never computed twice.

    Parameters
    ----------
    d_values
        Input lengths, increasing.
    seeds
        Replicas per probe.
    seed
        Base seed.
    store
        The results database; its stored jobs are read back, not computed again.

    Returns
    -------
    FrontierResult
        Per model and ``d`` the threshold and its parameters with intervals, and each model's
        exponent; ``table()`` as the command prints it.
    """
    ds = _increasing("d", d_values, 2)
    int_at_least("seeds", seeds, 1)
    int_at_least("seed", seed, 0)
    check_writable(store)
    for d in ds:  # the smallest probes of both searches must fit (a lower bound)
        step = one_step_peak(OneStepConfig(d=d, m=1, seeds=seeds))
        fcn = fcn_peak(XorFCNConfig(d=d, width=1, seeds=seeds))
        what = f"frontier xor at d={d}, {seeds} seeds"
        check_resources(what, max(step, fcn), None, "seeds or d", forced_by=None)
    from ..experiments import xor_thresholds
    from ..results import FrontierResult

    config = {"d_values": ds, "fcn_d_values": ds, "seeds": seeds, "seed": seed}
    ran = _run_stored("separation-xor", config, store)
    return FrontierResult("xor", xor_thresholds.summary(ran.records), ran)


def frontier_select(
    T_values: Iterable[int] = (8, 16, 32, 64),
    q_values: Iterable[int] = (2,),
    *,
    d: int = 16,
    seeds: int = 8,
    seed: int = 0,
    solver: str = "law",
    store: str | Path = DEFAULT_PATH,
) -> FrontierResult:
    """The selector's width ``d + m_p*`` against the FCN's proven minimum first-layer width,
    per ``T`` (SPEC Part C; ``attnsep frontier select``).

    ``m_p*``: the smallest PE width whose selectors (the position block, ``m_p*^2``
    parameters), run by population gradient descent from ``W = 0``, reach loss ``<= 0.2 x``
    the uniform-attention loss in ``>= 90%`` of the replicas; the descent stays on
    ``W = alpha I`` (rotation symmetry). The FCN's: the least first-layer width any net on
    ``(vec X, 1_y)`` needs for that loss (SPEC B4). The jobs are the ``separation-select``
    experiment's: stored in ``store``, never computed twice.

    Parameters
    ----------
    T_values
        Sequence lengths, increasing.
    q_values
        Subset sizes, increasing, each ``<`` every ``T``.
    d
        Token dimension.
    seeds
        Replicas per probe.
    seed
        Base seed.
    solver
        ``law`` (losses from the products' law, at a cost independent of ``T``),
        ``population`` (drawn sequences) or ``sgd``.
    store
        The results database; its stored jobs are read back, not computed again.

    Returns
    -------
    FrontierResult
        Per ``(T, q)`` both widths with intervals, the fitted laws and the held-out decision;
        ``table()`` as the command prints it.
    """
    Ts, qs = _increasing("T", T_values, 2), _increasing("q", q_values, 1)
    int_at_least("d", d, 1)
    require(qs[-1] < Ts[0], f"q must be < every T, got q={qs[-1]} and T={Ts[0]}")
    int_at_least("seeds", seeds, 1)
    int_at_least("seed", seed, 0)
    check_writable(store)
    one_of("solver", solver, FRONTIER_SOLVERS)
    _check_smallest_selectors(Ts, qs[0], d, seeds)
    from ..experiments.separation_select.config import Config as SelectConfig
    from ..experiments.separation_select.frontier import summary
    from ..results import FrontierResult

    config = {"d": d, "T_values": Ts, "q_values": qs, "seeds": seeds, "seed": seed}
    ran = _run_stored("separation-select", {**config, "solver": solver}, store)
    typed = cast(SelectConfig, ran.config)
    return FrontierResult("select", summary(ran.records, typed), ran)


def _check_smallest_selectors(Ts: list[int], q: int, d: int, seeds: int) -> None:
    """The smallest selector of the search at each ``T`` must fit (a lower bound)."""
    for T in Ts:
        probe = SelectionTrainConfig(d=d, T=T, q=q, pe_dim=1, batch=1, seeds=seeds)
        what = f"frontier select at T={T}, d={d}, {seeds} seeds"
        check_resources(what, selection_peak(probe), None, "seeds, d or T", forced_by=None)
