"""The separation, measured: trainable parameters needed vs problem size (SPEC A7.6, Part C/D).

For each size, a threshold search (doubling, then bisection; ``search.smallest_passing``)
finds the smallest size knob whose success rate over the replicas reaches a target:
``m`` for the one-step transformer (``2m`` trainable parameters), the hidden width for the
two-layer ReLU net (``width (d + 2) + 1`` parameters).

Sparse XOR (SPEC A7.6, Part D): one success definition for both models, test sign error
``<= SIGN_TOL`` on ``TEST_SAMPLES`` fresh samples, and a threshold is the smallest knob with
a success rate ``>= TARGET``. Every probe keeps each replica's outcome, so thresholds,
parameter counts and power-law exponents get bootstrap intervals over the replicas
(``XorFrontier``). Token selection (SPEC Part C) repeats each search over ``groups``
independent groups of replicas (base seeds ``seed + GROUP_STRIDE·g``) and shows the median
group with the range over the groups.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import torch

from .configs import default
from .exact.selection import fcn_bottleneck_loss, uniform_attention_loss
from .metrics.parity import sign_error
from .metrics.selection import evaluate_lengths
from .metrics.stats import (
    POLYLOG,
    POWER,
    estimate,
    exponent_draws,
    interval,
    threshold_draws,
    wilson,
)
from .models.mlp import count
from .models.query_heads import QueryHeads
from .one_step import OneStepConfig, OneStepResult, run_one_step
from .rng import generator
from .search import Probe, probe_matrix, smallest_passing
from .train.fcn import SelectionFCNConfig, XorFCNConfig, train_selection, train_xor
from .train.selection import POSITION_LR_PER_DIM, SelectionTrainConfig, train

TARGET = 0.9
"""A size's threshold is the smallest knob whose success rate reaches this (SPEC Part D)."""
FCN_TARGET = TARGET  # the token-selection searches' name for it
SIGN_TOL = default(XorFCNConfig, "success_tol")
"""Sparse XOR: a replica succeeds when its test sign error is at most this (0.01)."""
TEST_SAMPLES = default(XorFCNConfig, "test_samples")
"""Fresh test samples per replica for the sign error, both models (8192, the FCN's test)."""
BOOTSTRAP_SEED = 0
GROUP_STRIDE = 1000


def group_seeds(seed: int, groups: int) -> list[int]:
    """Base seeds of ``groups`` independent groups of replicas."""
    return [seed + GROUP_STRIDE * g for g in range(groups)]


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


def _confirm(
    evaluate: Callable[[int], np.ndarray], star: int | None, probes: list[Probe], limit: int
) -> list[Probe]:
    """The search's probes plus ``2 star`` and ``4 star`` (up to ``limit``): a bootstrap draw
    that fails at ``star`` then finds its threshold above instead of reading "not reached"."""
    if star is None:
        return probes
    done = {p.size for p in probes}
    extra = [
        Probe(size, tuple(bool(o) for o in evaluate(size)))
        for size in (2 * star, 4 * star)
        if size <= limit and size not in done
    ]
    return sorted(probes + extra, key=lambda p: p.size)


def transformer_sign_error(result: OneStepResult, samples: int = TEST_SAMPLES) -> np.ndarray:
    """Each replica's test sign error after its step (SPEC A7.6), on ``samples`` fresh inputs
    from its own stream ``(seed, e, "one-step-test")``. Needs the kept embeddings. A replica
    whose certified error (SPEC A6) is below 1 has ``sign f(x) = y`` on every input of the
    cube, so its error is 0 without sampling."""
    config = result.config
    errors = np.zeros(config.seeds)
    todo = np.flatnonzero(result.certified_error >= 1)
    if todo.size:
        model = QueryHeads(torch.from_numpy(result.embeddings[todo]), config.attention, config.sign)
        gamma = model.weights(torch.from_numpy(result.theta_after[todo]))
        gens = [generator(config.seed, int(e), "one-step-test") for e in todo]
        support = torch.from_numpy(result.support[todo])
        errors[todo] = sign_error(gamma, support, config.sign, samples, gens).numpy()
    return errors


def transformer_xor(
    d: int,
    seeds: int,
    seed: int = 0,
    m_limit: int = 512,
    device: str = "cpu",
    test_samples: int = TEST_SAMPLES,
) -> dict[str, Any]:
    """Smallest ``m`` at which a ``TARGET`` share of the replicas reach test sign error
    ``<= SIGN_TOL`` after one population step (SPEC A7.6); probes ``2 m*`` and ``4 m*`` too."""
    collapse: dict[int, float] = {}

    def evaluate(m: int) -> np.ndarray:
        config = OneStepConfig(d=d, m=m, seeds=seeds, seed=seed, device=device)
        result = run_one_step(config, keep_embeddings=True)
        collapse[m] = float(result.collapsed.mean())
        return transformer_sign_error(result, test_samples) <= SIGN_TOL

    star, probes = smallest_passing(evaluate, TARGET, 2, m_limit)
    probes = _confirm(evaluate, star, probes, m_limit)
    params = None if star is None else QueryHeads.trainable_params(2, star)
    point = _point("d", d, "m_star", star, params, probes)
    point["collapse_rate"] = collapse[star if star is not None else max(collapse)]
    return {**point, "test_samples": test_samples}


def fcn_xor(
    d: int,
    seeds: int,
    seed: int = 0,
    width_limit: int = 4096,
    test_samples: int = TEST_SAMPLES,
    **train: Any,
) -> dict[str, Any]:
    """Smallest hidden width at which a ``TARGET`` share of the SGD-trained two-layer ReLU nets
    reach test sign error ``<= SIGN_TOL`` (SPEC A7.6). The search starts at width 2: one ReLU
    unit's sign is a halfspace of ``x``, which errs on at least a quarter of the inputs."""

    def evaluate(width: int) -> np.ndarray:
        config = XorFCNConfig(
            d=d,
            width=width,
            replicas=seeds,
            seed=seed,
            test_samples=test_samples,
            success_tol=SIGN_TOL,
            **train,
        )
        return train_xor(config).success.numpy()

    star, probes = smallest_passing(evaluate, TARGET, 2, width_limit)
    point = _point("d", d, "width_star", star, None if star is None else count(d, star), probes)
    return {**point, "test_samples": test_samples}


XOR_KNOBS = {"transformer": "m_star", "fcn": "width_star"}


def xor_params(model: str, d: int, knob: float) -> float:
    """Trainable parameters at a knob value: ``2m`` (transformer), ``width (d + 2) + 1`` (FCN);
    ``inf`` for a threshold never reached."""
    if not math.isfinite(knob):
        return math.inf
    if model == "transformer":
        return float(QueryHeads.trainable_params(2, int(knob)))
    return float(count(d, int(knob)))


@dataclass(frozen=True)
class XorFrontier:
    """One model's thresholds over ``d`` with bootstrap intervals (SPEC Part D): ``points``
    (plain JSON, one per ``d``) and ``draws``, the parameters needed in each bootstrap draw
    (``resamples x sizes``). Every size resamples replica indices with the same seed: replica
    ``e`` has the same streams at every ``d``, so the draws are paired across sizes."""

    model: str
    points: list[dict[str, Any]]
    draws: np.ndarray

    @property
    def sizes(self) -> list[int]:
        return [p["d"] for p in self.points]

    def exponent(self) -> tuple[float, float, float]:
        """``alpha`` of ``params = c d^alpha`` and its bootstrap interval (``nan`` / ``inf``
        where a threshold is not reached); ``nan`` everywhere with fewer than two sizes."""
        if len(self.points) < 2:
            return math.nan, math.nan, math.nan
        params = [math.inf if p["params"] is None else p["params"] for p in self.points]
        low, high = interval(exponent_draws(POWER, self.sizes, self.draws))
        return POWER.fit(self.sizes, params)[1], low, high


def _finite(x: float) -> int | None:
    """A knob value or parameter count (integers) as JSON; ``None`` for ``inf``."""
    return int(x) if math.isfinite(x) else None


def xor_frontier_of(records: list[dict[str, Any]], model: str) -> XorFrontier:
    """``model``'s records (one per ``d``, probes with per-replica outcomes) -> thresholds,
    parameters and their bootstrap intervals (``stats.threshold_draws``), sorted by ``d``."""
    knob = XOR_KNOBS[model]
    rows = sorted((r for r in records if r["model"] == model), key=lambda r: r["d"])
    points, columns = [], []
    for r in rows:
        sizes, outcomes = probe_matrix(r["probes"])
        star, draws = threshold_draws(sizes, outcomes, TARGET, seed=BOOTSTRAP_SEED)
        low, high = interval(draws)
        cache = {k: xor_params(model, r["d"], k) for k in {*draws.tolist(), star, low, high}}
        columns.append(np.array([cache[k] for k in draws.tolist()]))
        points.append(
            {
                "d": r["d"],
                knob: _finite(star),
                f"{knob}_low": _finite(low),
                f"{knob}_high": _finite(high),
                "params": _finite(cache[star]),
                "params_low": _finite(cache[low]),
                "params_high": _finite(cache[high]),
                "seeds": len(outcomes),
                **{k: r[k] for k in ("success_rate", "success_low", "success_high")},
                "collapse_rate": r["collapse_rate"],
            }
        )
    draws = np.column_stack(columns) if columns else np.empty((0, 0))
    return XorFrontier(model, points, draws)


def xor_summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    """``{"transformer": [...], "fcn": [...], "fit": {...}}``: per-``d`` thresholds and
    parameters with bootstrap intervals, and each model's power-law exponent (plain JSON)."""
    out: dict[str, Any] = {"fit": {}}
    for model in XOR_KNOBS:
        f = xor_frontier_of(records, model)
        out[model] = f.points
        out["fit"][model] = {"exponent": estimate("exponent", *f.exponent())}
    return out


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
