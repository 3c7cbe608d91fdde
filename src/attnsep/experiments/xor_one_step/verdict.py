"""A7.1's verdict from the records: the schedule series decides (a drop between interval-
separated sizes, the bounds at the largest ``d``, the failure rate's trend in ``ln d``); the
fixed widths are information (SPEC A7.1, Parts D and E)."""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np

from ...metrics import stats
from ..base import Record
from .config import Config, Series

TARGET = 0.9
"""The success rate the criterion asks of the largest ``d`` (its Wilson bounds against it)."""
TREND_Z = 1.959963984540054
"""The failure rate rises when the one-sided trend test's z exceeds this (level 2.5%): the lower
end of the slope's 95% interval is then above 0."""


def series_rows(records: list[Record], series: Series, m: int | None = None) -> list[Record]:
    """The records of ``series`` (of width ``m`` when given), by ``d``."""
    rows = (r for r in records if r.get("series") == series and m in (None, r["m"]))
    return sorted(rows, key=lambda r: r["d"])


def fixed_widths(records: list[Record]) -> list[int]:
    """The widths of the fixed series that were run."""
    return sorted({r["m"] for r in records if r.get("series") == "fixed"})


def interval_drop(rows: list[Record]) -> tuple[Record, Record] | None:
    """The most separated pair ``d1 < d2`` with Wilson high(d2) < Wilson low(d1), if any."""
    pairs = [(a, b) for i, a in enumerate(rows) for b in rows[i + 1 :] if b["high"] < a["low"]]
    return max(pairs, key=lambda p: p[0]["low"] - p[1]["high"], default=None)


def seeds_to_decide(rate: float, target: float, side: Literal["low", "high"]) -> int | None:
    """The fewest replicas at which, at the observed ``rate``, the Wilson 95% lower bound
    reaches ``target`` (``side="low"``) or the upper bound falls below it (``side="high"``);
    ``None`` when the rate itself is on the wrong side of ``target``."""
    if (side == "low" and rate <= target) or (side == "high" and rate >= target):
        return None

    def decided(n: int) -> bool:
        low, high = stats.wilson(rate * n, n)  # the Wilson formula at a fractional count
        return low >= target if side == "low" else high < target

    above = 1
    while not decided(above):
        above *= 2
    below = above // 2  # not decided (or 0)
    while above - below > 1:
        mid = (above + below) // 2
        above, below = (mid, below) if decided(mid) else (above, mid)
    return above


def _points(rows: list[Record]) -> str:
    return "; ".join(
        f"d={r['d']} (m={r['m']}): {r['successes']}/{r['seeds']} = "
        f"{stats.fmt_interval(r['rate'], r['low'], r['high'])}, collapse {r['collapse_rate']:.2f}"
        for r in rows
    )


def _drop_text(drop: tuple[Record, Record] | None) -> str:
    if drop is None:
        return "no interval-separated drop"
    a, b = drop
    return f"drop from d={a['d']} (low {a['low']:.3f}) to d={b['d']} (high {b['high']:.3f})"


def failure_trend(rows: list[Record]) -> dict[str, Any]:
    """The one-sided Cochran-Armitage trend test of the failure counts in ``ln d`` (SPEC Part E,
    the config's criterion): the failure rate's slope per unit of ``ln d`` (least squares
    weighted by the seeds), its standard error under the pooled failure rate, ``z`` and the
    slope's 95% interval. ``rises`` when ``z > TREND_Z``. Needs two sizes."""
    x = np.log([r["d"] for r in rows])
    n = np.array([r["seeds"] for r in rows], dtype=float)
    failures = n - np.array([r["successes"] for r in rows], dtype=float)
    pooled = failures.sum() / n.sum()
    centred = x - (n * x).sum() / n.sum()
    sxx = float((n * centred**2).sum())
    slope = float((centred * failures).sum()) / sxx if sxx > 0 else 0.0
    se = math.sqrt(pooled * (1 - pooled) / sxx) if sxx > 0 else 0.0
    z = slope / se if se > 0 else 0.0
    return {
        "slope": slope,
        "se": se,
        "z": z,
        "low": slope - TREND_Z * se,
        "high": slope + TREND_Z * se,
        "rises": z > TREND_Z,
    }


def _trend_text(trend: dict[str, Any]) -> str:
    return (
        f"failure rate 1 - rate vs ln d: slope {trend['slope']:.4f} "
        f"[{trend['low']:.4f}, {trend['high']:.4f}] per unit of ln d, trend z = {trend['z']:.2f}"
    )


CRITERION = (
    "criterion version 2 (SPEC Part E), on the schedule series m(d) = ceil(c (ln d)^2): "
    "reproduced when the Wilson 95% lower bound of the one-step success rate at the largest d is "
    ">= 0.9, no d1 < d2 has Wilson high(d2) < Wilson low(d1), and the failure rate 1 - rate does "
    "not rise with d (one-sided Cochran-Armitage trend test in ln d over the schedule's sizes: "
    "rises when z > 1.96, i.e. the slope's 95% interval is above 0); not reproduced when such a "
    "drop exists or the upper bound at the largest d is < 0.9; inconclusive otherwise (fixed-m "
    "series reported as information)"
)


def verdict(records: list[Record], config: Config) -> dict:
    """SPEC A7.1 and Part D: the schedule series decides; the fixed width is information."""
    schedule = series_rows(records, "schedule")
    fixed = {m: series_rows(records, "fixed", m) for m in fixed_widths(records)}
    labelled = [("schedule", schedule)] + [(f"fixed m={m}", rows) for m, rows in fixed.items()]
    estimates = [
        stats.rate_estimate(f"{name} {what}, d={r['d']} (m={r['m']})", r[count], r["seeds"])
        for what, count in (("success", "successes"), ("collapse", "collapses"))
        for name, rows in labelled
        for r in rows
    ]
    estimates += [
        stats.estimate(f"schedule failure 1 - rate, d={r['d']} (m={r['m']})", *_failure(r))
        for r in schedule
    ]
    fixed_drops = {m: _drop_text(interval_drop(rows)) for m, rows in fixed.items()}
    trend = failure_trend(schedule) if len(schedule) >= 2 else None
    parts = []
    if schedule:
        parts.append(f"schedule m = ceil({config.schedule_scale:g} (ln d)^2): " + _points(schedule))
    if trend is not None:
        parts[-1] += f" ({_trend_text(trend)})"
        estimates.append(
            stats.estimate(
                "schedule failure-rate slope per unit of ln d (95%, under a constant rate)",
                trend["slope"],
                trend["low"],
                trend["high"],
            )
        )
    parts += [f"fixed m = {m}: {_points(rows)} ({fixed_drops[m]})" for m, rows in fixed.items()]
    measured = " | ".join(parts)
    extra = {"fixed_drop": fixed_drops, "failure_trend": trend}
    verdict_, reason, summary = _decide(schedule, trend)
    return stats.claim(verdict_, reason, measured, CRITERION, estimates, summary=summary, **extra)


def _failure(r: Record) -> tuple[float, float, float]:
    """The failure rate ``1 - rate`` with its Wilson interval."""
    return 1 - r["rate"], 1 - r["high"], 1 - r["low"]


def _decide(schedule: list[Record], trend: dict[str, Any] | None) -> tuple[str, str, str]:
    """The verdict, its reason and its summary from the schedule series (the config's
    criterion)."""
    if not schedule:
        return (
            stats.INCONCLUSIVE,
            "the schedule series was not run, and it is the one that decides",
            "the schedule series, the one that decides, was not run",
        )
    drop, last = interval_drop(schedule), schedule[-1]
    where = f"at the largest d={last['d']} (m={last['m']})"
    at = f"at d={last['d']} (m={last['m']})"
    if drop is not None:
        a, b = drop
        return (
            stats.NOT_REPRODUCED,
            f"the schedule series falls with d: {_drop_text(drop)}",
            f"falls: d={a['d']} low {a['low']:.3f} > d={b['d']} high {b['high']:.3f}",
        )
    if last["high"] < TARGET:
        return (
            stats.NOT_REPRODUCED,
            f"{where} the Wilson upper bound {last['high']:.3f} is below {TARGET}",
            f"upper bound {last['high']:.3f} < {TARGET} {at}",
        )
    if last["low"] < TARGET:
        return stats.INCONCLUSIVE, _undecided(last, where), _undecided_summary(last, at)
    bound = f"{where} the Wilson lower bound {last['low']:.3f} is >= {TARGET} with no drop"
    holds = f"lower bound {last['low']:.3f} >= {TARGET}"
    if trend is None:
        return (
            stats.INCONCLUSIVE,
            f"{bound}, but one size cannot show how 1 - rate moves with d",
            f"{holds}, but one size shows no trend in d",
        )
    if trend["rises"]:
        return (
            stats.INCONCLUSIVE,
            f"{bound}, but the failure rate rises with ln d (slope {trend['slope']:.4f}, "
            f"95% interval above 0, z = {trend['z']:.2f})",
            f"failure rate rises with ln d (z = {trend['z']:.2f} > {TREND_Z:.2f})",
        )
    return (
        stats.REPRODUCED,
        f"{bound}, and the failure rate shows no rise with ln d (trend z = {trend['z']:.2f} "
        f"<= {TREND_Z:.2f})",
        f"{holds} {at}, no rise",
    )


def _undecided(last: Record, where: str) -> str:
    rate, seeds = last["rate"], last["seeds"]
    up = seeds_to_decide(rate, TARGET, "low")
    if up is not None:
        return (
            f"{where} the rate {rate:.3f} has lower bound {last['low']:.3f} < {TARGET}: about "
            f"{up} seeds (now {seeds}) would lift it to {TARGET} at this rate"
        )
    down = seeds_to_decide(rate, TARGET, "high")
    tail = "" if down is None else f"; about {down} seeds would put the upper bound below it"
    return (
        f"{where} the rate {rate:.3f} is not above {TARGET}, so no number of seeds lifts the lower "
        f"bound to {TARGET} at this rate (now {seeds} seeds{tail})"
    )


def _undecided_summary(last: Record, at: str) -> str:
    """``_undecided`` in short: the bound that misses, or the rate that cannot lift it."""
    if seeds_to_decide(last["rate"], TARGET, "low") is not None:
        return f"lower bound {last['low']:.3f} < {TARGET} {at}"
    return f"rate {last['rate']:.3f} not above {TARGET} {at}"
