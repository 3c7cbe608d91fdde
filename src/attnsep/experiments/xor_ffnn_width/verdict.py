"""A7.8's verdict (SPEC Part G, item 2a): ``w*`` and ``P*`` per ``d`` with their bootstrap over
replicas, both exponents and the criterion (``config.Config``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...metrics import stats
from ...metrics.laws import POWER, exponent_draws, one_sided_exponent
from ...train.search import probe_matrix
from ..base import Record

PARAMS_MIN = 0.8
"""``P*``'s exponent: reproduced needs its lower bound ``>= 0.8``, an upper bound below it
refutes the claim."""
WIDTH_FLAT = 0.25
"""``w*``'s exponent: reproduced needs its upper bound ``< 0.25`` (the width adds at most a
quarter of the first layer's linear growth)."""
WIDTH_MAX = 0.5
"""``w*``'s exponent: a lower bound ``>= 0.5`` refutes the claim (the width itself grows)."""
MIN_SIZES = 3
"""Sizes of ``d`` a verdict needs."""
MIN_SEEDS = 10
"""Replicas per probe a verdict needs: with fewer, a rate ``>= 0.9`` asks every replica to
succeed, and ``w*`` measures the slowest replica, not the 90% quantile."""
RIVAL_ALPHA = 0.5
"""The rival's width law ``w* = c d^0.5``."""


CRITERION = (
    "per d, w* = the smallest hidden width at which >= 90% of the SGD-trained two-layer ReLU "
    "replicas reach test sign error <= 1% (doubling from 2, then bisection), P* = w*(d+2)+1; "
    "alpha_P, alpha_w = exponents of P* = c d^alpha and w* = c d^alpha over >= 3 d's, bootstrap "
    f"95% intervals over replicas. Reproduced when alpha_P's lower bound >= {PARAMS_MIN} and "
    f"alpha_w's upper bound < {WIDTH_FLAT}; not reproduced when alpha_P's upper bound < "
    f"{PARAMS_MIN} or alpha_w's lower bound >= {WIDTH_MAX}; inconclusive otherwise, or with fewer "
    f"than {MIN_SIZES} d's or {MIN_SEEDS} replicas per probe (criterion "
    "version 1; alpha_P < 0.8 is unreachable unless w* falls with d: the first layer has >= 2d+5 "
    "parameters)"
)


def _bounded(value: float, low: float, high: float) -> tuple[float, float, float]:
    """An estimate whose interval contains its value (a percentile interval of an order
    statistic may miss the statistic by one grid step)."""
    if math.isnan(value):
        return value, low, high
    return value, min(low, value), max(high, value)


def _exponent(ds: list[float], point: list[float], draws: np.ndarray) -> tuple[float, ...]:
    """``(value, low, high)`` of ``c d^alpha``'s exponent: ``nan`` value when a point is not
    reached; the lower bound reads ``-inf`` for a draw unreached below the mean ``ln d``."""
    if len(ds) < 2:
        return math.nan, math.nan, math.nan
    value = POWER.fit(ds, point)[1]
    low = one_sided_exponent(POWER, ds, draws, np.isinf(draws), "low")
    high = stats.interval(exponent_draws(POWER, ds, draws))[1]
    return _bounded(value, low, high)


def analyse(records: list[Record]) -> dict[str, Any]:
    """``w*``, ``P*`` per ``d`` with their bootstrap draws (paired: the same resampled replica
    indices at every ``d``) and intervals, and both exponents."""
    from ..xor_thresholds import BOOTSTRAP_SEED, TARGET

    rows = sorted((r for r in records if r["model"] == "fcn"), key=lambda r: r["d"])
    ds = [float(r["d"]) for r in rows]
    w, w_draws = [], []
    for r in rows:
        star, draws = stats.threshold_draws(*probe_matrix(r["probes"]), TARGET, seed=BOOTSTRAP_SEED)
        w.append(star)
        w_draws.append(draws)
    wd = np.column_stack(w_draws) if rows else np.empty((0, 0))
    pd = wd * (np.asarray(ds) + 2) + 1 if rows else wd
    p = [x * (d + 2) + 1 for x, d in zip(w, ds, strict=True)]
    out: dict[str, Any] = {"d": ds, "w": w, "P": p, "w_draws": wd, "P_draws": pd}
    out["w_ci"] = [_bounded(v, *stats.interval(wd[:, i])) for i, v in enumerate(w)]
    out["P_ci"] = [_bounded(v, *stats.interval(pd[:, i])) for i, v in enumerate(p)]
    out["alpha_w"] = _exponent(ds, w, wd)
    out["alpha_P"] = _exponent(ds, p, pd)
    out["seeds"] = [len(r["probes"][0]["outcomes"]) for r in rows]
    return out


def decide(a: dict[str, Any]) -> str:
    """The criterion (``Config``) on ``analyse``'s numbers."""
    if len(a["d"]) < MIN_SIZES or min(a["seeds"]) < MIN_SEEDS:
        return stats.INCONCLUSIVE
    (_, p_low, p_high), (_, w_low, w_high) = a["alpha_P"], a["alpha_w"]
    if p_high < PARAMS_MIN or w_low >= WIDTH_MAX:
        return stats.NOT_REPRODUCED
    if p_low >= PARAMS_MIN and w_high < WIDTH_FLAT:
        return stats.REPRODUCED
    return stats.INCONCLUSIVE


def _stretch(e: tuple[float, ...], below: float, above: float) -> float | None:
    """How many times wider in ``ln d`` the range must be for the interval ``e = (value, low,
    high)``, shrinking like ``1 / ln(d_max / d_min)`` about its value, to clear ``below`` (a
    value under it) or ``above`` (a value over it); ``None`` for a value between the two or
    not finite."""
    value, low, high = e
    if not all(math.isfinite(x) for x in (value, low, high)):
        return None
    if value < below:
        half, gap = high - value, below - value
    elif value > above:
        half, gap = value - low, value - above
    else:
        return None
    return max(1.0, half / gap)


LARGEST_D_POWER = 40
"""``deciding_d`` names no ``d`` beyond ``2^40``: an interval that close to a bound decides at no
size a run could reach."""


def deciding_d(a: dict[str, Any]) -> float | None:
    """The largest ``d`` (a power of 2) at which both exponents' intervals would clear their
    bounds (``_stretch``: ``alpha_w`` against ``WIDTH_FLAT`` / ``WIDTH_MAX``, ``alpha_P``
    against ``PARAMS_MIN``); ``None`` when either cannot (a value between the bounds) or only
    beyond ``2^LARGEST_D_POWER``."""
    if len(a["d"]) < 2:
        return None
    parts = [_stretch(a["alpha_w"], WIDTH_FLAT, WIDTH_MAX)]
    parts.append(_stretch(a["alpha_P"], PARAMS_MIN, PARAMS_MIN) if "alpha_P" in a else 1.0)
    if any(p is None for p in parts):
        return None
    span = math.log(a["d"][-1] / a["d"][0]) * max(p for p in parts if p is not None)
    power = math.ceil(math.log2(a["d"][0]) + span / math.log(2))
    return 2.0**power if power <= LARGEST_D_POWER else None


def _table(a: dict[str, Any]) -> str:
    return "; ".join(
        f"d={int(d)}: w*={stats.fmt_interval(*wc)}, P*={stats.fmt_interval(pc[0], pc[1], pc[2], 5)}"
        for d, wc, pc in zip(a["d"], a["w_ci"], a["P_ci"], strict=True)
    )


def _reason(a: dict[str, Any], outcome: str) -> str:
    ap, aw = (stats.fmt_interval(a[k][0], a[k][1], a[k][2], 2) for k in ("alpha_P", "alpha_w"))
    said = f"P* grows like d^{ap} while w* grows like d^{aw}"
    if len(a["d"]) < MIN_SIZES:
        return f"{len(a['d'])} values of d run, the criterion needs at least {MIN_SIZES}"
    if min(a["seeds"]) < MIN_SEEDS:
        return (
            f"{said}; only {min(a['seeds'])} replicas per probe: the criterion needs at least "
            f"{MIN_SEEDS} (with fewer, w* is the slowest replica's width)"
        )
    if outcome == stats.REPRODUCED:
        return (
            f"{said}: linear parameters, from the dense first layer (w*'s exponent < {WIDTH_FLAT})"
        )
    if outcome == stats.NOT_REPRODUCED:
        if a["alpha_w"][1] >= WIDTH_MAX:
            return said + f": the width itself grows (lower bound >= {WIDTH_MAX})"
        return said + f": fewer than linear parameters suffice (upper bound < {PARAMS_MIN})"
    missing = [f"d={int(d)}" for d, w in zip(a["d"], a["w"], strict=True) if not math.isfinite(w)]
    if missing:
        said += f"; w* not reached within the width limit at {', '.join(missing)}"
    where = deciding_d(a)
    if where is not None:
        said += f"; d up to about {where:g} (same replicas per probe) would decide"
    elif WIDTH_FLAT <= a["alpha_w"][0] <= WIDTH_MAX:  # no range decides a value in between
        said += (
            f"; the width's exponent lies between {WIDTH_FLAT} and {WIDTH_MAX} (it grows, less "
            "than the rival's d^0.5): no range of d decides that"
        )
    return said


def _summary(a: dict[str, Any], outcome: str) -> str:
    """``_reason`` in short (a claim's ``summary``): the bound that decides, to two digits as the
    reason gives it."""
    if len(a["d"]) < MIN_SIZES:
        return f"only {len(a['d'])} values of d; the criterion needs {MIN_SIZES}"
    if min(a["seeds"]) < MIN_SEEDS:
        return f"only {min(a['seeds'])} replicas per probe; the criterion needs {MIN_SEEDS}"
    (_, p_low, p_high), (_, w_low, w_high) = a["alpha_P"], a["alpha_w"]
    pl, ph, wl, wh = (stats.fmt_number(x, 2) for x in (p_low, p_high, w_low, w_high))
    if outcome == stats.REPRODUCED:
        return stats.fitting(
            f"linear P* (alpha_P >= {pl}), flat w* (alpha_w <= {wh})",
            f"alpha_P >= {pl}, alpha_w <= {wh}",
        )
    if outcome == stats.NOT_REPRODUCED:
        if w_low >= WIDTH_MAX:
            return f"the width grows: alpha_w's lower bound {wl} >= {WIDTH_MAX}"
        return stats.fitting(
            f"fewer than linear params: alpha_P's upper bound {ph} < {PARAMS_MIN}",
            f"sublinear parameters: alpha_P's upper bound {ph} < {PARAMS_MIN}",
        )
    missing = [int(d) for d, w in zip(a["d"], a["w"], strict=True) if not math.isfinite(w)]
    if missing:
        return stats.several(
            missing,
            "w* not reached within the width limit at d={}",
            "w* not reached within the width limit at {} d's",
        )
    said = (
        f"alpha_P's lower bound {pl} < {PARAMS_MIN}"
        if p_low < PARAMS_MIN
        else f"alpha_w's upper bound {wh} >= {WIDTH_FLAT}"
    )
    where = deciding_d(a)
    if where is not None:
        return stats.fitting(
            f"{said}; d ~ {where:g} would decide", f"{said}; d ~ {where:g} decides", said
        )
    if WIDTH_FLAT <= a["alpha_w"][0] <= WIDTH_MAX:
        return stats.fitting(f"{said}; w* grows, slower than d^0.5", said)
    return said


def verdict(records: list[Record], config: Any) -> dict:
    a = analyse(records)
    outcome = decide(a)
    estimates = []
    for d, wc, pc in zip(a["d"], a["w_ci"], a["P_ci"], strict=True):
        estimates.append(stats.estimate(f"w* (d={int(d)})", *wc))
        estimates.append(stats.estimate(f"P* (d={int(d)})", *pc))
    estimates.append(stats.estimate("alpha_P (P* = c d^alpha)", *a["alpha_P"]))
    estimates.append(stats.estimate("alpha_w (w* = c d^alpha)", *a["alpha_w"]))
    measured = (
        f"{_table(a)}; exponents: alpha_P = {stats.fmt_interval(*a['alpha_P'])}, alpha_w = "
        f"{stats.fmt_interval(*a['alpha_w'])} ({min(a['seeds'], default=0)} replicas per probe)"
    )
    summary = _summary(a, outcome)
    return stats.claim(
        outcome, _reason(a, outcome), measured, CRITERION, estimates, summary=summary
    )
