"""The sample-size search of SPEC A7.5 (A7.5a, A7.5b): the half-octave grid of ``n``, the search
for ``n*`` with its guard probes, a search's record, and ``n*`` per ``d`` with bootstrap draws.

For each ``d`` the population step gives each replica's reference outcome; then a threshold
search (``search.smallest_passing``) on the half-octave grid ``n_k = round(2^(k/2))`` finds the
smallest ``n`` whose success rate after one empirical step reaches ``target`` times the
population rate on the same replicas. Every probe keeps each replica's outcome, so the bootstrap
re-runs the search on resampled replicas, reference included (``stats.threshold_draws``), and
the exponent of ``n* = c d^alpha`` takes its interval from the same draws. A guard probe at
``n_max`` closes every interval the data allow.

A run's record per ``d`` and width holds one search per success definition (``OUTCOMES``):
``series`` picks one width's searches of one definition, the rows ``analyse`` reads.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from ..metrics import calibration, stats
from ..metrics.stats import POWER
from ..train.search import Outcomes, Probe, probe_matrix, smallest_passing
from .base import Record

GRID = "half-octave"
"""The resolution of the ``n`` grid (``stats.GRIDS``)."""
OUTCOMES = ("certified", "test")
"""The success definitions a record holds a search for: certified (SPEC A6, every input of the
cube) and test accuracy on fresh inputs."""


class SearchConfig(Protocol):
    """What a search reads from an experiment's config."""

    @property
    def target(self) -> float: ...
    @property
    def n_start_per_d(self) -> float: ...
    @property
    def seed(self) -> int: ...
    @property
    def seeds(self) -> int: ...
    @property
    def d_values(self) -> list[int]: ...

    def n_limit(self, d: int) -> int:
        """The largest ``n`` searched at ``d`` (``n_max``)."""
        ...


def grid_n(k: int) -> int:
    """The half-octave grid: ``n_k = round(2^(k/2))``."""
    return round(2 ** (k / 2))


def search_range(d: int, config: SearchConfig) -> tuple[int, int, int]:
    """``(k_start, k_limit, k_guard)``: the first ``k`` with ``n_k >= n_start_per_d * d`` (at
    most ``k_limit``), the last ``k`` with ``n_k <= n_max = config.n_limit(d)``, and the guard's
    ``k``: the last one with ``n_k <= min(n_max, d^4)``, where an interval has to close to meet
    the bound."""
    k_limit = math.floor(2 * math.log2(config.n_limit(d)) + 1e-9)
    k_start = math.ceil(2 * math.log2(config.n_start_per_d * d) - 1e-9)
    k_guard = min(k_limit, math.floor(8 * math.log2(d) + 1e-9))
    return max(0, min(k_start, k_limit)), k_limit, k_guard


def search_samples(
    evaluate: Callable[[int], Outcomes],
    goal: float,
    k_start: int,
    k_limit: int,
    k_guard: int | None = None,
    reference: Outcomes | None = None,
) -> tuple[int | None, list[Probe]]:
    """``search.smallest_passing`` on the offset ``i = k - k_start + 1`` (the offset doubles, so
    ``n`` grows by half an octave, one, two, four... octaves, then bisection on ``k``), probes
    recorded by their ``n``. Guard probes (``n*`` itself is unchanged): when ``n*`` is the
    largest probe, one an octave above it (at most ``n_max``), so that a resample failing at
    ``n*`` may pass just above it; then, when some replica that passes the ``reference`` (the
    population step; default: every replica) still fails the largest probe, so that a resample
    could fail every probe, one at ``k_guard`` (default: ``n_max``, the grid's last point), so
    that such a resample still has a finite ``n*`` where ``n_{k_guard}`` suffices. When every
    such replica passes the largest probe, every resample does, and no guard is needed."""

    def at(i: int) -> Outcomes:
        return evaluate(grid_n(k_start + i - 1))

    def probe(i: int) -> Probe:
        return Probe(i, tuple(np.asarray(at(i), dtype=bool).tolist()))

    last = k_limit - k_start + 1
    found, probes = smallest_passing(at, goal, 1, last)
    if found is not None and found == probes[-1].size and found < last:
        probes.append(probe(min(found + 2, last)))
    guard = last if k_guard is None else max(1, min(k_guard - k_start + 1, last))
    counted = [True] * len(probes[-1].outcomes) if reference is None else reference
    failing = any(r and not o for r, o in zip(counted, probes[-1].outcomes, strict=True))
    if probes[-1].size < guard and failing:
        probes.append(probe(guard))
    n_star = None if found is None else grid_n(k_start + found - 1)
    return n_star, [Probe(grid_n(k_start + p.size - 1), p.outcomes) for p in probes]


def outcomes_record(outcomes: Outcomes) -> Record:
    """Successes, rate, its Wilson interval and each replica's outcome."""
    successes, trials = int(sum(outcomes)), len(outcomes)
    low, high = stats.wilson(successes, trials)
    return {
        "successes": successes,
        "trials": trials,
        "rate": successes / trials,
        "low": low,
        "high": high,
        "outcomes": [int(o) for o in outcomes],
    }


def search_record(
    evaluate: Callable[[int], Outcomes], population: np.ndarray, d: int, config: SearchConfig
) -> Record:
    """The record of ``d``'s search (``search_samples``): ``evaluate(n)`` is each replica's
    outcome after one step on ``n`` samples, ``population`` after the population step."""
    goal = config.target * population.mean() - 1e-12  # as stats.first_passing reads it
    n_star, probes = search_samples(evaluate, goal, *search_range(d, config), population)
    return {
        "d": d,
        "n_star": n_star,
        "target": config.target,
        "n_max": config.n_limit(d),
        "population": outcomes_record(population),
        "probes": [p.as_record() for p in probes],
    }


def analyse(records: list[Record], config: SearchConfig) -> dict[str, Any]:
    """``n*`` per ``d`` with its bootstrap interval, the lower end widened by the grid (a draw
    that passes no probe counts at the largest probe there), and the exponent ``alpha`` with its
    interval.

    The bootstrap uses one stream for every ``d``: replica ``e`` is resampled together at every
    ``d`` (its initial query vectors are the same at every ``d``), so the exponent's draws are
    paired."""
    rows = sorted(records, key=lambda r: r["d"])
    ds = [float(r["d"]) for r in rows]
    largest = [float(max(p["size"] for p in r["probes"])) for r in rows]
    points, lows, highs, floors, draws = [], [], [], [], []
    for r, top in zip(rows, largest, strict=True):
        sizes, outcomes = probe_matrix(r["probes"])
        reference = np.array(r["population"]["outcomes"], dtype=bool)
        point, boot = stats.threshold_draws(
            sizes, outcomes, config.target, reference=reference, seed=config.seed
        )
        low, high = stats.interval(boot)
        points.append(point)
        lows.append(low)
        highs.append(math.inf if math.isinf(point) else high)
        floors.append(stats.interval(np.minimum(boot, top))[0])
        draws.append(boot)
    widened = stats.widen(floors, highs, GRID)[0].tolist() if rows else []
    alpha = (math.nan, math.nan, math.nan)
    if len(ds) >= 2:
        alpha = (POWER.fit(ds, points)[1], *exponent_bounds(ds, np.column_stack(draws), largest))
    return {
        "d": ds,
        "n": points,
        "low": lows,
        "high": highs,
        "widened_low": widened,
        "largest": largest,
        "alpha": alpha,
        "rows": rows,
        "draws": draws,
    }


def exponent_bounds(ds: list[float], draws: np.ndarray, largest: list[float]) -> tuple:
    """The 95% bootstrap interval of ``alpha`` when some draws have ``n* = inf`` (no probe passed:
    ``n*`` lies above the largest probe). The least-squares slope rises with ``n*`` at a ``d``
    above the mean ``ln d`` and falls with it below, so for the lower bound an unreached ``n*``
    above the mean counts as the largest probe (the slope can only be larger) and one below makes
    the draw ``-inf``; for the upper bound the other way round (``stats.one_sided_exponent``, all
    draws at once)."""
    unreached = np.isinf(draws)
    x = np.log(np.asarray(ds, dtype=float))
    above, v = x >= x.mean(), x - x.mean()
    u = np.log(np.where(unreached, np.asarray(largest, dtype=float), draws))
    fitted = ((u - u.mean(axis=1, keepdims=True)) * v).sum(axis=1) / (v * v).sum()
    low = np.where((unreached & ~above).any(axis=1), -math.inf, fitted)
    high = np.where((unreached & above).any(axis=1), math.inf, fitted)
    return stats.interval(low)[0], stats.interval(high)[1]


def simulate(
    law: Callable[[float], float],
    spread: float,
    rates: dict[int, tuple[float, float]],
    config: SearchConfig,
    rng: np.random.Generator,
) -> list[Record]:
    """A run at ``config``'s sizes and seeds: per ``d``, each replica's population outcome
    and whether it is stuck (``rates[d]``: the population rate and the share of its successes
    that fail even the largest probe, at the nearest measured ``d``), and for the others a
    latent threshold (log-normal with log-spread ``spread``, its ``target`` quantile at
    ``law(d)``); an empirical step on ``n`` samples succeeds when the replica's population step
    does, it is not stuck and ``n`` reaches its threshold. The search and its guards run as in
    ``run``, so the probes sit on the same grid."""
    out = []
    for d in config.d_values:
        rate, stuck = rates[min(rates, key=lambda m: (abs(math.log(m / d)), m))]
        population = rng.random(config.seeds) < rate
        need = calibration.replica_thresholds(law(d), spread, config.seeds, config.target, rng)
        need[rng.random(config.seeds) < stuck] = math.inf

        def evaluate(n: int, population=population, need=need) -> np.ndarray:
            return population & (need <= n)

        out.append(search_record(evaluate, population, d, config))
    return out


def stuck_share(record: Record) -> float:
    """The share of the replicas whose population step succeeds that fail the largest probe."""
    sizes, outcomes = probe_matrix(record["probes"])
    population = np.array(record["population"]["outcomes"], dtype=bool)
    if not population.any():
        return 0.0
    return float(1 - outcomes[population, int(np.argmax(sizes))].mean())


def series(records: list[Record], width: str = "fixed", outcome: str = "certified") -> list[Record]:
    """One width's searches of one success definition (``OUTCOMES``), by increasing ``d``."""
    return sorted((r[outcome] for r in records if r["width"] == width), key=lambda r: r["d"])


def run_records(searches: list[Record], width: str, m: int) -> list[Record]:
    """Searches as a run's records at one width (simulations: every definition reads the same
    search)."""
    return [
        {"d": r["d"], "m": m, "width": width, **{outcome: r for outcome in OUTCOMES}}
        for r in searches
    ]
