"""The separation, measured: trainable parameters needed vs problem size (SPEC A7.6, Part C).

For each size, a threshold search (doubling, then bisection; ``search.smallest_passing``)
finds the smallest size knob whose success rate over the replicas reaches a target:
``m`` for the one-step transformer (``2m`` trainable parameters), the hidden width for the
two-layer ReLU net (``width (d + 2) + 1`` parameters). Growth laws are log-log slopes; for
the transformer also the power ``p`` in ``m* ~ (ln d)^p``. A frontier repeats each search
over ``groups`` independent groups of replicas (base seeds ``seed + GROUP_STRIDE·g``) and
shows the median group with the range over the groups (SPEC Part C: bands over seeds).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from .exact.selection import fcn_bottleneck_loss, uniform_attention_loss
from .metrics.selection import evaluate_lengths
from .metrics.stats import POLYLOG, POWER, wilson
from .models.mlp import count
from .one_step import OneStepConfig, run_one_step
from .search import smallest_passing
from .train.fcn import SelectionFCNConfig, XorFCNConfig, train_selection, train_xor
from .train.selection import POSITION_LR_PER_DIM, SelectionTrainConfig, train

TRANSFORMER_TARGET = 0.75
"""One-step success saturates near 0.8 at small d: in about one replica in five the heads
collapse onto one support bit when the initial scores of i* and j* nearly tie."""
FCN_TARGET = 0.9
GROUP_STRIDE = 1000


def group_seeds(seed: int, groups: int) -> list[int]:
    """Base seeds of ``groups`` independent groups of replicas."""
    return [seed + GROUP_STRIDE * g for g in range(groups)]


def group_jobs(config: Any, sizes: str) -> list[Any]:
    """One job per size and seed group: copies of a pydantic experiment config whose list field
    ``sizes`` holds one size and whose ``seed`` is that group's base seed."""
    return [
        config.model_copy(update={sizes: [n], "groups": 1, "seed": seed})
        for n in getattr(config, sizes)
        for seed in group_seeds(config.seed, config.groups)
    ]


def combine(points: list[dict[str, Any]]) -> dict[str, Any]:
    """One size's points over the seed groups: the median group's point (lower median of the
    parameter counts, so it is a measured point), with ``params_low``/``params_high`` the range
    over the groups; ``params`` is None when some group never reached the target."""
    reached = [p for p in points if p["params"] is not None]
    if len(reached) < len(points):
        median = {**points[0], "params": None}
    else:
        middle = statistics.median_low(p["params"] for p in reached)
        median = next(p for p in reached if p["params"] == middle)
    counts = [p["params"] for p in reached]
    return {
        **median,
        "params_low": min(counts, default=None),
        "params_high": max(counts, default=None),
        "groups": len(points),
    }


def params_span(point: dict[str, Any]) -> str:
    """``median [low-high]`` parameters over the seed groups (just the median when they agree)."""
    if point["params"] is None:
        return "not reached"
    low, high = point.get("params_low"), point.get("params_high")
    if low is None or low == high:
        return f"{point['params']:g}"
    return f"{point['params']:g} [{low:g}-{high:g}]"


def fmt(value: float | None) -> str:
    """Two decimals, or ``n/a``."""
    return "n/a" if value is None else f"{value:.2f}"


def combine_groups(records: list[dict[str, Any]], size: str) -> list[dict[str, Any]]:
    """Per-group records (one per size and seed group) -> one combined point per size, sorted."""
    sizes = sorted({r[size] for r in records})
    return [combine([r for r in records if r[size] == n]) for n in sizes]


def _point(
    size_name: str, size: int, knob: str, star: int | None, params: int | None, probes
) -> dict:
    at_star = next((p for p in probes if p.size == star), None)
    low, high = (None, None) if at_star is None else wilson(at_star.successes, at_star.trials)
    return {
        size_name: size,
        knob: star,
        "params": params,
        "success_rate": None if at_star is None else at_star.rate,
        "success_low": low,
        "success_high": high,
        "collapse_rate": None,
        "probes": [p.as_record() for p in probes],
    }


def transformer_xor(
    d: int,
    seeds: int,
    seed: int = 0,
    target: float = TRANSFORMER_TARGET,
    m_limit: int = 512,
    device: str = "cpu",
) -> dict[str, Any]:
    """Smallest ``m`` whose one-step success rate reaches ``target`` at input length ``d``."""
    collapse: dict[int, float] = {}

    def evaluate(m: int):
        result = run_one_step(OneStepConfig(d=d, m=m, seeds=seeds, seed=seed, device=device))
        collapse[m] = float(result.collapsed.mean())
        return result.success

    star, probes = smallest_passing(evaluate, target, 2, m_limit)
    point = _point("d", d, "m_star", star, None if star is None else 2 * star, probes)
    point["collapse_rate"] = collapse.get(star) if star is not None else collapse[max(collapse)]
    return point


def fcn_xor(
    d: int,
    seeds: int,
    seed: int = 0,
    target: float = FCN_TARGET,
    width_limit: int = 4096,
    **train: Any,
) -> dict[str, Any]:
    """Smallest hidden width whose trained two-layer ReLU nets reach ``target`` success."""

    def evaluate(width: int):
        result = train_xor(XorFCNConfig(d=d, width=width, replicas=seeds, seed=seed, **train))
        return result.success.numpy()

    star, probes = smallest_passing(evaluate, target, 1, width_limit)
    return _point("d", d, "width_star", star, None if star is None else count(d, star), probes)


def growth(points: list[dict[str, Any]], size_name: str = "d") -> dict[str, float | None]:
    """Log-log slope of the parameters needed against the size, and against ``ln size``."""
    found = [p for p in points if p["params"] is not None]
    if len(found) < 2:
        return {"loglog_slope": None, "log_power": None}
    sizes, params = [p[size_name] for p in found], [p["params"] for p in found]
    return {
        "loglog_slope": POWER.fit(sizes, params)[1],
        "log_power": POLYLOG.fit(sizes, params)[1],
    }


def _frontier(
    sizes: list[int],
    seeds: list[int],
    transformer: Callable[[int, int], dict],
    fcn: Callable[[int, int], dict],
    size_name: str,
) -> dict[str, Any]:
    t = [combine([transformer(n, s) for s in seeds]) for n in sizes]
    f = [combine([fcn(n, s) for s in seeds]) for n in sizes]
    t_last, f_last = t[-1]["params"], f[-1]["params"]
    fit = {
        "transformer": growth(t, size_name),
        "fcn": growth(f, size_name),
        "param_ratio_at_largest": {
            size_name: sizes[-1],
            "ratio": None if not (t_last and f_last) else f_last / t_last,
        },
    }
    return {"transformer": t, "fcn": f, "fit": fit}


def xor_frontier(
    ds: list[int], seeds: int, seed: int = 0, groups: int = 1, **fcn_train: Any
) -> dict[str, Any]:
    """``{"transformer": [...], "fcn": [...], "fit": {...}}`` over the input lengths ``ds``."""
    return _frontier(
        ds,
        group_seeds(seed, groups),
        lambda d, s: transformer_xor(d, seeds, s),
        lambda d, s: fcn_xor(d, seeds, s, **fcn_train),
        "d",
    )


SELECT_TARGET = 0.2
"""Token selection: a replica succeeds when its loss is at most this fraction of the
uniform-attention loss ``d (T - q) / (q T)``."""


def _select_success(losses, T: int, q: int, d: int, target: float):
    """Each replica's success: loss at most ``target`` x the uniform-attention loss."""
    return np.asarray(losses) <= target * float(uniform_attention_loss(T, q, d))


def transformer_select(
    T: int,
    d: int,
    q: int,
    seeds: int,
    seed: int = 0,
    target: float = SELECT_TARGET,
    m_limit: int = 1024,
    steps: int = 300,
) -> dict:
    """Smallest PE width ``m_p`` whose trained selector (position block, ``m_p^2`` parameters)
    reaches ``target`` x the uniform loss, exactly over the tokens, in a ``FCN_TARGET`` share
    of the replicas."""

    def evaluate(m: int):
        config = SelectionTrainConfig(
            d=d,
            T=T,
            q=q,
            pe_dim=m,
            trainable="position",
            objective="population",
            steps=steps,
            batch=128,
            lr=POSITION_LR_PER_DIM * m,
            replicas=seeds,
            seed=seed,
        )
        result = train(config)
        (row,) = evaluate_lengths(result.W, config.task, result.encodings, [T], seed)
        return _select_success(row.exact, T, q, d, target)

    star, probes = smallest_passing(evaluate, FCN_TARGET, 2, m_limit)
    return _point("T", T, "m_star", star, None if star is None else star * star, probes)


def fcn_select(
    T: int,
    d: int,
    q: int,
    seeds: int,
    seed: int = 0,
    target: float = SELECT_TARGET,
    width_limit: int = 4096,
    **train_kwargs: Any,
) -> dict:
    """Smallest hidden width whose MLPs on ``[vec X ; 1_y]`` reach ``target`` x the uniform loss."""

    def evaluate(width: int):
        result = train_selection(
            SelectionFCNConfig(
                d=d, T=T, q=q, width=width, replicas=seeds, seed=seed, **train_kwargs
            )
        )
        return _select_success(result.loss, T, q, d, target)

    star, probes = smallest_passing(evaluate, FCN_TARGET, 1, width_limit)
    params = None if star is None else count(T * d + T, star, d)
    return _point("T", T, "width_star", star, params, probes)


def fcn_select_bound(T: int, d: int, q: int, target: float = SELECT_TARGET) -> dict:
    """The smallest first-layer width any FCN on ``[vec X ; 1_y]`` needs to reach ``target`` x
    the uniform loss, proven (SPEC B4): a width-``w`` net sees ``y`` and ``w`` linear
    functionals of ``vec X``, whose least loss is ``fcn_bottleneck_loss``; exact arithmetic."""
    limit = uniform_attention_loss(T, q, d) * Fraction(target)
    width = next(w for w in range(T * d + 1) if fcn_bottleneck_loss(T, q, d, w) <= limit)
    return {"T": T, "width_star": width, "params": count(T * d + T, width, d)}


def select_frontier(
    Ts: list[int], d: int, q: int, seeds: int, seed: int = 0, groups: int = 1
) -> dict[str, Any]:
    """``{"transformer": [...], "fcn": [...], "fit": {...}}`` over the sequence lengths ``Ts``."""
    return _frontier(
        Ts,
        group_seeds(seed, groups),
        lambda T, s: transformer_select(T, d, q, seeds, s),
        lambda T, s: fcn_select(T, d, q, seeds, s),
        "T",
    )
