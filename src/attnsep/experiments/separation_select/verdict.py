"""Part C's check: the FCN's minimum width found from the floor against SPEC B4's closed form,
affine in ``T``; the transformer's ``d + m_p*`` and the width ratio reported beside (SPEC Parts
C, F; criterion: ``CRITERION``)."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from ...metrics import stats
from ...metrics.laws import POWER
from ..base import Record
from ..select_width.verdict import rival_min_alpha
from .config import Config

CRITERION = (
    "a check: confirmed when at every (T, q) the FCN's minimum first-layer width found by "
    "bisection on the floor's eigenvalue form equals SPEC B4's bound solved for w, "
    "ceil(Td - target d (T - 1)), and per q (>= 3 T's) the widths are affine in T within the "
    "rounding; check failed otherwise (a bug in attnsep); the transformer's width d + m_p* and "
    "the ratio FCN / transformer reported with their intervals, its growth judged in B5.2 "
    "(criterion version 3)"
)


def fcn_growth(Ts: list[int], widths: list[int]) -> dict[str, Any]:
    """The bound's growth: its power exponent (exact, no interval) and whether it is affine in
    ``T`` up to the rounding to an integer (least-squares line, every residual ``<= 1``)."""
    x, w = np.asarray(Ts, dtype=float), np.asarray(widths, dtype=float)
    slope, intercept = np.polyfit(x, w, 1) if len(x) >= 2 else (math.nan, math.nan)
    affine = len(x) >= 3 and bool(np.all(np.abs(w - (slope * x + intercept)) <= 1.0))
    alpha = POWER.fit(Ts, widths)[1] if len(x) >= 2 else math.nan
    return {"alpha": alpha, "slope": float(slope), "affine": affine}


def analyse(records: list[Record], config: Config) -> dict[int, dict[str, Any]]:
    """Per ``q``: ``threshold_laws.law_series`` of ``d + m_p*`` (B5.2's rival per ``q``),
    the FCN's minimum widths and their growth."""
    from ...train.threshold_laws import law_series

    out = {}
    for q in sorted({r["q"] for r in records}):
        rows = sorted((r for r in records if r["q"] == q), key=lambda r: r["T"])
        s = law_series(rows, offset=config.d, rival_min_alpha=rival_min_alpha(q))
        s["fcn"] = [r["fcn_width"] for r in rows]
        s["fcn_growth"] = fcn_growth([r["T"] for r in rows], s["fcn"])
        out[q] = s
    return out


def ratio_estimates(q: int, s: dict[str, Any]) -> list[dict]:
    """Per ``T`` the width ratio FCN / transformer, its interval from the transformer width's
    (the FCN width is exact)."""
    return [
        stats.estimate(f"FCN / transformer width (T={int(T)}, q={q})", f / w, f / hi, f / lo)
        for T, w, lo, hi, f in zip(s["T"], s["m"], s["low"], s["high"], s["fcn"], strict=True)
    ]


def closed_form_width(T: int, d: int, target: float) -> int:
    """SPEC B4's bound ``(Td − w)(T − q) / (qT(T − 1)) <= target · d (T − q) / (qT)`` solved for
    the smallest integer ``w``: ``⌈Td − target·d (T − 1)⌉`` (at least ``d``, where the bound
    holds as stated; ``q`` cancels), in exact arithmetic as ``fcn_min_width``."""
    return math.ceil(Fraction(T * d) - Fraction(target) * d * (T - 1))


def check_fcn(series: dict[int, dict[str, Any]], config: Config) -> list[str]:
    """What contradicts the theorem, per ``q``: widths not affine in ``T``, then each width
    unlike the closed form (empty when the check holds)."""
    problems = []
    for q, s in series.items():
        if len(s["T"]) >= 3 and not s["fcn_growth"]["affine"]:
            problems.append(f"at q={q} the widths {s['fcn']} are not affine in T")
        for T, width in zip(s["T"], s["fcn"], strict=True):
            closed = closed_form_width(int(T), config.d, config.target)
            if width != closed:
                problems.append(
                    f"at T={int(T)}, q={q} the bisection gives {width}, the bound {closed}"
                )
    return problems


def verdict(records: list[Record], config: Config) -> dict:
    series = analyse(records, config)
    estimates, parts = [], []
    for q, s in series.items():
        estimates += [
            stats.estimate(f"d + m_p*(T={int(T)}, q={q})", v, lo, hi)
            for T, v, lo, hi in zip(s["T"], s["m"], s["low"], s["high"], strict=True)
        ]
        estimates += ratio_estimates(q, s)
        g = s["fcn_growth"]
        parts.append(
            f"q={q}: FCN minimum widths {s['fcn']} at T = {[int(T) for T in s['T']]} (exact; "
            f"affine in T: {g['affine']}, {g['slope']:.6g} per T, power exponent {g['alpha']:.3g})"
        )
    measured = f"d={config.d}: " + "; ".join(stats.fmt_estimate(e) for e in estimates)
    measured += "; " + "; ".join(parts)
    criterion = CRITERION + f" (target {config.target:g}, {config.seeds} seeds per probe)"
    problems = check_fcn(series, config) if series else ["no (T, q) was computed"]
    if problems:
        reason = (
            f"the FCN's minimum width disagrees with the theorem ({len(problems)} problems): "
            + "; ".join(problems[:3])
            + ". Both sides compute one proven bound (SPEC B4), so this is a bug in attnsep "
            "(exact.selection_bounds or separation_select), not a verdict on the paper"
        )
        summary = stats.fitting(
            f"FCN width disagrees with the theorem ({len(problems)} problems): a bug",
            f"FCN width disagrees with the theorem ({len(problems)} problems)",
        )
        return stats.claim(
            stats.CHECK_FAILED, reason, measured, criterion, estimates, summary=summary
        )
    slopes = ", ".join(f"q={q}: {s['fcn_growth']['slope']:.6g}" for q, s in series.items())
    reason = (
        f"at every (T, q) the FCN's minimum first-layer width found from the floor equals "
        f"ceil(Td - {config.target:g} d (T - 1)), affine in T ({slopes} per T at d = {config.d}); "
        "the transformer's width d + m_p* and the ratio are reported, its growth law is judged "
        "in B5.2"
    )
    summary = stats.fitting(
        f"FCN width = ceil(Td - {config.target:g} d (T - 1)) at every (T, q)",
        "FCN width = the theorem's bound at every (T, q)",
    )
    return stats.claim(stats.CONFIRMED, reason, measured, criterion, estimates, summary=summary)
