"""A7.4's verdict from the records: (a) specialization under the anti-symmetric init, (b) the two
inits compared, (c) the step's alignment ratio on the schedule; the median ratio's
distribution-free interval (SPEC A7.4, Parts D-F; the criterion in ``config.Config``)."""

from __future__ import annotations

import math

import numpy as np

from ...configs import INITS
from ...metrics import stats
from ..base import Record
from ..xor_one_step.config import Series
from ..xor_one_step.verdict import seeds_to_decide
from .config import Config
from .run import MASS

RATE, LOWER = 0.9, 0.8
SMALLEST_D = 256
ALIGNED_FROM_D = 2**10
RATIO_BAR = 1.2
"""The alignment ratio's lower bound must reach this at every schedule ``d`` from
``ALIGNED_FROM_D`` (criterion (c)): "significantly larger" than ambient, not merely larger."""


def summary_rows(records: list[Record], init: str, series: Series) -> list[Record]:
    """The summary records of ``init`` on ``series``, by ``d``."""
    rows = (r for r in records if r["kind"] == "summary" and r["init"] == init)
    return sorted((r for r in rows if r["series"] == series), key=lambda r: r["d"])


def ratio_median(r: Record) -> tuple[float, float, float]:
    """Median alignment ratio over replicas and its distribution-free 95% interval (the order
    statistics of ``stats.median_ranks``: one sort, where a bootstrap of the median costs a
    partition per resample; at 1024 replicas the two intervals agree to an order statistic or
    two)."""
    ratios = np.sort(np.asarray(r["ratio"], dtype=float))
    lo, hi = stats.median_ranks(len(ratios))
    return float(np.median(ratios)), float(ratios[lo]), float(ratios[hi])


def _where(r: Record) -> str:
    return f"d={r['d']} ({'schedule ' if r['series'] == 'schedule' else ''}m={r['m']})"


CRITERION = (
    "criterion version 4 (SPEC Parts E-F), fixed-width series at every d >= "
    f"{SMALLEST_D}: (a) under the anti-symmetric init both heads put >= {MASS} on distinct "
    f"support bits in >= {RATE} of replicas with Wilson lower bound >= {LOWER}; (b) the "
    "anti-symmetric rate is not interval-separated below the independent init's (the "
    "difference anti-symmetric - independent has a Newcombe 95% upper end >= 0; the paper's "
    '"ensures" credits the anti-symmetric init, and bounds no independent rate); (c) on the '
    "schedule series m(d) = ceil(c (ln d)^2), per replica the smaller over the two heads of the "
    "signed score change V(theta' - theta) at the head's own support bit (the one-to-one "
    "assignment its initial scores favour) over the largest |change| at a non-support position, "
    f"the median's distribution-free 95% lower bound >= {RATIO_BAR} at every d >= "
    f"{ALIGNED_FROM_D}; reproduced when (a), (b) and (c) hold; not reproduced when at the "
    f"largest fixed-width d the anti-symmetric rate's Wilson upper bound is < {RATE}, or at the "
    f"largest schedule d the median ratio's upper bound is <= {RATIO_BAR}; inconclusive otherwise"
)


def verdict(records: list[Record], config: Config) -> dict:
    """SPEC A7.4, Parts D-F: (a) and (c) on the anti-symmetric init, (b) the two inits compared
    (the config's docstring); the rest are estimates."""
    estimates, parts = [], []
    for series in ("fixed", "schedule"):
        for init in INITS:
            rows = summary_rows(records, init, series)
            for r in rows:
                name = f"{init}, {_where(r)}"
                ratio = stats.estimate(f"{name}: alignment ratio median", *ratio_median(r))
                estimates += [
                    stats.rate_estimate(f"{name}: on target", r["on_target"], r["seeds"]),
                    stats.rate_estimate(f"{name}: collapse", r["collapses"], r["seeds"]),
                    ratio,
                ]
            if rows:
                parts.append(f"{series} {init}: " + "; ".join(_point(r) for r in rows))
    pairs = _paired(records)
    estimates += [
        stats.estimate(f"{_where(a)}: on-target rate, anti-symmetric - independent", *diff)
        for a, _, diff in pairs
    ]
    if pairs:
        parts.append("on-target difference anti-symmetric - independent: " + _differences(pairs))
    measured = f"fixed m={config.m}, schedule m = ceil({config.schedule_scale:g} (ln d)^2) | "
    measured += " | ".join(parts)
    outcomes = [_specialization(records), _comparison(records), _alignment(records)]
    verdicts = [v for v, _, _ in outcomes]
    if stats.NOT_REPRODUCED in verdicts:
        verdict_ = stats.NOT_REPRODUCED
        deciding = [(why, short) for v, why, short in outcomes if v == stats.NOT_REPRODUCED]
    elif all(v == stats.REPRODUCED for v in verdicts):
        verdict_ = stats.REPRODUCED
        deciding = [(why, short) for _, why, short in outcomes]
    else:
        verdict_ = stats.INCONCLUSIVE
        deciding = [(why, short) for v, why, short in outcomes if v != stats.REPRODUCED]
    reason = "; ".join(why for why, _ in deciding)
    # the first condition that decides; when all three hold, (a) and (c) carry the numbers
    summary = (
        f"{outcomes[0][2]}; {outcomes[2][2]}" if verdict_ == stats.REPRODUCED else deciding[0][1]
    )
    return stats.claim(verdict_, reason, measured, CRITERION, estimates, summary=summary)


def rate_difference(a: Record, b: Record) -> tuple[float, float, float]:
    """``a``'s on-target rate minus ``b``'s with Newcombe's hybrid score 95% interval, built
    from the two Wilson intervals (independent replicas)."""
    keys = ("on_target_rate", "on_target_low", "on_target_high")
    return stats.rate_difference(tuple(a[k] for k in keys), tuple(b[k] for k in keys))


Pair = tuple[Record, Record, tuple[float, float, float]]
"""``(anti-symmetric, independent, their rate_difference)`` at one fixed-width ``d``."""


def _paired(records: list[Record]) -> list[Pair]:
    """The fixed-width sizes run with both inits."""
    indep = {r["d"]: r for r in summary_rows(records, "independent", "fixed")}
    anti = [r for r in summary_rows(records, "antisymmetric", "fixed") if r["d"] in indep]
    return [(a, indep[a["d"]], rate_difference(a, indep[a["d"]])) for a in anti]


def _differences(pairs: list[Pair]) -> str:
    return ", ".join(f"d={a['d']}: {stats.fmt_interval(*diff)}" for a, _, diff in pairs)


def _point(r: Record) -> str:
    rate = stats.fmt_interval(r["on_target_rate"], r["on_target_low"], r["on_target_high"])
    return (
        f"{_where(r)}: on target {r['on_target']}/{r['seeds']} = {rate}, collapse "
        f"{r['collapse_rate']:.2f}, ratio median {stats.fmt_interval(*ratio_median(r))}, "
        f"heads end on their own bits {r['own_kept']}/{r['seeds']}"
    )


def _specialization(records: list[Record]) -> tuple[str, str, str]:
    """Condition (a), Part D's specialization test, on the fixed-width anti-symmetric series:
    the outcome, its reason and its summary."""
    rows = [r for r in summary_rows(records, "antisymmetric", "fixed") if r["d"] >= SMALLEST_D]
    if not rows:
        return (
            stats.INCONCLUSIVE,
            f"specialization: no fixed-width d >= {SMALLEST_D} was run with the anti-symmetric "
            "init; run d = 256 .. 4096",
            f"(a) no anti-symmetric fixed-width d >= {SMALLEST_D} run",
        )
    last = rows[-1]
    if last["on_target_high"] < RATE:
        return (
            stats.NOT_REPRODUCED,
            f"specialization: at the largest d={last['d']} the Wilson upper bound "
            f"{last['on_target_high']:.3f} of the on-target rate is below {RATE}",
            f"(a) on-target upper bound {last['on_target_high']:.3f} < {RATE} at d={last['d']}",
        )
    failing = [r for r in rows if not _passes(r)]
    if failing:
        return (
            stats.INCONCLUSIVE,
            "; ".join(_undecided(r, r is last) for r in failing),
            _undecided_summary(failing[0], failing[0] is last),
        )
    return (
        stats.REPRODUCED,
        f"specialization: at every d >= {SMALLEST_D} ({', '.join(str(r['d']) for r in rows)}) "
        f"the on-target rate is >= {RATE} with Wilson lower bound >= {LOWER}",
        f"(a) rate >= {RATE} (low >= {LOWER})",
    )


def _passes(r: Record) -> bool:
    return r["on_target_rate"] >= RATE and r["on_target_low"] >= LOWER


def _undecided_summary(r: Record, largest: bool) -> str:
    """``_undecided`` in short: the bound that misses at the first failing ``d``."""
    rate = r["on_target_rate"]
    if rate >= RATE:
        return f"(a) lower bound {r['on_target_low']:.3f} < {LOWER} at d={r['d']}"
    if largest:
        return f"(a) rate {rate:.3f} < {RATE} at the largest d={r['d']}"
    return f"(a) rate {rate:.3f} < {RATE} at d={r['d']} but not at the largest d"


def _undecided(r: Record, largest: bool) -> str:
    rate, seeds = r["on_target_rate"], r["seeds"]
    if rate >= RATE:
        n = seeds_to_decide(rate, LOWER, "low")
        return (
            f"specialization d={r['d']}: rate {rate:.3f} but lower bound "
            f"{r['on_target_low']:.3f} < {LOWER}, about {n} seeds (now {seeds}) would lift it "
            f"to {LOWER}"
        )
    if largest:
        n = seeds_to_decide(rate, RATE, "high")
        return (
            f"specialization d={r['d']} (largest): rate {rate:.3f} < {RATE} with upper bound "
            f"{r['on_target_high']:.3f}, about {n} seeds (now {seeds}) would put it below {RATE}"
        )
    return (
        f"specialization d={r['d']}: rate {rate:.3f} < {RATE} while the largest d does not fail, "
        "so the rule decides neither way: a larger d or more seeds at the largest d would"
    )


def _comparison(records: list[Record]) -> tuple[str, str, str]:
    """Condition (b): the anti-symmetric on-target rate is not interval-separated below the
    independent one at any fixed-width ``d >= SMALLEST_D``; never a failure on its own."""
    anti = [r["d"] for r in summary_rows(records, "antisymmetric", "fixed") if r["d"] >= SMALLEST_D]
    pairs = [p for p in _paired(records) if p[0]["d"] >= SMALLEST_D]
    missing = sorted(set(anti) - {a["d"] for a, _, _ in pairs})
    if not anti:
        return (
            stats.INCONCLUSIVE,
            f"init comparison: no fixed-width d >= {SMALLEST_D} was run with both inits",
            f"(b) no fixed-width d >= {SMALLEST_D} run with both inits",
        )
    if missing:
        return (
            stats.INCONCLUSIVE,
            "init comparison: the independent init was not run at fixed-width d="
            f"{', '.join(map(str, missing))}; run both inits at every d",
            f"(b) the independent init not run at d={missing[0]}",
        )
    below = [p for p in pairs if p[2][2] < 0]
    if below:
        a, _, diff = below[0]
        return (
            stats.INCONCLUSIVE,
            "init comparison: the anti-symmetric on-target rate is interval-separated below the "
            f"independent init's at {_differences(below)} (anti-symmetric - independent), "
            'against the paper\'s "ensures"; the rule does not count it as a failure',
            f"(b) anti-symmetric below independent at d={a['d']}: {diff[0]:.3g}",
        )
    return (
        stats.REPRODUCED,
        "init comparison: the anti-symmetric on-target rate is not interval-separated below the "
        f"independent init's at any d >= {SMALLEST_D} (anti-symmetric - independent: "
        f"{_differences(pairs)})",
        "(b) anti-symmetric not below independent",
    )


def _alignment(records: list[Record]) -> tuple[str, str, str]:
    """Condition (c), Part E's alignment test with a bar of ``RATIO_BAR``, on the schedule
    series, anti-symmetric init: the outcome, its reason and its summary."""
    rows = summary_rows(records, "antisymmetric", "schedule")
    if not rows:
        return (
            stats.INCONCLUSIVE,
            "alignment: the schedule series was not run with the anti-symmetric init; run "
            "d = 2^8 .. 2^16",
            "(c) no anti-symmetric schedule series run",
        )
    last = rows[-1]
    value, low, high = ratio_median(last)
    if high <= RATIO_BAR:
        return (
            stats.NOT_REPRODUCED,
            f"alignment: at the largest d={last['d']} (m={last['m']}) the median ratio "
            f"{value:.3f} has upper bound {high:.3f} <= {RATIO_BAR}",
            f"(c) ratio upper bound {high:.3f} <= {RATIO_BAR} at d={last['d']}",
        )
    judged = [r for r in rows if r["d"] >= ALIGNED_FROM_D]
    if not judged:
        return (
            stats.INCONCLUSIVE,
            f"alignment: no schedule d >= {ALIGNED_FROM_D} was run; run d = 2^10 .. 2^16",
            f"(c) no schedule d >= {ALIGNED_FROM_D} run",
        )
    lows = {r["d"]: ratio_median(r)[1] for r in judged}
    failing = [r for r in judged if lows[r["d"]] < RATIO_BAR]
    if failing:
        return (
            stats.INCONCLUSIVE,
            "; ".join(_ratio_undecided(r) for r in failing),
            _ratio_summary(failing[0]),
        )
    listed = ", ".join(f"{d}: {low:.3f}" for d, low in lows.items())
    return (
        stats.REPRODUCED,
        f"alignment: the median ratio's lower bound is >= {RATIO_BAR} at every schedule d >= "
        f"{ALIGNED_FROM_D} ({listed})",
        f"(c) ratio low {min(lows.values()):.3f} >= {RATIO_BAR}",
    )


def _ratio_summary(r: Record) -> str:
    """``_ratio_undecided`` in short: the median at or below the bar, or its lower bound."""
    value, low, _ = ratio_median(r)
    if value <= RATIO_BAR:
        return f"(c) median ratio {value:.3f} <= {RATIO_BAR} at d={r['d']}"
    return f"(c) ratio lower bound {low:.3f} < {RATIO_BAR} at d={r['d']}"


def _ratio_undecided(r: Record) -> str:
    value, low, _ = ratio_median(r)
    where = (
        f"alignment d={r['d']} (m={r['m']}): median ratio {value:.3f} with lower bound {low:.3f}"
    )
    if value <= RATIO_BAR:
        return (
            f"{where}, the median itself is <= {RATIO_BAR}: no number of seeds lifts the bound "
            f"to {RATIO_BAR}"
        )
    more = math.ceil(r["seeds"] * ((value - low) / (value - RATIO_BAR)) ** 2)  # ~ 1/sqrt(seeds)
    return (
        f"{where} < {RATIO_BAR}: about {more} seeds (now {r['seeds']}) would lift it to {RATIO_BAR}"
    )
