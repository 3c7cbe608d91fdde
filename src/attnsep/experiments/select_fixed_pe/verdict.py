"""B5.6's verdict (SPEC Part G, item B5.6; the criterion is stated in ``config.Config``'s
docstring). Records: per (``pe``, ``seed``, ``T``) a ``loss`` and its ``uniform``, with
``train_T``; the ``T = train_T`` records may carry ``curve_steps`` and ``curve`` (the
in-distribution training curve)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...metrics import stats
from ..base import Record
from ..select_common import fmt_mean, mean_estimate, seed_mean

FIT_BAR = 0.1
"""Fitting in distribution: fixed PE's loss at ``T`` at most ``0.1 x`` uniform (upper end)."""
OOD_BAR = 0.5
"""Failing out of distribution: at least ``0.5 x`` uniform (lower end) at every ``T' >= 2T``;
generalizing: below it (upper end) at ``2T``; not fitting: at least it at ``T`` (lower end)."""
MIN_SEEDS = 4
PES = ("fixed", "stochastic")
CRITERION = (
    f"per PE mode and T', the mean over seeds of the evaluation loss ± 2 s.e., relative to "
    f"uniform attention: reproduced when fixed PE's loss at T has upper end <= {FIT_BAR} x "
    f"uniform, its loss at every T' >= 2T has lower end >= {OOD_BAR} x uniform, and at 4T "
    f"stochastic PE's interval lies entirely below fixed PE's; not reproduced when fixed PE's "
    f"loss at 2T has upper end < {OOD_BAR} x uniform (it generalizes), or its loss at T has "
    f"lower end >= {OOD_BAR} x uniform (it does not fit), or at 4T stochastic PE's interval "
    f"lies entirely above fixed PE's; inconclusive otherwise, or with fewer than {MIN_SEEDS} "
    "seeds per mode or without T, 2T and 4T (criterion version 1, SPEC Part G)"
)


def summarize(records: list[Record]) -> dict[int, dict[str, Any]]:
    """Per ``T'``: uniform's loss, each mode's :func:`seed_mean` (``None`` without seeds) and
    its seed count."""
    out: dict[int, dict[str, Any]] = {}
    for length in sorted({r["T"] for r in records}):
        here = [r for r in records if r["T"] == length]
        row: dict[str, Any] = {"uniform": here[0]["uniform"], "seeds": {}}
        for pe in PES:
            losses = [r["loss"] for r in here if r["pe"] == pe]
            row["seeds"][pe] = len(losses)
            row[pe] = seed_mean(losses) if losses else None
        out[length] = row
    return out


def relative(summary: dict[str, float], scale: float) -> dict[str, float]:
    """A :func:`seed_mean` summary divided by ``scale``."""
    return {k: v / scale for k, v in summary.items()}


def curve_summary(records: list[Record], pe: str) -> list[tuple[int, dict[str, float]]]:
    """Per checkpoint step, the mean over seeds of ``pe``'s training loss / uniform at ``T``
    (empty without curves, e.g. on simulated records)."""
    runs = [r for r in records if r["pe"] == pe and "curve" in r]
    if not runs:
        return []
    steps = runs[0]["curve_steps"]
    ratios = np.array([np.asarray(r["curve"]) / r["uniform"] for r in runs])
    return [(int(s), seed_mean(ratios[:, i].tolist())) for i, s in enumerate(steps)]


def _ratio(rows: dict[int, dict[str, Any]], t: int, pe: str, end: str = "mean") -> float:
    return float(rows[t][pe][end] / rows[t]["uniform"])


def _missing(rows: dict[int, dict[str, Any]], T: int) -> tuple[str, str] | None:
    """Why the rows cannot be judged, in full and in short, or ``None``."""
    needed = [T, 2 * T, 4 * T]
    absent = [t for t in needed if t not in rows]
    if absent:
        return (
            f"needs T' = T, 2T and 4T (T = {T}); {absent} not measured",
            f"T' = {absent[0]} not measured (needs T, 2T and 4T)",
        )
    fewest = min(rows[t]["seeds"][pe] for t in needed for pe in PES)
    if fewest < MIN_SEEDS:
        return (
            f"needs both PE modes with at least {MIN_SEEDS} seeds; got {fewest}",
            f"needs {MIN_SEEDS} seeds per PE mode, got {fewest}",
        )
    return None


def _means(rows: dict[int, dict[str, Any]], T: int) -> tuple[dict[str, str], dict[str, str]]:
    """The intervals the reason quotes (fixed PE's at ``T`` and ``2T``, each mode's at ``4T``,
    relative to uniform) and their means alone, for the summary."""
    full = {
        "fit": fmt_mean(rows[T]["fixed"], rows[T]["uniform"]),
        "at2": fmt_mean(rows[2 * T]["fixed"], rows[2 * T]["uniform"]),
        **{pe: fmt_mean(rows[4 * T][pe], rows[4 * T]["uniform"]) for pe in PES},
    }
    short = {
        "fit": f"{_ratio(rows, T, 'fixed'):.3g}",
        "at2": f"{_ratio(rows, 2 * T, 'fixed'):.3g}",
        **{pe: f"{_ratio(rows, 4 * T, pe):.3g}" for pe in PES},
    }
    return full, short


def _contradicted(
    rows: dict[int, dict[str, Any]], T: int, full: dict[str, str], short: dict[str, str]
) -> tuple[str, str, str] | None:
    """**not reproduced** with its reason and summary when fixed PE generalizes at ``2T``, does
    not fit at ``T`` or extrapolates better than stochastic PE at ``4T``; else ``None``."""
    if _ratio(rows, 2 * T, "fixed", "high") < OOD_BAR:
        return (
            stats.NOT_REPRODUCED,
            f"fixed PE generalizes: its loss at 2T is {full['at2']} x uniform",
            stats.fitting(
                f"fixed PE generalizes: {full['at2']} x uniform at 2T",
                f"fixed PE generalizes: {short['at2']} x uniform at 2T",
            ),
        )
    if _ratio(rows, T, "fixed", "low") >= OOD_BAR:
        return (
            stats.NOT_REPRODUCED,
            f"fixed PE does not fit: its loss at T is {full['fit']} x uniform",
            stats.fitting(
                f"fixed PE does not fit: {full['fit']} x uniform at T",
                f"fixed PE does not fit: {short['fit']} x uniform at T",
            ),
        )
    if _ratio(rows, 4 * T, "stochastic", "low") > _ratio(rows, 4 * T, "fixed", "high"):
        return (
            stats.NOT_REPRODUCED,
            f"fixed PE extrapolates better than stochastic PE at 4T: {full['fixed']} against "
            f"{full['stochastic']} x uniform",
            stats.fitting(
                f"fixed PE beats stochastic at 4T: {short['fixed']} vs {short['stochastic']} x "
                "uniform",
                f"fixed PE beats stochastic at 4T: {short['fixed']} x uniform",
            ),
        )
    return None


def _gaps(
    rows: dict[int, dict[str, Any]], T: int, full: dict[str, str], short: dict[str, str]
) -> tuple[list[str], list[str]]:
    """What keeps the rows from **reproduced** (an interval across a bar), in full and in
    short: fixed PE's fit at ``T``, its loss at every ``T' >= 2T``, the two modes at ``4T``."""
    gaps, texts = [], []
    if _ratio(rows, T, "fixed", "high") > FIT_BAR:
        gaps.append(f"fixed PE's loss at T, {full['fit']} x uniform, reaches above {FIT_BAR}")
        texts.append(f"fixed PE at T {short['fit']} x uniform, upper end > {FIT_BAR}")
    low = [t for t in rows if t >= 2 * T and _ratio(rows, t, "fixed", "low") < OOD_BAR]
    if low:
        gaps.append(f"fixed PE's interval reaches below {OOD_BAR} x uniform at T' = {low}")
        texts.append(f"fixed PE's interval reaches below {OOD_BAR} x uniform at T'={low[0]}")
    if _ratio(rows, 4 * T, "stochastic", "high") >= _ratio(rows, 4 * T, "fixed", "low"):
        gaps.append(
            f"at 4T stochastic PE ({full['stochastic']}) and fixed PE ({full['fixed']} x "
            "uniform) overlap"
        )
        texts.append(f"at 4T stochastic {short['stochastic']} and fixed {short['fixed']} overlap")
    return gaps, texts


def judge(rows: dict[int, dict[str, Any]], T: int) -> tuple[str, str, str]:
    """The outcome, its reason and its summary (criterion in ``config.Config``)."""
    missing = _missing(rows, T)
    if missing:
        return stats.INCONCLUSIVE, *missing
    full, short = _means(rows, T)
    contradicted = _contradicted(rows, T, full, short)
    if contradicted:
        return contradicted
    gaps, texts = _gaps(rows, T, full, short)
    if not gaps:
        return (
            stats.REPRODUCED,
            f"fixed PE fits at T ({full['fit']} x uniform) and stays at least {OOD_BAR} x uniform "
            f"at every T' >= 2T ({full['at2']} at 2T), while stochastic PE is below it at 4T "
            f"({full['stochastic']} against {full['fixed']})",
            stats.fitting(
                f"fixed PE fits at T ({short['fit']} x uniform), fails at 2T ({short['at2']})",
                f"fixed PE fits at T, fails at 2T ({short['at2']} x uniform)",
            ),
        )
    need = (
        "more steps (the fit) or more seeds would decide"
        if _ratio(rows, T, "fixed", "high") > FIT_BAR
        else "more seeds would decide"
    )
    return (
        stats.INCONCLUSIVE,
        "; ".join(gaps) + f" ({need})",
        stats.fitting("; ".join(texts), texts[0]),
    )


def estimates_of(rows: dict[int, dict[str, Any]], records: list[Record], T: int, q: int) -> list:
    """Each mode's loss / uniform per ``T'``, fixed − stochastic at ``T'`` (``± 2`` combined
    s.e.), the blind fixed-PE limit (exact) and the in-distribution curves."""
    from ...exact.blind_pe import blind_ratio

    out = []
    for t, row in rows.items():
        u, tag = row["uniform"], f"T'={t} = {t // T}T" if t % T == 0 else f"T'={t}"
        out += [
            mean_estimate(f"{pe} PE loss / uniform ({tag})", row[pe], u)
            for pe in PES
            if row[pe] is not None
        ]
        if row["fixed"] is not None and row["stochastic"] is not None:
            gap = (row["fixed"]["mean"] - row["stochastic"]["mean"]) / u
            se = float(np.hypot(row["fixed"]["se"], row["stochastic"]["se"])) / u
            out.append(stats.estimate(f"fixed − stochastic / uniform ({tag})", gap, *_pm(gap, se)))
        if t >= T:
            b = blind_ratio(T, t, q)
            out.append(stats.estimate(f"blind fixed-PE limit / uniform ({tag}, exact)", b, b, b))
    for pe in PES:
        out += [
            mean_estimate(f"{pe} PE training loss / uniform at T (step {s})", v)
            for s, v in curve_summary(records, pe)
        ]
    return out


def _pm(value: float, se: float) -> tuple[float, float]:
    return value - 2 * se, value + 2 * se


def verdict(records: list[Record], config: Any) -> dict:
    rows = summarize(records)
    outcome, reason, summary = judge(rows, config.T)
    estimates = estimates_of(rows, records, config.T, config.q)
    shown = []
    for t, row in rows.items():
        parts = [f"{pe} {fmt_mean(row[pe], row['uniform'])}" for pe in PES if row[pe] is not None]
        shown.append(f"T'={t}: " + ", ".join(parts) + " x uniform")
    measured = (
        f"d={config.d}, T={config.T}, q={config.q}, m_p={config.pe_dim}, {config.steps} steps; "
        + "; ".join(shown)
    )
    return stats.claim(outcome, reason, measured, CRITERION, estimates, summary=summary)
