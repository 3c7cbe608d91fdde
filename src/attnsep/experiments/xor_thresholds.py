"""Sparse XOR: each model's threshold per ``d`` and its bootstrap over replicas (SPEC A7.6, D).

A threshold search (doubling, then bisection; ``search.smallest_passing``) finds the smallest
knob whose success rate over the replicas reaches ``TARGET``: ``m`` for the one-step
transformer (``2m`` trainable parameters), the hidden width for the two-layer ReLU net
(``width (d + 2) + 1`` parameters). One success definition for both: test sign error
``<= SIGN_TOL`` on ``TEST_SAMPLES`` fresh samples. Every probe keeps each replica's outcome,
so thresholds, parameter counts and power-law exponents get bootstrap intervals over the
replicas (``XorFrontier``). The ``separation-xor`` experiment runs and judges these; the
``polylog-width`` experiment (A7.2) shares the vectorized bootstrap and exponent fits.

For a criterion's error rates (SPEC Part E), ``simulated_search`` runs the same search on
replicas with latent thresholds (and the success plateau's failures, SPEC Part F), so simulated
records sit on the real integer grid. The growth of a threshold with ``d`` is decided by the rule
of SPEC Part F (``growth_test``), shared by A7.2 and A7.6; ``xor_growth_text`` words its outcome.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ..configs import Device, XorFCNConfig, default
from ..metrics import growth, stats
from ..metrics.calibration import fit_or_flat, log_spread
from ..metrics.laws import POLYLOG, POWER, Law, exponent_draws
from ..metrics.parity import step_sign_error
from ..metrics.stats import estimate, interval, wilson
from ..models.mlp import count
from ..models.query_heads import QueryHeads
from ..train.fcn import train_xor
from ..train.one_step import OneStepConfig, OneStepResult, run_one_step
from ..train.search import Probe, probe_matrix, smallest_passing

TARGET = 0.9
"""A size's threshold is the smallest knob whose success rate reaches this (SPEC Part D)."""
SIGN_TOL = default(XorFCNConfig, "success_tol")
"""A replica succeeds when its test sign error is at most this (0.01)."""
TEST_SAMPLES = default(XorFCNConfig, "test_samples")
"""Fresh test samples per replica for the sign error, both models (8192, the FCN's test)."""
BOOTSTRAP_SEED = 0
KNOBS = {"transformer": "m_star", "fcn": "width_star"}
"""Each model's threshold knob, as its records name it."""
LIMITS = {"transformer": 512, "fcn": 4096}
"""Each model's largest knob probed: ``m <= 512``, hidden width ``<= 4096``."""


def _point(d: int, knob: str, star: int | None, params: int | None, probes: list[Probe]) -> dict:
    at_star = next((p for p in probes if p.size == star), None)
    low, high = (None, None) if at_star is None else wilson(at_star.successes, at_star.trials)
    return {
        "d": d,
        knob: star,
        "params": params,
        "success_rate": None if at_star is None else at_star.rate,
        "success_low": low,
        "success_high": high,
        "collapse_rate": None,
        "probes": [p.as_record() for p in probes],
    }


def confirm(
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
    model = QueryHeads(torch.from_numpy(result.embeddings), config.attention, config.sign)
    gamma = model.weights(torch.from_numpy(result.theta_after))
    certified = torch.from_numpy(result.certified_error)
    support = torch.from_numpy(result.support)
    return step_sign_error(gamma, support, certified, config.sign, samples, config.seed).numpy()


def transformer_xor(
    d: int,
    seeds: int,
    seed: int = 0,
    m_limit: int = LIMITS["transformer"],
    device: Device = "cpu",
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
    probes = confirm(evaluate, star, probes, m_limit)
    params = None if star is None else QueryHeads.trainable_params(2, star)
    point = _point(d, "m_star", star, params, probes)
    point["collapse_rate"] = collapse[star if star is not None else max(collapse)]
    return {**point, "test_samples": test_samples}


def fcn_xor(
    d: int,
    seeds: int,
    seed: int = 0,
    width_limit: int = LIMITS["fcn"],
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
            seeds=seeds,
            seed=seed,
            test_samples=test_samples,
            success_tol=SIGN_TOL,
            **train,
        )
        return train_xor(config).success.numpy()

    star, probes = smallest_passing(evaluate, TARGET, 2, width_limit)
    point = _point(d, "width_star", star, None if star is None else count(d, star), probes)
    return {**point, "test_samples": test_samples}


def params_at(model: str, d: int, knob: float) -> float:
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
    def knob(self) -> str:
        """The threshold's key in ``points``: ``m_star`` or ``width_star``."""
        return KNOBS[self.model]

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


def frontier_of(records: list[dict[str, Any]], model: str) -> XorFrontier:
    """``model``'s records (one per ``d``, probes with per-replica outcomes) -> thresholds,
    parameters and their bootstrap intervals (``stats.threshold_draws``), sorted by ``d``."""
    knob = KNOBS[model]
    rows = sorted((r for r in records if r["model"] == model), key=lambda r: r["d"])
    points, columns = [], []
    for r in rows:
        sizes, outcomes = probe_matrix(r["probes"])
        star, draws = stats.threshold_draws(sizes, outcomes, TARGET, seed=BOOTSTRAP_SEED)
        low, high = interval(draws)
        cache = {k: params_at(model, r["d"], k) for k in {*draws.tolist(), star, low, high}}
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


def summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    """``{"transformer": [...], "fcn": [...], "fit": {...}}``: per-``d`` thresholds and
    parameters with bootstrap intervals, and each model's power-law exponent (plain JSON)."""
    out: dict[str, Any] = {"fit": {}}
    for model in KNOBS:
        f = frontier_of(records, model)
        out[model] = f.points
        out["fit"][model] = {"exponent": estimate("exponent", *f.exponent())}
    return out


# --- simulated searches (SPEC Part E: a criterion's error rates) -----------------------------


def simulated_search(
    model: str,
    d: int,
    thresholds: np.ndarray,
    plateau: float = 1.0,
    rng: np.random.Generator | None = None,
) -> dict[str, Any]:
    """The record of ``model``'s threshold search at ``d`` (as ``run`` stores it) on replicas
    with latent thresholds ``thresholds``: replica ``r`` succeeds at every knob ``>= t_r``, and
    with ``rng`` only when it escapes a failure of probability ``1 - plateau`` drawn afresh at
    every probe (``plateau_failures``). The search is the real one (doubling, bisection, the
    transformer's ``2 m*``, ``4 m*`` probes, the same limits), so the simulated probes sit on the
    real integer grid."""

    def persistent(size: int) -> np.ndarray:
        return thresholds <= size

    evaluate = persistent if rng is None else plateau_failures(thresholds, plateau, rng)
    limit = LIMITS[model]
    star, probes = smallest_passing(evaluate, TARGET, 2, limit)
    if model == "transformer":
        probes = confirm(evaluate, star, probes, limit)
    params = None if star is None else int(params_at(model, d, star))
    return {"model": model, **_point(d, KNOBS[model], star, params, probes)}


def spread_of(records: list[dict[str, Any]], model: str) -> float:
    """``model``'s replica noise in a run: ``calibration.log_spread`` over its searches."""
    return log_spread([probe_matrix(r["probes"]) for r in records if r["model"] == model])


def resampled_spread(
    probe_sets: list[tuple[list[int], np.ndarray]], rng: np.random.Generator
) -> float:
    """``calibration.log_spread`` of one bootstrap draw of a run's searches (``(sizes,
    replicas x probes outcomes)``): each search's replicas resampled with replacement, so a
    simulated run redraws its replica noise as it redraws its law (SPEC Part E)."""
    return log_spread(
        [(sizes, table[rng.integers(len(table), size=len(table))]) for sizes, table in probe_sets]
    )


def plateau_of(records: list[dict[str, Any]]) -> tuple[int, int]:
    """``(successes, trials)`` at the largest probe of each search, pooled: the success plateau
    the simulated searches reproduce (SPEC Part F)."""
    top = [max(r["probes"], key=lambda p: p["size"]) for r in records]
    return sum(p["successes"] for p in top), sum(p["trials"] for p in top)


def plateau_failures(
    latent: np.ndarray, plateau: float, rng: np.random.Generator
) -> Callable[[int], np.ndarray]:
    """Each replica's outcome at knob ``m`` of a simulated search: it succeeds when its latent
    threshold is ``<= m`` and it escapes a failure of probability ``1 - plateau`` drawn afresh at
    every probe (as measured: the replicas failing at large ``m`` differ from width to width)."""

    def evaluate(m: int) -> np.ndarray:
        return (latent <= m) & (rng.random(len(latent)) < plateau)

    return evaluate


# --- the growth of a threshold (SPEC Part F): A7.2, and A7.6's transformer -------------------


def crossing_draws(
    sizes: list[int],
    outcomes: np.ndarray,
    target: float,
    reference: np.ndarray | None = None,
    seed: int = 0,
) -> tuple[float, np.ndarray]:
    """The threshold made continuous by interpolating the crossing (SPEC Part E), on all
    replicas and on each bootstrap resample (those of ``stats.threshold_draws`` with the same
    ``seed``): the first stored probe whose rate reaches the goal (``target``, times the
    ``reference`` rate when given) and the stored probe below it bound the crossing, placed
    linearly in the knob where the rate meets the goal; the smallest probe when it passes,
    ``inf`` when none does. A resample failing at ``m*`` then lands near it, not on the next
    stored probe (``2 m*`` or beyond)."""
    order = np.argsort(sizes)
    s = np.asarray(sizes, dtype=float)[order]
    table = np.asarray(outcomes, dtype=float)[:, order]
    weights = stats.resample_weights(len(table), stats.resample_count(), seed)
    rates = weights @ table
    scale = np.ones(len(weights)) if reference is None else weights @ np.asarray(reference, float)
    goals = target * scale
    passing = rates >= goals[:, None] - 1e-12
    first = passing.argmax(axis=1)
    below = np.maximum(first - 1, 0)
    rows = np.arange(len(rates))
    low_rate, high_rate = rates[rows, below], rates[rows, first]
    share = np.clip((goals - low_rate) / np.maximum(high_rate - low_rate, 1e-12), 0, 1)
    value = np.where(first > 0, s[below] + share * (s[first] - s[below]), s[first])
    value = np.where(passing.any(axis=1), value, math.inf)
    return float(value[0]), value[1:]


def growth_test(
    ds: list[float], values: np.ndarray, draws: np.ndarray, rival_min: float
) -> dict[str, Any]:
    """Both growth rules of SPEC Part F on thresholds ``values`` at ``ds`` (ascending) with their
    bootstrap ``draws``: (i) ``growth.curvature`` and (ii) ``growth.held_out_errors`` of
    ``a (ln d)^p`` against ``c d^alpha`` (``alpha >= rival_min``). ``decided`` is ``paper`` or
    ``rival`` when both rules side with it, else ``neither``; ``None`` with fewer than
    ``growth.MIN_SIZES`` sizes, ``UNREACHED`` with a threshold not reached
    (``growth.both_rules``). ``fits``: both laws fitted on the smaller half (the held-out
    test's), for a figure."""
    g = growth.both_rules(POLYLOG, POWER, ds, values, draws, rival_min)
    if "held_out" in g:
        half = len(g["held_out"]["fitted_on"])
        g["fits"] = {
            "paper": POLYLOG.fit(ds[:half], values[:half]),
            "rival": POWER.fit(ds[:half], values[:half], rival_min),
        }
    return g


def law_draws(
    law: Law, ds: list[float], m: list[float], draws: np.ndarray, min_exponent: float | None
) -> list[tuple[float, ...]]:
    """``law`` fitted to each bootstrap row of the thresholds with every size reached (at most
    200 rows): a simulated run draws its law from them (SPEC Part F); ``[law fitted to m]`` when
    there is none (``calibration.fit_or_flat``)."""
    rows = draws[np.isfinite(draws).all(axis=1)][:200] if len(ds) >= 2 else draws[:0]
    if not len(rows):
        return [fit_or_flat(law, ds, m, min_exponent)]
    return [law.fit(ds, row, min_exponent) for row in rows]
