"""B5.3d's finding from the records: per test length each mode's loss relative to uniform, the
family at the trained ``α`` and the ratios, with their intervals (SPEC B5.3; Part G, item B5.3d)."""

from __future__ import annotations

from typing import Any

from ...metrics import stats
from ..base import Record
from ..select_common import fmt_mean, mean_estimate, seed_mean
from .config import PES, Config

RULE = (
    "B5.3d, a finding (no verdict): train on lengths uniform in [shortest, T] (T = 40, the "
    "randomized-PE protocol of Ruoss et al. 2023), test at T' up to 500; per PE mode and T', the "
    "mean over seeds of the loss exact over the tokens on eval_size fixed sequences, relative to "
    "uniform attention, ± 2 s.e.; beside stochastic PE the W = alpha I family at the trained "
    "alpha (tr W_pp / m_p) and stochastic / family per seed, ± 2 s.e."
)


def summarize(records: list[Record]) -> dict[int, dict[str, Any]]:
    """Per test length: uniform's loss, each mode's :func:`seed_mean` (``None`` without seeds),
    the family at the trained ``α`` and the per-seed ratios stochastic / family and fixed /
    stochastic (the two modes' runs paired by seed)."""
    out: dict[int, dict[str, Any]] = {}
    for t in sorted({r["T"] for r in records}):
        here = [r for r in records if r["T"] == t]
        by = {pe: [r for r in here if r["pe"] == pe] for pe in PES}
        row: dict[str, Any] = {"uniform": here[0]["uniform"]}
        for pe in PES:
            row[pe] = seed_mean([r["loss"] for r in by[pe]]) if by[pe] else None
        stochastic = by["stochastic"]
        row["family"] = seed_mean([r["family"] for r in stochastic]) if stochastic else None
        row["over_family"] = (
            seed_mean([r["loss"] / r["family"] for r in stochastic]) if stochastic else None
        )
        paired = {r["seed"]: r["loss"] for r in stochastic}
        ratios = [r["loss"] / paired[r["seed"]] for r in by["fixed"] if r["seed"] in paired]
        row["fixed_over_stochastic"] = seed_mean(ratios) if ratios else None
        out[t] = row
    return out


def _estimates(rows: dict[int, dict[str, Any]], records: list[Record]) -> list[dict]:
    out = []
    for t, row in rows.items():
        u = row["uniform"]
        for pe in PES:
            if row[pe] is not None:
                out.append(mean_estimate(f"{pe} PE loss / uniform (T'={t})", row[pe], u))
        if row["family"] is not None:
            out.append(
                mean_estimate(f"family at the trained alpha / uniform (T'={t})", row["family"], u)
            )
            out.append(
                mean_estimate(
                    f"stochastic / family at the trained alpha (T'={t})", row["over_family"]
                )
            )
        if row["fixed_over_stochastic"] is not None:
            out.append(mean_estimate(f"fixed / stochastic (T'={t})", row["fixed_over_stochastic"]))
    for key, name in (("alpha", "trained alpha"), ("cos", "cos(W, W*)")):
        first = min(rows, default=0)  # one value per run: its record at the first length
        values = [r[key] for r in records if r["pe"] == "stochastic" and r["T"] == first]
        if values:
            out.append(mean_estimate(f"stochastic PE {name}", seed_mean(values)))
    return out


def verdict(records: list[Record], config: Config) -> dict:
    """The finding (``stats.FINDING``): the numbers of :func:`summarize` with their intervals."""
    rows = summarize(records)
    shown = []
    for t, row in rows.items():
        parts = [f"{pe} {fmt_mean(row[pe], row['uniform'])}" for pe in PES if row[pe] is not None]
        if row["family"] is not None:
            parts.append(f"family at the trained alpha {fmt_mean(row['family'], row['uniform'])}")
        shown.append(f"T'={t}: " + ", ".join(parts) + " x uniform")
    measured = (
        f"d={config.d}, q={config.q}, m_p={config.pe_dim}, trained on lengths "
        f"[{config.first}, {config.T}] for {config.steps} steps; " + "; ".join(shown)
    )
    return stats.claim(
        stats.FINDING,
        _reason(rows),
        measured,
        RULE,
        _estimates(rows, records),
        summary=_summary(rows),
    )


def _reason(rows: dict[int, dict[str, Any]]) -> str:
    if not rows:
        return "no test length was measured"
    lengths = list(rows)
    near, far = rows[lengths[0]], rows[lengths[-1]]
    parts = []
    for pe in PES:
        if near[pe] is not None:
            parts.append(
                f"{pe} PE {fmt_mean(near[pe], near['uniform'])} x uniform at T' = {lengths[0]} "
                f"and {fmt_mean(far[pe], far['uniform'])} at {lengths[-1]}"
            )
    text = "; ".join(parts)
    if far["over_family"] is not None:
        text += (
            f"; stochastic PE over the W = alpha I family at its trained alpha "
            f"{fmt_mean(far['over_family'])} at T' = {lengths[-1]}"
        )
    return text


def _summary(rows: dict[int, dict[str, Any]]) -> str:
    """The headline of :func:`_reason`: each mode's loss / uniform at the longest test length."""
    if not rows:
        return "no test length was measured"
    near, (t, far) = rows[min(rows)], max(rows.items())
    ratios = {
        pe: f"{far[pe]['mean'] / far['uniform']:.3g}x"
        for pe in PES
        if near[pe] is not None and far[pe] is not None
    }
    if not ratios:
        return f"no PE mode measured at T' = {t}"

    def listed(tag: str) -> str:
        return ", ".join(f"{pe}{tag} {r}" for pe, r in ratios.items())

    return stats.fitting(
        f"at T' = {t}: {listed(' PE')} uniform",
        f"at T' = {t}: {listed('')} uniform",
        f"T'={t}: {listed('')} uniform",
    )
