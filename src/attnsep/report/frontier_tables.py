"""The ``attnsep frontier`` tables as text (SPEC A7.6, Part C): rows of strings built from the
experiments' plain-JSON summaries (``xor_thresholds.summary``,
``separation_select.frontier.summary``)."""

from __future__ import annotations

import math
from typing import Any

from ..metrics.stats import fmt_estimate, fmt_interval
from .text_table import TextTable

INTERVALS = "95% bootstrap intervals over the replicas"
HELD_OUT = {
    "paper": "only a + b (ln T)^p predicts them",
    "rival": "only c T^alpha predicts them",
    "both": "both laws predict them",
    "neither": "neither law predicts them",
    None: "not tested (needs 4 values of T)",
}
"""The held-out comparison's decision (SPEC Part D, E), in words."""


def span(point: dict[str, Any], key: str) -> str:
    """``value [low, high]`` of ``point[key]`` and its interval ``key_low``, ``key_high``; a
    missing upper bound reads ``inf`` (the threshold was not reached in some draws)."""
    high = point[f"{key}_high"]
    return fmt_interval(point[key], point[f"{key}_low"], math.inf if high is None else high, 6)


def rate(point: dict[str, Any]) -> str:
    """The success rate at the threshold, two decimals; ``-`` when none was reached."""
    return "-" if point["success_rate"] is None else f"{point['success_rate']:.2f}"


def xor_table(summary: dict[str, Any]) -> TextTable:
    """Sparse XOR: per ``d`` each model's threshold and parameters with their intervals and its
    success rate (``-`` for a model not run at that ``d``); the exponents of params vs ``d``."""
    by_d = {model: {p["d"]: p for p in summary[model]} for model in ("transformer", "fcn")}
    rows = []
    for d in sorted({*by_d["transformer"], *by_d["fcn"]}):
        row = [str(d)]
        for model, knob in (("transformer", "m_star"), ("fcn", "width_star")):
            p = by_d[model].get(d)
            row += ["-"] * 3 if p is None else [span(p, knob), span(p, "params"), rate(p)]
        rows.append(tuple(row))
    fit = summary["fit"]
    note = (
        f"exponent of params vs d: transformer {fmt_estimate(fit['transformer']['exponent'])}, "
        f"FCN {fmt_estimate(fit['fcn']['exponent'])}"
    )
    points = [p for model in ("transformer", "fcn") for p in summary[model]]
    return TextTable(
        f"parameters needed vs d ({INTERVALS})",
        ("d", "transformer m*", "params", "success", "FCN width*", "params", "success"),
        tuple(rows),
        (note, *open_notes(points, ("m_star", "width_star", "params"))),
    )


def open_notes(points: list[dict[str, Any]], knobs: tuple[str, ...]) -> tuple[str, ...]:
    """The footnotes an open interval or a missing value needs: why it is there."""
    notes = []
    if any(p.get(f"{k}_high", 0) is None for p in points for k in knobs):
        notes.append(
            "inf: in some bootstrap draws the threshold was not reached within the largest size "
            "searched, so the interval has no upper end; more seeds or a larger search closes it"
        )
    if any(k in p and p[k] is None for p in points for k in knobs):
        notes.append("n/a: the threshold was not reached at this size in the pooled seeds")
    return tuple(notes)


def select_table(summary: dict[str, Any]) -> TextTable:
    """Token selection: per ``(T, q)`` the transformer's ``m_p*``, width ``d + m_p*`` and
    parameters ``m_p*^2`` with their intervals, the FCN's proven minimum width and parameters;
    per ``q`` the fitted laws of ``d + m_p*``, the held-out decision and the FCN bound's growth."""
    rows = tuple(
        (
            str(t["T"]),
            str(t["q"]),
            span(t, "m_star"),
            span(t, "width"),
            span(t, "params"),
            str(f["width"]),
            str(f["params"]),
        )
        for t, f in zip(summary["transformer"], summary["fcn"], strict=True)
    )
    notes = []
    for fit in summary["fit"]:
        t, f = fit["transformer"], fit["fcn"]
        slope = "n/a" if f["slope"] is None else f"{f['slope']:.3g}"
        exponent = "n/a" if f["exponent"] is None else f"{f['exponent']:.3g}"
        notes.append(
            f"q={fit['q']}: transformer width d + m_p*: power of ln T "
            f"{fmt_estimate(t['polylog_exponent'])}, exponent of T {fmt_estimate(t['exponent'])}; "
            f"larger T's: {HELD_OUT[t['held_out']]}. FCN minimum width: {slope} per T, "
            f"exponent {exponent} (exact)"
        )
    notes += open_notes(summary["transformer"], ("m_star", "width", "params"))
    if any(fit["fcn"]["slope"] is None for fit in summary["fit"]):
        notes.append("FCN n/a: a fit needs at least two T per q")
    return TextTable(
        f"width and parameters needed vs T at d = {summary['d']}, loss <= "
        f"{summary['target']:g} x uniform ({INTERVALS}; FCN: proven minimum, SPEC B4)",
        ("T", "q", "m_p*", "width d + m_p*", "params m_p*²", "FCN width", "FCN params"),
        rows,
        tuple(notes),
    )
