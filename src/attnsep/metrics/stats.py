"""The one statistics module: medians, standard errors, Wilson intervals, the bootstrap over
replicas, a median's distribution-free interval (order statistics), thresholds over stored
probes, and a verdict's result (SPEC Part D). The growth laws
are in ``metrics.laws``, the held-out two-law comparison in ``metrics.two_laws``.

Every number a verdict uses comes from here, so one run never reports two different medians.
Outcomes of a verdict: ``REPRODUCED``, ``NOT_REPRODUCED``, ``INCONCLUSIVE`` (SPEC Part D).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from statistics import NormalDist
from typing import Any

import numpy as np

from ..core.validate import require

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
INCONCLUSIVE = "inconclusive"
OUTCOMES = (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE)
UNSTABLE = "unstable"
"""The published verdict of a claim judged on several master seeds that reached no verdict on
enough of them (``report.replication``, SPEC Part E); never the outcome of one run."""
FINDING = "finding"
"""The ``verdict`` of an entry beyond the papers that reports what was found and judges no claim
(SPEC Part E, A7.3b)."""
CONFIRMED = "confirmed"
CHECK_FAILED = "check failed"
NOT_CHECKED = "not checked"
"""The outcomes of a *check*: a theorem confirmed numerically (SPEC Part F). A failed check
means a bug in attnsep, not a verdict on the papers; ``not checked``: the sizes run are too few
or too noisy to tell (the reason says what would)."""
CHECK_OUTCOMES = (CONFIRMED, CHECK_FAILED, NOT_CHECKED)
KINDS = {"claim": (*OUTCOMES, UNSTABLE), "check": CHECK_OUTCOMES, "finding": (FINDING,)}
"""Each entry's kind (SPEC Part F) and the verdicts it may carry: only a ``claim`` is
reproduced, not reproduced or inconclusive."""
PASSES = (REPRODUCED, CONFIRMED)
FAILS = (NOT_REPRODUCED, CHECK_FAILED)


def kind_of(verdict: str) -> str:
    """The kind of entry a verdict belongs to (``KINDS``); ``claim`` for one of none (e.g.
    ``incomplete``)."""
    return next((kind for kind, allowed in KINDS.items() if verdict in allowed), "claim")


LEVEL = 0.95
RESAMPLES = 1000
"""Bootstrap resamples: the 2.5% quantile of 1000 draws moves by well under its own spread."""
_resamples: ContextVar[int] = ContextVar("resamples", default=RESAMPLES)

Floats = Sequence[float] | np.ndarray
"""Sizes or values: a sequence of numbers or a numpy array of them."""


def resample_count() -> int:
    """The bootstrap's resample count now: ``RESAMPLES``, or as set by ``resampling``."""
    return _resamples.get()


def resample_rows(n: int, rng: np.random.Generator, resamples: int | None = None) -> np.ndarray:
    """``resamples x n`` replica indices drawn with replacement (default ``resample_count()``
    rows): for one array, the draws ``bootstrap`` makes from the same generator, so that a
    statistic can be computed on all resamples at once."""
    return rng.integers(0, n, (resamples or resample_count(), n))


@contextmanager
def resampling(resamples: int) -> Iterator[None]:
    """Within the block, the bootstraps that are not given a count draw ``resamples``
    (the calibration of a criterion runs hundreds of verdicts: ``metrics.calibration``)."""
    token = _resamples.set(resamples)
    try:
        yield
    finally:
        _resamples.reset(token)


# --- point summaries ---------------------------------------------------------------------


def median(values: Iterable[float]) -> float:
    """The true median (the mean of the two middle values for an even count)."""
    items = sorted(float(v) for v in values)
    require(bool(items), "a median needs at least one value")
    n = len(items)
    return items[n // 2] if n % 2 else 0.5 * (items[n // 2 - 1] + items[n // 2])


def mean_se(values: Iterable[float]) -> tuple[float, float]:
    """Mean and its standard error ``s / sqrt(n)`` (0 for one value)."""
    items = [float(v) for v in values]
    require(bool(items), "a mean needs at least one value")
    n = len(items)
    mean = math.fsum(items) / n
    if n == 1:
        return mean, 0.0
    var = math.fsum((v - mean) ** 2 for v in items) / (n - 1)
    return mean, math.sqrt(var / n)


def normal_quantile(level: float = LEVEL) -> float:
    """``z`` with ``P(|Z| <= z) = level`` for a standard normal ``Z`` (1.95996 at 95%)."""
    return NormalDist().inv_cdf(0.5 + level / 2)


def wilson(successes: float, trials: int, level: float = LEVEL) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion at ``level`` (95% by default)."""
    require(trials >= 1 and 0 <= successes <= trials, "need 0 <= successes <= trials, trials >= 1")
    z = normal_quantile(level)
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    if successes == 0:  # exactly the ends the closed form rounds to within 1e-16
        return 0.0, min(1.0, centre + half)
    return max(0.0, centre - half), 1.0 if successes == trials else min(1.0, centre + half)


def finite_or_none(x: float | None) -> float | None:
    """``x`` as a plain float, or ``None`` when missing or not finite (JSON-safe)."""
    return None if x is None or not math.isfinite(x) else float(x)


def estimate(name: str, value: float | None, low: float | None, high: float | None) -> dict:
    """One entry of a claim's ``estimates``: ``{"name", "value", "low", "high"}`` (JSON-safe:
    an infinite bound, e.g. a threshold beyond the search limit, is ``None``)."""
    return {
        "name": name,
        "value": finite_or_none(value),
        "low": finite_or_none(low),
        "high": finite_or_none(high),
    }


def rate_record(successes: int, trials: int) -> dict[str, float]:
    """``{"successes", "trials", "rate", "low", "high"}``: a success rate and its Wilson
    interval, as records store it."""
    low, high = wilson(successes, trials)
    return {
        "successes": successes,
        "trials": trials,
        "rate": successes / trials,
        "low": low,
        "high": high,
    }


def rate_estimate(name: str, successes: int, trials: int) -> dict:
    """A success rate with its Wilson interval, as an ``estimate``."""
    return estimate(name, successes / trials, *wilson(successes, trials))


def fmt_number(x: float | None, digits: int = 3) -> str:
    """``x`` with ``digits`` significant digits; ``n/a`` when missing or ``nan``, an infinity
    ``inf`` or ``-inf``."""
    return "n/a" if x is None or math.isnan(x) else f"{x:.{digits}g}"


def fmt_interval(
    value: float | None, low: float | None, high: float | None, digits: int = 3
) -> str:
    """``value [low, high]``, each as :func:`fmt_number` writes it."""
    return f"{fmt_number(value, digits)} [{fmt_number(low, digits)}, {fmt_number(high, digits)}]"


def fmt_estimate(e: dict, digits: int = 3) -> str:
    """``name = value [low, high]`` of an ``estimate`` (a missing bound reads ``inf``)."""
    high = math.inf if e["high"] is None and e["value"] is not None else e["high"]
    return f"{e['name']} = {fmt_interval(e['value'], e['low'], high, digits)}"


# --- the bootstrap over replicas -----------------------------------------------------------


def bootstrap(
    samples: Sequence[np.ndarray],
    statistic: Callable[[list[np.ndarray]], float],
    resamples: int | None = None,
    seed: int = 0,
) -> np.ndarray:
    """``statistic`` on ``resamples`` bootstrap draws (default ``RESAMPLES``, or as set by
    ``resampling``): each array of ``samples`` (replicas on its first axis, independent of the
    other arrays) is resampled with replacement on its own."""
    rng = np.random.default_rng(seed)
    resamples = resamples or resample_count()
    values = np.empty(resamples)
    for b in range(resamples):
        draw = [s[rng.integers(0, len(s), len(s))] for s in samples]
        values[b] = statistic(draw)
    return values


def interval(values: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """Percentile interval of bootstrap values; ``nan`` counts as ``+inf`` (not reached)."""
    v = np.where(np.isnan(values), np.inf, np.asarray(values, dtype=float)).ravel()
    tail = (1 - level) / 2
    # numpy's quantile methods "lower" and "higher", both from one partial sort
    low, high = int(np.floor((len(v) - 1) * tail)), int(np.ceil((len(v) - 1) * (1 - tail)))
    ends = np.partition(v, [low, high])
    return float(ends[low]), float(ends[high])


def median_interval(
    values: Floats, seed: int = 0, rows: np.ndarray | None = None, hold: bool = False
) -> tuple[float, float, float]:
    """The median of ``values`` (replicas) with its bootstrap percentile interval (``inf``
    counts as not reached; ``nan`` for no values): the replicas resampled ``rows`` (default
    drawn from ``seed``, the draws :func:`bootstrap` makes); with ``hold``, the interval
    widened to hold the median (:func:`holding`)."""
    array = np.asarray(values, dtype=float)
    if not len(array):
        return (math.nan,) * 3
    if rows is None:
        rows = resample_rows(len(array), np.random.default_rng(seed))
    middle = float(np.median(array))
    ends = interval(np.median(array[rows], axis=1))
    return holding(middle, *ends) if hold else (middle, *ends)


@lru_cache(maxsize=64)
def median_ranks(n: int, level: float = LEVEL) -> tuple[int, int]:
    """0-based ranks ``(lo, hi)`` of the sorted values that bound the median of ``n`` replicas
    with probability at least ``level`` (binomial order statistics, distribution-free); the
    smallest and largest values when ``n`` is too small for ``level``."""
    k = np.arange(n + 1)
    log_pmf = np.array(
        [math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1) for j in k]
    )
    cdf = np.cumsum(np.exp(log_pmf - n * math.log(2)))
    below = int(np.searchsorted(cdf, (1 - level) / 2 + 1e-15, side="right"))
    lo = max(below, 1) - 1
    return lo, n - 1 - lo


def holding(value: float, low: float, high: float) -> tuple[float, float, float]:
    """``(value, low, high)`` with the interval widened to hold a finite ``value``: a percentile
    interval of a bounded statistic (an order statistic, an extreme, an error near 0) can miss
    the statistic itself by a grid step."""
    if math.isfinite(value):
        low, high = min(low, value), max(high, value)
    return value, low, high


def rate_difference(
    a: tuple[float, float, float], b: tuple[float, float, float]
) -> tuple[float, float, float]:
    """Rate ``a`` minus rate ``b``, each ``(rate, low, high)`` with its Wilson interval, with
    Newcombe's hybrid score 95% interval (independent replicas)."""
    (pa, la, ha), (pb, lb, hb) = a, b
    diff = pa - pb
    return diff, diff - math.hypot(pa - la, hb - pb), diff + math.hypot(ha - pa, pb - lb)


# --- thresholds over stored probes ---------------------------------------------------------


def first_passing(sizes: Floats, rates: np.ndarray, target: float) -> float:
    """The smallest size whose rate reaches ``target`` (``inf`` when none does).

    On the probes of a bisection (``search.smallest_passing``) this is exactly the search's
    result: every probe below the threshold failed. On resampled replicas it re-runs the search
    over the stored probes, so nothing is recomputed."""
    order = np.argsort(sizes)
    for i in order:
        if rates[i] >= target - 1e-12:
            return float(sizes[i])
    return math.inf


@lru_cache(maxsize=32)
def resample_weights(n: int, resamples: int, seed: int) -> np.ndarray:
    """``(resamples + 1) x n`` replica weights (read-only): row 0 all replicas (``1 / n``
    each), row ``b`` resample ``b`` of :func:`resample_rows` from ``default_rng(seed)`` as its
    replica counts over ``n``. The same for every call with the same arguments, so a
    calibration's thousands of searches draw them once."""
    rows = resample_rows(n, np.random.default_rng(seed), resamples)
    counts = np.bincount((rows + n * np.arange(resamples)[:, None]).ravel(), minlength=rows.size)
    weights = np.vstack([np.ones(n), counts.reshape(resamples, n)]) / n
    weights.flags.writeable = False
    return weights


def threshold_draws(
    sizes: Floats,
    outcomes: np.ndarray,
    target: float,
    reference: np.ndarray | None = None,
    resamples: int | None = None,
    seed: int = 0,
) -> tuple[float, np.ndarray]:
    """The threshold on all replicas and its bootstrap draws.

    ``outcomes`` is ``replicas x probes`` (bool), the probes at ``sizes`` evaluated on the same
    replicas. With ``reference`` (per-replica bool), the target is ``target x`` the reference
    rate on the same (resampled) replicas (SPEC A7.5: relative to the population step).

    The resamples are drawn at once (the same draws as ``bootstrap``, one row per resample) and
    the search over the stored probes runs on all of them together: each resample's probe rates
    are its replica counts times the outcomes table."""
    order = np.argsort(sizes)
    ordered = np.asarray(sizes, dtype=float)[order]
    table = np.asarray(outcomes, dtype=float)[:, order]
    n = len(table)
    ref = np.ones(n) if reference is None else np.asarray(reference, dtype=float)
    weights = resample_weights(n, resamples or resample_count(), seed)
    rates, goals = weights @ table, target * (weights @ ref if reference is not None else 1.0)
    passing = rates >= np.reshape(goals, (-1, 1)) - 1e-12
    first = np.where(passing.any(axis=1), ordered[passing.argmax(axis=1)], math.inf)
    return float(first[0]), first[1:]


SUMMARY_CHARS = 60
"""The most characters of an entry's ``summary``: its reason in short, the line the terminal's
claims table gives it (the full reason is in the report and ``attnsep report --claim``)."""


def clipped(text: str, limit: int) -> str:
    """``text`` without a final full stop, cut at a word to at most ``limit`` characters (``…``
    marking the cut)."""
    text = text.strip().rstrip(".")
    if len(text) <= limit:
        return text
    return text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:( ") + "…"


def fitting(*candidates: str) -> str:
    """The first of ``candidates`` within ``SUMMARY_CHARS`` (a verdict's ``summary``), the last
    clipped when none is: candidates go from the fullest to the tersest, so the choice depends
    on the printed length of the numbers alone."""
    found = (text for text in candidates if len(text) <= SUMMARY_CHARS)
    return next(found, clipped(candidates[-1], SUMMARY_CHARS))


def several(items: Sequence[Any], one: str, many: str) -> str:
    """A summary naming the first of ``items`` in ``one`` (and how many more), or their count
    in ``many`` when that is too long (:func:`fitting`)."""
    more = f" and {len(items) - 1} more" if len(items) > 1 else ""
    return fitting(one.format(items[0]) + more, many.format(len(items)))


def claim(
    verdict: str,
    reason: str,
    measured: str,
    criterion: str,
    estimates: list[dict],
    *,
    summary: str = "",
    **extra: Any,
) -> dict[str, Any]:
    """A verdict's result: one of ``OUTCOMES`` (a claim), ``CHECK_OUTCOMES`` (a check) or
    ``FINDING``, its reason in one sentence and in short (``summary``, at most
    ``SUMMARY_CHARS`` characters: the deciding fact with its number; the reason's first clause,
    clipped, when none is given), what was measured, the criterion (written before the numbers)
    and the estimates with their intervals; ``kind`` follows from the verdict (``KINDS``, SPEC
    Part F).

    ``extra`` may hold ``companions``: further entries of the report judged from the same records
    (each a ``claim(...)`` with ``claim``, ``title``, ``paper`` and ``section`` added), e.g. A7.3b
    beside A7.3; the report lists each as its own entry."""
    allowed = [v for outcomes in KINDS.values() for v in outcomes]
    require(verdict in allowed, f"verdict must be one of {', '.join(allowed)}, got {verdict!r}")
    summary = summary or clipped(reason.split("; ")[0], SUMMARY_CHARS)
    require(
        len(summary) <= SUMMARY_CHARS,
        f"summary must be at most {SUMMARY_CHARS} characters, got {len(summary)}: {summary!r}",
    )
    return {
        "verdict": verdict,
        "kind": kind_of(verdict),
        "reason": reason,
        "summary": summary,
        "measured": measured,
        "criterion": criterion,
        "estimates": estimates,
        **extra,
    }
