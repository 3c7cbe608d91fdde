"""The growth rules' outcome in words (SPEC Part F): the clauses A7.2's and A7.6's claims print
about ``xor_thresholds.growth_test`` (a rule's estimate, both rules' numbers, why they decided)."""

from __future__ import annotations

import math
from typing import Any

from ..metrics import growth, stats
from ..metrics.growth import UNREACHED

SIDES = {"paper": "polylog", "rival": "the power law", "neither": "neither law"}
"""Each side of a growth rule, as a reason names it."""


def fmt_rule(e: dict[str, Any] | None) -> str:
    """A growth rule's estimate as ``value [low, high]`` (a missing end: ``-inf`` / ``inf``)."""
    if e is None:
        return "n/a"
    low = -math.inf if e["low"] is None and e["value"] is not None else e["low"]
    high = math.inf if e["high"] is None and e["value"] is not None else e["high"]
    return stats.fmt_interval(e["value"], low, high, 2)


def growth_text(g: dict[str, Any]) -> str:
    """The two rules' numbers in one clause (a claim's ``measured``); empty when not run."""
    if "curvature" not in g:
        return ""
    c, h = g["curvature"], g["held_out"]
    return (
        f"{stats.fmt_estimate(c['smaller'])}, {stats.fmt_estimate(c['larger'])}, "
        f"{stats.fmt_estimate(c['change'])} -> {c['decided']}; held-out (fit d <= "
        f"{int(max(h['fitted_on']))}): {stats.fmt_estimate(h['paper'])}, "
        f"{stats.fmt_estimate(h['rival'])}, {stats.fmt_estimate(h['difference'])} -> {g['side']}"
    )


def growth_reason(g: dict[str, Any], sizes: int, rival_min: float) -> str:
    """One clause: what the growth rules found (for a claim's reason)."""
    if g["decided"] is None:
        return f"the growth rules need at least {growth.MIN_SIZES} values of d, got {sizes}"
    if g["decided"] == UNREACHED:
        return "a threshold was not reached within the probes"
    c, h = g["curvature"], g["held_out"]
    if g["decided"] == "paper":
        falls = c["change"]["high"] is not None and c["change"]["high"] < 0
        bend = (
            f"falls from {fmt_rule(c['smaller'])} on the smaller d's to {fmt_rule(c['larger'])} "
            "on the larger (interval-separated)"
            if falls
            else f"is {fmt_rule(c['larger'])} on the larger d's, below any power >= {rival_min:g}"
        )
        return (
            f"the local log-log exponent {bend}, and the polylog law fitted on the smaller d's "
            f"predicts the larger ones better than the power law (held-out error "
            f"{fmt_rule(h['paper'])} against {fmt_rule(h['rival'])})"
        )
    return (
        f"the curvature test sides with {SIDES[c['decided']]} (local exponent "
        f"{fmt_rule(c['smaller'])} on the smaller d's, {fmt_rule(c['larger'])} on the larger), "
        f"the held-out test with {SIDES[g['side']]} (rival's minus paper's error "
        f"{fmt_rule(h['difference'])})"
    )
