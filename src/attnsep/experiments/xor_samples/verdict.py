"""A7.5a's verdict: ``n*`` of the replicas that are not stuck against ``d^4`` and the stuck share
against the target's slack, at every ``d`` (SPEC A7.5, Part E, F), with A7.5b's finding
(``growth``) as its companion."""

from __future__ import annotations

from typing import Any

from ...metrics import calibration, stats
from ...metrics.stats import fmt_interval
from ..base import Record
from . import growth
from .config import Config
from .search import analyse, bound, edge, series

EMPIRICAL = 1.0
"""The exponent of the paper's empirical ``O(d)``."""
MIN_SIZES = 3
"""Fewest values of ``d`` for ``reproduced``."""
SLACK = 0.1
"""The share of the population successes the target (0.9 x population) leaves: more stuck
replicas than that put the all-replica ``n*`` above the guard."""

CRITERION = (
    "A7.5a, a bound at every d (criterion version 4): n*(d) (smallest half-octave n whose "
    "one-empirical-step success rate reaches the target times the population step's rate on the "
    "same replicas; the search ends at a guard, the first grid point >= d^4 (ln d)^2 or n_max "
    "where smaller) on the replicas that are not stuck (stuck: succeed in population, fail at the "
    "guard), with a bootstrap 95% interval per d, and the stuck share of the population successes "
    "with its Wilson 95% interval: reproduced when at every d n*'s upper end <= d^4 and the stuck "
    f"share's lower end <= {SLACK:g} (at least {MIN_SIZES} values of d); not reproduced when at "
    f"some d whose guard reaches d^4 (ln d)^2 the stuck share's lower end > {SLACK:g} (n* of all "
    "replicas above d^4 (ln d)^2: the target leaves a tenth of them); inconclusive otherwise; "
    "n*/d^4 and the exponent of n* = c d^alpha reported"
)


def _decision(a: dict[str, Any], config: Config) -> tuple[str, str, str]:
    """The verdict, its one-sentence reason (for ``inconclusive``: what would decide), the
    stuck rates appended, and its summary."""
    outcome, reason, summary = _outcome(a, config)
    return outcome, f"{reason}; {stuck_text(a)}", summary


def _outcome(a: dict[str, Any], config: Config) -> tuple[str, str, str]:
    rows = [
        (int(d), h, s, g)
        for d, h, s, g in zip(a["d"], a["high"], a["stuck"], a["guard"], strict=True)
    ]
    over = [(d, s, g) for d, _, s, g in rows if s["trials"] and s["low"] > SLACK]
    for d, s, g in over:
        if g >= edge(d):
            return (
                stats.NOT_REPRODUCED,
                f"at d={d} {s['stuck']} of {s['trials']} population successes fail at the guard "
                f"n = {g:.3g} >= d^4 (ln d)^2 = {edge(d):.3g}, a share whose lower end "
                f"{s['low']:.2f} > {SLACK:g}: there n* of all replicas exceeds Corollary 3's "
                "d^4 polylog d with (ln d)^2",
                f"stuck at n >= d^4 (ln d)^2: lower end {s['low']:.2f} > {SLACK:g} at d={d}",
            )
    if len(rows) < MIN_SIZES:
        return (
            stats.INCONCLUSIVE,
            f"the bound needs at least {MIN_SIZES} values of d, got {len(rows)} "
            "(the standard preset runs 9)",
            f"only {len(rows)} values of d; the bound needs {MIN_SIZES}",
        )
    capped = [d for d, *_ in over]
    empty = [d for d, _, s, _ in rows if not s["trials"]]
    slow = [(d, h) for d, h, s, _ in rows if s["trials"] and h > bound(d) and d not in capped]
    if not (capped or empty or slow):
        worst = max(h / bound(d) for d, h, *_ in rows)
        return (
            stats.REPRODUCED,
            f"at every d n*'s upper end is <= d^4 (at most {worst:.3g} d^4) on the replicas that "
            f"are not stuck, and the stuck share is not shown above {SLACK:g} (its lower end "
            f"<= {SLACK:g}): at these sizes n* stays within Corollary 3's sufficient d^4 polylog d",
            f"n*'s upper end <= {worst:.3g} d^4; stuck not shown > {SLACK:g}",
        )
    parts, shorts = [], []
    if capped:
        parts.append(
            f"at d = {capped} the stuck share exceeds {SLACK:g} at a guard that n_max stops "
            "below d^4 (ln d)^2: a larger n_max (surrogate_n_max where the surrogate steps) "
            "would decide"
        )
        shorts.append(f"stuck > {SLACK:g} at d={capped[0]}, guard below d^4 (ln d)^2")
    if empty:
        parts.append(f"at d = {empty} no replica succeeds in population")
        shorts.append(f"no replica succeeds in population at d={empty[0]}")
    if slow:
        shown = ", ".join(f"{h / bound(d):.3g} d^4 at d={d}" for d, h in slow)
        parts.append(
            f"n*'s upper end exceeds d^4 ({shown}) while it stays at or below the guard, so it "
            f"does not refute d^4 (ln d)^2: more seeds than {config.seeds}, or probes between n* "
            "and the guard, would decide"
        )
        d, h = slow[0]
        shorts.append(f"n*'s upper end {h / bound(d):.3g} d^4 at d={d}, below the guard")
    return stats.INCONCLUSIVE, "; ".join(parts), shorts[0]


def stuck_text(a: dict[str, Any]) -> str:
    """The stuck replicas per ``d``: count, population successes, rate and Wilson interval, and
    the guard they fail at."""
    shown = ", ".join(
        f"d={int(d)}: {s['stuck']}/{s['trials']}"
        + (f" = {fmt_interval(s['rate'], s['low'], s['high'], 2)}" if s["trials"] else "")
        + f" at n = {g:.3g}"
        for d, s, g in zip(a["d"], a["stuck"], a["guard"], strict=True)
    )
    return (
        "stuck replicas (succeed in population, fail at the guard; left out of n*) among the "
        f"population successes: {shown}"
    )


def verdict(records: list[Record], config: Config) -> dict:
    """A7.5a (``bound_claim``) with A7.5b, a finding (``growth_entry``), as its companion; on
    simulated records (``calibration.in_simulation``) the companion is left out."""
    claim = bound_claim(records, config)
    if not calibration.in_simulation():
        claim["companions"] = [growth_entry(records, config)]
    return claim


def bound_claim(records: list[Record], config: Config) -> dict:
    """A7.5a on the fixed width's one-step certified searches."""
    a = analyse(series(records), config)
    outcome, reason, summary = _decision(a, config)
    table = list(zip(a["d"], a["n"], a["low"], a["high"], a["rows"], strict=True))
    estimates = [stats.estimate(f"n*(d={int(d)})", n, lo, hi) for d, n, lo, hi, _ in table]
    estimates += [
        stats.estimate(f"n*/d^4 (d={int(d)})", n / bound(d), lo / bound(d), hi / bound(d))
        for d, n, lo, hi, _ in table
    ]
    estimates += [
        stats.rate_estimate(
            f"population success rate (d={int(d)})",
            r["population"]["successes"],
            r["population"]["trials"],
        )
        for d, *_, r in table
    ]
    estimates += [
        stats.rate_estimate(f"stuck rate (d={int(d)})", s["stuck"], s["trials"])
        for d, s in zip(a["d"], a["stuck"], strict=True)
        if s["trials"]
    ]
    estimates.append(stats.estimate("exponent alpha (n* = c d^alpha)", *a["alpha"]))
    value, low, high = a["alpha"]
    measured = "; ".join(
        [
            f"d={int(d)}: n* = {fmt_interval(n, lo, hi)} = "
            f"{fmt_interval(n / bound(d), lo / bound(d), hi / bound(d))} d^4 "
            f"(population rate {_rate(r['population'])}, stuck {s['stuck']}/{s['trials']} at "
            f"the guard n = {r['n_guard']:.3g})"
            for (d, n, lo, hi, r), s in zip(table, a["stuck"], strict=True)
        ]
        + [
            f"alpha = {fmt_interval(*a['alpha'])} (reported, not judged: the paper's empirical "
            f"O(d) is exponent {EMPIRICAL:g}; the interval "
            + ("contains 1)" if low <= EMPIRICAL <= high else "excludes 1)")
        ]
    )
    return stats.claim(
        outcome,
        reason,
        measured,
        CRITERION + f" (target {config.target:g} x population, {config.seeds} seeds per probe)",
        estimates,
        summary=summary,
        exponent=stats.estimate("alpha", value, low, high),
    )


def growth_entry(records: list[Record], config: Config) -> dict[str, Any]:
    """A7.5b's report entry: a finding (``growth.finding``), no calibration, with its
    figure (drawn by ``figure``, into the report's ``figures`` folder)."""
    entry = growth.finding(records, config)
    entry.update(
        claim="A7.5b",
        title="How n* grows with d: one step and a few GD steps (the paper's remark O(d))",
        paper="The authors acknowledge that this bound is likely loose compared to empirical "
        "observations (which suggest O(d) scaling).",
        section="beyond the papers",
        calibration=None,
        figures=[f"figures/{growth.FIGURE}"],
    )
    return entry


def _rate(record: Record) -> str:
    return fmt_interval(record["rate"], record["low"], record["high"])
