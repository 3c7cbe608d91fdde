"""A7.6b, the FCN's side of A7.6: a check (SPEC Part F) that its parameters grow at least
linearly in ``d``, as its dense first layer makes them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...metrics import stats
from .analysis import _estimates, _num, _table

if TYPE_CHECKING:
    from ..xor_thresholds import XorFrontier

FCN_MIN_EXPONENT = 0.8
"""The FCN check (A7.6b) is confirmed when its parameter exponent's lower bound is at least
this."""
CHECK = "A7.6b"
"""The FCN side's entry: a check (SPEC Part F), a companion of A7.6."""
CHECK_CRITERION = (
    f"confirmed when the FCN's parameter exponent (params = width·(d+2)+1 = c d^alpha over its "
    f"sizes, at least 2) has a bootstrap 95% lower bound >= {FCN_MIN_EXPONENT}; check failed "
    f"when its upper bound is below {FCN_MIN_EXPONENT} (the dense first layer has at least d+3 "
    "parameters at any width: a failure means a bug in attnsep); not checked when the interval "
    "straddles it (too narrow a range of d)"
)


def _first_layer(fcn: XorFrontier) -> str:
    rows = [p for p in fcn.points if p["width_star"] is not None]
    if not rows:
        return "the FCN never reached the target"
    lows = [p["width_star_low"] for p in rows]
    highs = [p["width_star_high"] for p in rows]
    high = "inf" if None in highs else f"{max(highs):g}"
    return (
        f"the FCN's growth comes from its dense first layer: its width* stays within "
        f"{min(w for w in lows if w is not None):g}–{high} (intervals) over d={rows[0]['d']}–"
        f"{rows[-1]['d']} while width·(d+2)+1 grows from {rows[0]['params']:g} to "
        f"{rows[-1]['params']:g}"
    )


def fcn_check(a: dict[str, Any]) -> dict[str, Any] | None:
    """A7.6b, the FCN's side: a check (``CHECK_CRITERION``); ``None`` below two FCN sizes."""
    f = a["f"]
    if len(f.points) < 2:
        return None
    value, low, high = a["fcn_alpha"]
    exponent = stats.fmt_interval(_num(value), low, high)
    if low >= FCN_MIN_EXPONENT:
        outcome = stats.CONFIRMED
        reason = (
            f"the FCN's parameters grow at least like d^{low:.2f}: its dense first layer "
            "(width·(d+2)+1 >= d+3 parameters at any width)"
        )
        summary = f"the FCN's parameters grow at least like d^{low:.2f} (>= {FCN_MIN_EXPONENT})"
    elif high >= FCN_MIN_EXPONENT:
        outcome = stats.NOT_CHECKED
        reason = (
            f"the FCN's parameter exponent {exponent} straddles {FCN_MIN_EXPONENT}: the FCN "
            "sizes run span too little of d to check it (a wider range of fcn_d_values would)"
        )
        summary = stats.fitting(
            f"FCN parameter exponent {exponent} straddles {FCN_MIN_EXPONENT}",
            f"FCN parameter exponent straddles {FCN_MIN_EXPONENT}: too little of d",
        )
    else:
        outcome = stats.CHECK_FAILED
        reason = (
            f"the FCN's parameter exponent's upper bound {high:.2f} is below "
            f"{FCN_MIN_EXPONENT}, which its dense first layer (width·(d+2)+1 >= d+3 "
            "parameters) rules out: a failed check means a bug in attnsep (the search, the "
            "parameter count or the bootstrap)"
        )
        summary = stats.fitting(
            f"FCN exponent's upper bound {high:.2f} < {FCN_MIN_EXPONENT}: a bug in attnsep",
            f"FCN exponent below {FCN_MIN_EXPONENT}: a bug in attnsep",
        )
    entry = stats.claim(
        outcome,
        reason,
        f"FCN (threshold width*, params width·(d+2)+1): {_table(f)}; exponent of params vs d "
        f"{exponent}; {_first_layer(f)}.",
        CHECK_CRITERION,
        _estimates(f) + [stats.estimate("fcn exponent", value, low, high)],
        summary=summary,
    )
    entry.update(
        claim=CHECK,
        title="FFNNs' parameters grow with their dense first layer (structural)",
        paper="This linear dependency arises from the dense, fully connected first layer of "
        "FFNNs, which couples the weight dimension to the input size.",
        section="the papers' claims",
        calibration=None,
    )
    return entry
