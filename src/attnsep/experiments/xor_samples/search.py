"""The sample-size search of SPEC A7.5 (A7.5a, A7.5b): the half-octave grid of ``n``, the search
for ``n*`` with its guard probes, a search's record, and ``n*`` per ``d`` with bootstrap draws.

For each ``d`` the population step gives each replica's reference outcome; then a threshold
search (``search.smallest_passing``) on the half-octave grid ``n_k = round(2^(k/2))`` finds the
smallest ``n`` whose success rate after one empirical step reaches ``target`` times the
population rate on the same replicas. Every probe keeps each replica's outcome, so the bootstrap
re-runs the search on resampled replicas, reference included (``stats.threshold_draws``), and
the exponent of ``n* = c d^alpha`` takes its interval from the same draws.

The search ends at the *guard* ``n_guard``: the first grid point at or above a line, ``d^4
(ln d)^2`` for A7.5a's searches (``edge``, its not-reproduced line) and ``d^4`` for the others
(``bound``), or the last one below ``n_max`` where ``n_max`` is smaller. While some replica
that succeeds in population fails the largest probe, guard probes climb two octaves at a time
up to ``n_guard``. *Stuck* replicas succeed in population but fail even there (``stuck``): they
need more samples than the line where the guard reaches it. Their rate is reported per ``d``
with its Wilson interval (``stuck_rate``) and ``n*`` is the threshold of the other replicas
(``analyse``), so that a few of them do not decide whether an interval closes. A search's record
adds the probes that make this ``n*`` exact on the grid (``refine``).

A run's record per ``d`` and width holds one search per success definition (``OUTCOMES``):
``series`` picks one width's searches of one definition, the rows ``analyse`` reads.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from ...metrics import calibration, stats
from ...metrics.laws import POWER
from ...train.search import Outcomes, Probe, probe_matrix, smallest_passing
from ..base import Record

OUTCOMES = ("certified", "test")
"""The success definitions a record holds a search for: certified (SPEC A6, every input of the
cube) and test accuracy on fresh inputs."""
THEORY, POLYLOG_POWER = 4.0, 2.0
"""Corollary 3's sufficient ``n = d^4 polylog d``: the power of ``d`` and that of ``ln d`` in the
polylog factor past which ``n*`` contradicts it (SPEC Part E, A7.5a)."""
LADDER = 4
"""Guard probes climb ``LADDER`` grid steps (two octaves) at a time, so that a replica slower
than the search's probes costs about its own ``n``, and one stuck costs at most ``4/3 n_guard``."""


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


def bound(d: float) -> float:
    """Corollary 3's sufficient sample size without its polylog factor: ``d^4``."""
    return float(d) ** THEORY


def edge(d: float) -> float:
    """``d^4 (ln d)^2``: an ``n*`` above it contradicts Corollary 3 (SPEC Part E, A7.5a)."""
    return bound(d) * math.log(d) ** POLYLOG_POWER


def search_range(
    d: int, config: SearchConfig, line: Callable[[float], float] = bound
) -> tuple[int, int, int]:
    """``(k_start, k_limit, k_guard)``: the first ``k`` with ``n_k >= n_start_per_d * d`` (at
    most ``k_guard``), the last ``k`` with ``n_k <= n_max = config.n_limit(d)``, and the guard's
    ``k``, where the search ends: the first one with ``n_k >= line(d)`` (failing there, a replica
    needs more), at most ``k_limit``; ``line`` is ``d^4`` (``bound``) or, for A7.5a's searches,
    ``d^4 (ln d)^2`` (``edge``)."""
    k_limit = math.floor(2 * math.log2(config.n_limit(d)) + 1e-9)
    k_line, target = 0, math.ceil(line(d))
    while grid_n(k_line) < target:
        k_line += 1
    k_guard = min(k_limit, k_line)
    k_start = math.ceil(2 * math.log2(config.n_start_per_d * d) - 1e-9)
    return max(0, min(k_start, k_guard)), k_limit, k_guard


def bound_k(d: int) -> int:
    """The last grid ``k`` with ``n_k <= d^4`` (``bound``), a point guard probes never skip."""
    return math.floor(2 * math.log2(bound(d)) + 1e-9)


def search_samples(
    evaluate: Callable[[int], Outcomes],
    goal: float,
    k_start: int,
    k_guard: int,
    reference: Outcomes | None = None,
    k_stop: int | None = None,
) -> tuple[int | None, list[Probe]]:
    """``search.smallest_passing`` on the offset ``i = k - k_start + 1`` up to ``k_guard`` (the
    offset doubles, so ``n`` grows by half an octave, one, two, four... octaves, then bisection
    on ``k``), probes recorded by their ``n``. Guard probes (``n*`` itself is unchanged): when
    ``n*`` is the largest probe, one an octave above it (at most ``n_{k_guard}``), so that a
    resample failing at ``n*`` may pass just above it; then, while some replica that passes the
    ``reference`` (the population step; default: every replica) fails the largest probe, one
    ``LADDER`` grid steps above it, at most ``n_{k_guard}``: so such a replica either passes a
    probe or is *stuck*, failing at ``n_{k_guard}``; the climb does not skip ``k_stop`` (``d^4``
    in ``search_record``, so that a replica passing by ``d^4`` is seen to). When every such
    replica passes the largest probe, every resample does, and no guard is needed."""

    def at(i: int) -> Outcomes:
        return evaluate(grid_n(k_start + i - 1))

    def probe(i: int) -> Probe:
        return Probe(i, tuple(np.asarray(at(i), dtype=bool).tolist()))

    last = k_guard - k_start + 1
    found, probes = smallest_passing(at, goal, 1, last)
    if found is not None and found == probes[-1].size and found < last:
        probes.append(probe(min(found + 2, last)))
    counted = [True] * len(probes[-1].outcomes) if reference is None else reference

    def failing(p: Probe) -> bool:
        return any(r and not o for r, o in zip(counted, p.outcomes, strict=True))

    stop = last if k_stop is None else k_stop - k_start + 1
    while probes[-1].size < last and failing(probes[-1]):
        top = probes[-1].size
        probes.append(probe(min(top + LADDER, stop if top < stop else last, last)))
    n_star = None if found is None else grid_n(k_start + found - 1)
    return n_star, [Probe(grid_n(k_start + p.size - 1), p.outcomes) for p in probes]


def outcomes_record(outcomes: Outcomes) -> Record:
    """Successes, rate, its Wilson interval and each replica's outcome."""
    rate = stats.rate_record(int(sum(outcomes)), len(outcomes))
    return {**rate, "outcomes": [int(o) for o in outcomes]}


def grid_k(n: int) -> int:
    """The grid index of ``n = grid_n(k)`` (``n >= 2``)."""
    return round(2 * math.log2(n))


def stuck_mask(sizes: Sequence[float], outcomes: np.ndarray, population: np.ndarray) -> np.ndarray:
    """Per replica: succeeds in population but fails the largest probe (``replicas x probes``
    ``outcomes`` at ``sizes``); a search's largest probe is its guard ``n_guard`` whenever such
    a replica remains (``search_samples``)."""
    return np.asarray(population, dtype=bool) & ~np.asarray(outcomes)[:, int(np.argmax(sizes))]


def refine(
    evaluate: Callable[[int], Outcomes],
    probes: list[Probe],
    population: np.ndarray,
    target: float,
    k_start: int,
) -> list[Probe]:
    """Further probes, so that ``n*`` of the replicas that are not stuck lies on the grid as
    exactly as the search's own: without the stuck replicas the goal (``target`` x their
    population rate) is easier, so the first probe passing it may sit above an unprobed gap;
    bisection on the grid index between it and the largest probe below it (or ``k_start - 1``)
    closes the gap. The stuck replicas stay stuck (every new probe is below the largest)."""
    sizes = [p.size for p in probes]
    table = np.array([p.outcomes for p in probes], dtype=bool).T
    kept = ~stuck_mask(sizes, table, population)
    if kept.all():
        return []
    goal = target * np.asarray(population, dtype=bool)[kept].mean() - 1e-12

    def passes(outcomes: Outcomes) -> bool:
        return bool(np.asarray(outcomes, dtype=bool)[kept].mean() >= goal)

    ks = sorted((grid_k(p.size), p) for p in probes)
    first = next((k for k, p in ks if passes(p.outcomes)), None)
    if first is None:
        return []
    low = max((k for k, _ in ks if k < first), default=k_start - 1)
    added, high = [], first
    while high - low > 1:
        middle = (low + high) // 2
        probe = Probe(grid_n(middle), tuple(np.asarray(evaluate(grid_n(middle)), bool).tolist()))
        added.append(probe)
        if passes(probe.outcomes):
            high = middle
        else:
            low = middle
    return added


def search_record(
    evaluate: Callable[[int], Outcomes],
    population: np.ndarray,
    d: int,
    config: SearchConfig,
    line: Callable[[float], float] = bound,
) -> Record:
    """The record of ``d``'s search (``search_samples``, then ``refine``) with its guard on
    ``line`` (``search_range``): ``evaluate(n)`` is each replica's outcome after the steps on
    ``n`` samples, ``population`` after the population steps."""
    goal = config.target * population.mean() - 1e-12  # as stats.first_passing reads it
    k_start, _, k_guard = search_range(d, config, line)
    n_star, probes = search_samples(evaluate, goal, k_start, k_guard, population, bound_k(d))
    probes += refine(evaluate, probes, population, config.target, k_start)
    probes.sort(key=lambda p: p.size)
    return {
        "d": d,
        "n_star": n_star,
        "target": config.target,
        "n_max": config.n_limit(d),
        "n_guard": grid_n(k_guard),
        "population": outcomes_record(population),
        "probes": [p.as_record() for p in probes],
    }


def analyse(records: list[Record], config: SearchConfig) -> dict[str, Any]:
    """``n*`` per ``d`` of the replicas that are not stuck (``stuck_mask``) with its bootstrap
    interval, the exponent ``alpha`` with its interval, and each ``d``'s stuck rate
    (``stuck_rate``) and guard ``n_guard``. Where every population success is stuck (or there
    is none), ``n*`` is above the largest probe (``inf``).

    The bootstrap uses one stream for every ``d``: replica ``e`` is resampled together at every
    ``d`` (its initial query vectors are the same at every ``d``), so the exponent's draws are
    paired."""
    rows = sorted(records, key=lambda r: r["d"])
    ds = [float(r["d"]) for r in rows]
    largest = [float(max(p["size"] for p in r["probes"])) for r in rows]
    points, lows, highs, draws = [], [], [], []
    for r in rows:
        sizes, outcomes = probe_matrix(r["probes"])
        reference = np.array(r["population"]["outcomes"], dtype=bool)
        kept = ~stuck_mask(sizes, outcomes, reference)
        if (kept & reference).any():
            point, boot = stats.threshold_draws(
                sizes, outcomes[kept], config.target, reference=reference[kept], seed=config.seed
            )
        else:
            point, boot = math.inf, np.full(stats.resample_count(), math.inf)
        low, high = stats.interval(boot)
        points.append(point)
        lows.append(low)
        highs.append(math.inf if math.isinf(point) else high)
        draws.append(boot)
    alpha = (math.nan, math.nan, math.nan)
    if len(ds) >= 2:
        alpha = (POWER.fit(ds, points)[1], *exponent_bounds(ds, np.column_stack(draws), largest))
    return {
        "d": ds,
        "n": points,
        "low": lows,
        "high": highs,
        "largest": largest,
        "guard": [float(r["n_guard"]) for r in rows],
        "alpha": alpha,
        "rows": rows,
        "draws": draws,
        "stuck": [stuck_rate(r) for r in rows],
    }


def exponent_bounds(ds: list[float], draws: np.ndarray, largest: list[float]) -> tuple:
    """The 95% bootstrap interval of ``alpha`` when some draws have ``n* = inf`` (no probe passed:
    ``n*`` lies above the largest probe). The least-squares slope rises with ``n*`` at a ``d``
    above the mean ``ln d`` and falls with it below, so for the lower bound an unreached ``n*``
    above the mean counts as the largest probe (the slope can only be larger) and one below makes
    the draw ``-inf``; for the upper bound the other way round (``laws.one_sided_exponent``, all
    draws at once)."""
    unreached = np.isinf(draws)
    x = np.log(np.asarray(ds, dtype=float))
    above, v = x >= x.mean(), x - x.mean()
    u = np.log(np.where(unreached, np.asarray(largest, dtype=float), draws))
    fitted = ((u - u.mean(axis=1, keepdims=True)) * v).sum(axis=1) / (v * v).sum()
    low = np.where((unreached & ~above).any(axis=1), -math.inf, fitted)
    high = np.where((unreached & above).any(axis=1), math.inf, fitted)
    return stats.interval(low)[0], stats.interval(high)[1]


Rates = dict[int, tuple[float, int, int]]
"""Per measured ``d``: the population rate, the stuck replicas and the population successes
(``stuck_rate``'s count and trials), what a simulation draws its replicas from."""


def measured_rates(rows: list[Record]) -> Rates:
    """``Rates`` of a run's searches (one per ``d``)."""
    out = {}
    for r in rows:
        stuck = stuck_rate(r)
        out[r["d"]] = (r["population"]["rate"], stuck["stuck"], stuck["trials"])
    return out


def simulate(
    law: Callable[[float], float],
    spread: float,
    rates: Rates,
    config: SearchConfig,
    rng: np.random.Generator,
    share: float | None = None,
) -> list[Record]:
    """A run at ``config``'s sizes and seeds: per ``d`` (``rates`` at the nearest measured
    ``d``), each replica's population outcome and whether it is stuck, and for the others a
    latent threshold (log-normal with log-spread ``spread``, its ``target`` quantile at
    ``law(d)``); a step on ``n`` samples succeeds when the replica's population step does, it
    is not stuck and ``n`` reaches its threshold. The stuck share is ``share`` where given, else
    drawn afresh for every run and ``d`` from its Jeffreys posterior ``Beta(s + 1/2, t - s +
    1/2)`` (``s`` stuck of ``t`` population successes measured), so the simulated runs carry
    stuck replicas as the real one does, with the uncertainty of their measured rate. The
    search, its guards (on A7.5a's line, ``edge``) and ``refine`` run as in ``run``, so the
    probes sit on the same grid."""
    out = []
    for d in config.d_values:
        rate, stuck, trials = rates[min(rates, key=lambda m: (abs(math.log(m / d)), m))]
        drawn = rng.beta(stuck + 0.5, trials - stuck + 0.5) if trials else 0.0
        population = rng.random(config.seeds) < rate
        need = calibration.replica_thresholds(law(d), spread, config.seeds, config.target, rng)
        need[rng.random(config.seeds) < (drawn if share is None else share)] = math.inf

        def evaluate(n: int, population=population, need=need) -> np.ndarray:
            return population & (need <= n)

        out.append(search_record(evaluate, population, d, config, edge))
    return out


def stuck_rate(record: Record) -> dict[str, Any]:
    """A search's stuck replicas (``stuck_mask``: failing at its guard ``n_guard``) among its
    population successes: ``stuck``, ``trials`` and the rate with its Wilson 95% interval
    (``nan`` without population successes)."""
    sizes, outcomes = probe_matrix(record["probes"])
    population = np.array(record["population"]["outcomes"], dtype=bool)
    stuck, trials = int(stuck_mask(sizes, outcomes, population).sum()), int(population.sum())
    low, high = stats.wilson(stuck, trials) if trials else (math.nan, math.nan)
    rate = stuck / trials if trials else math.nan
    return {"stuck": stuck, "trials": trials, "rate": rate, "low": low, "high": high}


def series(
    records: list[Record], width: str = "fixed", outcome: str = "certified", steps: int = 1
) -> list[Record]:
    """One width's searches of one success definition (``OUTCOMES``) after ``steps`` steps
    (1: the one step; records without ``steps`` are one-step ones), by increasing ``d``."""
    chosen = (r for r in records if r["width"] == width and r.get("steps", 1) == steps)
    return sorted((r[outcome] for r in chosen), key=lambda r: r["d"])


def run_records(searches: list[Record], width: str, m: int) -> list[Record]:
    """Searches as a run's records at one width (simulations: every definition reads the same
    search)."""
    return [
        {"d": r["d"], "m": m, "width": width, **{outcome: r for outcome in OUTCOMES}}
        for r in searches
    ]
