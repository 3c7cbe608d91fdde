"""B5.3's verdict from the records: per PE mode and ``T'`` the mean loss relative to uniform
attention, judged on its uniform-relative parts, with B5.3b and B5.3c as its companions (SPEC
B5.3, Parts E and F)."""

from __future__ import annotations

from typing import Any

from ...metrics import calibration, stats
from ..base import Record
from ..select_common import fmt_mean, mean_estimate, seed_mean
from . import convergence as in_distribution
from . import corollary
from .calibration import calibrate_corollary, calibrate_in_distribution
from .config import Config
from .convergence import MIN_SEEDS
from .corollary import main_records

HALF = 0.5
"""Generalizing means ``<= 0.5 x`` uniform (stochastic, up to ``8T``); failing ``>= 0.5 x``."""
UP_TO = 8


CRITERION = (
    f"per PE mode and T', mean over seeds ± 2 s.e. relative to uniform attention: reproduced "
    f"when stochastic's upper end <= {HALF} x uniform at every T' <= {UP_TO}T and fixed PE's "
    f"lower end >= {HALF} x uniform at every T' > T; not reproduced when stochastic's lower end "
    f">= {HALF} x uniform at 2T, or its mean ratio to uniform lies inside fixed PE's interval at "
    f"every T' > T, or fixed PE's upper end < {HALF} x uniform at every T' > T; inconclusive "
    f"otherwise (or with fewer than {MIN_SEEDS} seeds per mode); the W = alpha I family at the "
    "trained alpha is reported, not judged (criterion version 3, SPEC Part F)"
)
CRITERION_COROLLARY = corollary.CRITERION_COROLLARY
"""B5.3c's criterion (``corollary``)."""

Outcome = tuple[str, str, str]
"""A verdict's outcome, its one-sentence reason and its summary."""


def summarize(records: list[Record]) -> dict[int, dict]:
    """Per ``T'``: each mode's and the family's mean over seeds (``seed_mean``), the family at
    the trained ``α`` (``at_train_alpha``), and uniform; the corollary's records left out."""
    records = main_records(records)
    out = {}
    for length in sorted({r["T"] for r in records}):
        here = [r for r in records if r["T"] == length]
        row: dict = {"uniform": here[0]["uniform"], "seeds": {}, "at_train_alpha": None}
        for kind in ("stochastic", "fixed", "family"):
            mine = [r for r in here if r["pe"] == kind]
            row["seeds"][kind] = len(mine)
            row[kind] = seed_mean([r["loss"] for r in mine]) if mine else None
            if kind == "family" and mine:
                row["at_train_alpha"] = seed_mean([r["at_train_alpha"] for r in mine])
        out[length] = row
    return out


def _ratio(rows: dict[int, dict], t: int, kind: str, end: str = "mean") -> float:
    """``kind``'s mean loss at ``T' = t`` (or an end of its interval) over uniform's."""
    return rows[t][kind][end] / rows[t]["uniform"]


def judge(rows: dict[int, dict], T: int) -> Outcome:
    """The outcome, its one-sentence reason and its summary (criterion in :class:`Config`)."""
    ood = [t for t in rows if t > T]
    decided = _too_few(rows, T, ood) or _refuted(rows, T, ood)
    if decided:
        return decided
    high = [t for t in rows if t <= UP_TO * T and _ratio(rows, t, "stochastic", "high") > HALF]
    fits = [t for t in ood if _ratio(rows, t, "fixed", "low") < HALF]
    if high or fits:
        return _undecided(rows, high, fits)
    top = max(_ratio(rows, t, "stochastic", "high") for t in rows if t <= UP_TO * T)
    bottom = min(_ratio(rows, t, "fixed", "low") for t in ood)
    return (
        stats.REPRODUCED,
        f"stochastic PE stays below {HALF}x uniform up to {UP_TO}T while fixed PE is at "
        f"least {HALF}x uniform at every T' > T (ends of their intervals)",
        stats.fitting(
            f"stochastic PE <= {top:.3g}x uniform to {UP_TO}T, fixed PE >= {bottom:.3g}x",
            f"stochastic <= {top:.3g}x uniform to {UP_TO}T, fixed >= {bottom:.3g}x",
        ),
    )


def _too_few(rows: dict[int, dict], T: int, ood: list[int]) -> Outcome | None:
    """Inconclusive with fewer than ``MIN_SEEDS`` seeds of a PE mode or no ``T' > T``."""
    counts = [rows[t]["seeds"][k] for t in rows for k in ("stochastic", "fixed")]
    fewest = min(counts, default=0)
    if ood and fewest >= MIN_SEEDS:
        return None
    return (
        stats.INCONCLUSIVE,
        f"needs both PE modes with at least {MIN_SEEDS} seeds and a length above T = {T}; "
        f"got {fewest} seeds and lengths {sorted(rows)}",
        f"needs {MIN_SEEDS} seeds per PE mode, got {fewest}"
        if ood
        else f"no length above T = {T} measured",
    )


def _refuted(rows: dict[int, dict], T: int, ood: list[int]) -> Outcome | None:
    """Not reproduced when stochastic PE fails at ``2T``, degrades like fixed PE, or fixed PE
    generalizes too; ``None`` otherwise."""
    if 2 * T in rows and _ratio(rows, 2 * T, "stochastic", "low") >= HALF:
        return (
            stats.NOT_REPRODUCED,
            f"stochastic PE's loss at 2T is at least {HALF}x uniform (lower end of its interval)",
            f"stochastic PE >= {_ratio(rows, 2 * T, 'stochastic', 'low'):.3g}x uniform at 2T "
            f"(>= {HALF})",
        )
    if all(
        _ratio(rows, t, "fixed", "low")
        <= _ratio(rows, t, "stochastic")
        <= _ratio(rows, t, "fixed", "high")
        for t in ood
    ):
        return (
            stats.NOT_REPRODUCED,
            "stochastic PE's loss relative to uniform lies inside fixed PE's interval at every "
            "T' > T: it degrades like fixed PE",
            "stochastic PE inside fixed PE's interval at every T' > T",
        )
    if all(_ratio(rows, t, "fixed", "high") < HALF for t in ood):
        worst = max(_ratio(rows, t, "fixed", "high") for t in ood)
        return (
            stats.NOT_REPRODUCED,
            f"fixed PE generalizes too: its loss is below {HALF}x uniform at every T' > T "
            "(upper end of its interval)",
            f"fixed PE <= {worst:.3g}x uniform at every T' > T (< {HALF})",
        )
    return None


def _undecided(rows: dict[int, dict], high: list[int], fits: list[int]) -> Outcome:
    """Inconclusive: stochastic PE's interval reaches ``HALF x`` uniform at the lengths ``high``
    or fixed PE's reaches below it at ``fits``; what would decide it."""
    gaps = []
    if high:
        gaps.append(f"stochastic PE's interval reaches {HALF}x uniform at T' = {high}")
    if fits:
        gaps.append(f"fixed PE's interval reaches below {HALF}x uniform at T' = {fits}")
    settled = [t for t in high if _ratio(rows, t, "stochastic", "low") > HALF]
    need = (
        f"stochastic PE lies entirely above {HALF}x uniform at T' = {settled}: a larger m_p "
        "would decide, the width the paper's corollary asks growing with ln T'"
        if settled
        else "more seeds would decide"
    )
    stochastic = f"stochastic PE's interval reaches {HALF}x uniform at T'={high[0]}" if high else ""
    fixed = f"fixed PE's interval reaches below {HALF}x uniform at T'={fits[0]}" if fits else ""
    if settled:
        summary = f"stochastic PE above {HALF}x uniform at T'={settled[0]}: larger m_p"
    elif high and fits:
        both = f"intervals reach {HALF}x uniform: stochastic T'={high[0]}, fixed T'={fits[0]}"
        summary = stats.fitting(both, stochastic)
    else:
        summary = stochastic or fixed
    return stats.INCONCLUSIVE, "; ".join(gaps) + f" ({need})", summary


def _length_report(t: int, row: dict) -> tuple[list[dict], str]:
    """The estimates and the measured text of one ``T'``."""
    u = row["uniform"]
    estimates, shown = [], [f"T'={t} (uniform {u:.3g})"]
    for kind in ("stochastic", "fixed", "family"):
        if row[kind] is None:
            continue
        name = "family's best" if kind == "family" else f"{kind} PE"
        estimates += [
            mean_estimate(f"{name} loss (T'={t})", row[kind]),
            mean_estimate(f"{name} / uniform (T'={t})", row[kind], u),
        ]
        shown.append(f"{name} {fmt_mean(row[kind])} = {fmt_mean(row[kind], u)} x uniform")
    at = row["at_train_alpha"]
    if at is not None:
        estimates.append(mean_estimate(f"family at the training alpha (T'={t})", at))
        shown.append(f"family at the training alpha {fmt_mean(at)}")
    if row["stochastic"] is not None and at is not None:
        estimates.append(
            mean_estimate(
                f"stochastic / family at the training alpha (T'={t})", row["stochastic"], at["mean"]
            )
        )
        shown.append(
            f"stochastic / family at the training alpha {fmt_mean(row['stochastic'], at['mean'])}"
        )
    if row["stochastic"] is not None and row["family"] is not None:
        best = row["family"]["mean"]
        estimates.append(
            mean_estimate(f"stochastic / family's best (T'={t})", row["stochastic"], best)
        )
        shown.append(
            f"stochastic / family's best re-tuned at T' {fmt_mean(row['stochastic'], best)}"
        )
    return estimates, ", ".join(shown)


def verdict(records: list[Record], config: Config) -> dict:
    """B5.3 with B5.3b (and B5.3c when ``corollary_widths`` is set) as its companions. On
    simulated records (``calibration.in_simulation``: a calibration run, which reads only the
    verdict) the companions are left out; on a real run each carries its pre-registered error rates
    (``calibrate_in_distribution``, ``calibrate_corollary``)."""
    rows = summarize(records)
    outcome, reason, summary = judge(rows, config.T)
    estimates, parts = [], []
    for t, row in rows.items():
        found, text = _length_report(t, row)
        estimates += found
        parts.append(text)
    extra: dict[str, Any] = {}
    if not calibration.in_simulation():
        extra["companions"] = [
            _calibrated(in_distribution.verdict, calibrate_in_distribution, records, config)
        ]
        if config.corollary_widths:
            extra["companions"].append(
                _calibrated(corollary.verdict, calibrate_corollary, records, config)
            )
    measured = "; ".join(parts)
    return stats.claim(outcome, reason, measured, CRITERION, estimates, summary=summary, **extra)


def _calibrated(judge_entry: Any, rates: Any, records: list[Record], config: Config) -> dict:
    """A companion's entry ``judge_entry(records, config)`` with its error rates ``rates(records,
    config)`` while they are pre-registered (``calibration.companion_rates``; none without
    estimates)."""
    entry = judge_entry(records, config)
    entry["calibration"] = calibration.companion_rates(
        lambda: rates(records, config) if entry["estimates"] else None
    )
    return entry
