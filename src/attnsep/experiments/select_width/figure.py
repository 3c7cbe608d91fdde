"""B5.2's figure: ``m_p*`` against ``T`` per ``q``, with both laws fitted on the smaller half and
the ``W = αI`` family's thresholds (SPEC B5.2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ...metrics.laws import AFFINE_POLYLOG, POWER
from .. import plotting
from ..base import Record
from .config import Config
from .verdict import analyse, decision


def law_curves(ax, series: dict[str, Any], grid: np.ndarray, color: str, tag: str) -> None:
    """Both laws fitted on the smaller half, drawn over ``grid``, held-out predictions as x with
    their refit bands."""
    for side, law, style in (("paper", AFFINE_POLYLOG, "-"), ("rival", POWER, "--")):
        fit = series["comparison"][side]
        if None in fit["params"]:
            continue
        label = f"{tag}: {law.formula} fitted on T <= {int(max(fit['fitted_on']))}"
        ax.plot(grid, law.predict(fit["params"], grid), style, color=color, lw=1, label=label)
        ax.plot(fit["predicted_at"], fit["predicted"], "x", ms=9, color=color)
        if fit.get("band") and None not in np.ravel(fit["band"]):
            low, high = np.array(fit["band"]).T
            bars = plotting.bar_lengths(fit["predicted"], low, high)
            ax.errorbar(fit["predicted_at"], fit["predicted"], yerr=bars, fmt="none", ecolor=color)


def draw_series(ax, s: dict[str, Any], color: str, tag: str) -> None:
    """Measured points with bootstrap bars (an unreached one at the top as ^), both laws."""
    Ts, m = np.array(s["T"]), np.array(s["m"])
    found = np.isfinite(m)
    low, high = np.array(s["low"])[found], np.array(s["high"])[found]
    high = np.where(np.isfinite(high), high, m[found])
    bars = plotting.bar_lengths(m[found], low, high)
    ax.errorbar(Ts[found], m[found], yerr=bars, fmt="o", color=color, capsize=3, label=tag)
    if s["comparison"] is not None:
        law_curves(ax, s, np.geomspace(Ts.min(), Ts.max() * 2, 64), color, tag)
    ax.set_xscale("log", base=2)


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    path = out / "select_width.png"
    series = analyse(records)
    decided = {k: decision(k[0], s) for k, s in series.items()}
    qs = sorted({q for q, _ in series})
    colors = dict(zip(sorted({d for _, d in series}), ("C0", "C1", "C2", "C3"), strict=False))
    with plotting.figure(path, ncols=len(qs)) as (_, axes):
        for ax, q in zip(axes, qs, strict=True):
            for (qq, d), s in series.items():
                if qq == q:
                    draw_series(ax, s, colors.get(d, "k"), f"d = {d}")
            fam = sorted({(r["T"], r.get("family_m")) for r in records if r["q"] == q})
            fam = [(T, m) for T, m in fam if m is not None]
            if fam:
                ax.plot(
                    *zip(*fam, strict=True),
                    "s",
                    mfc="none",
                    color="grey",
                    label="family W = αI threshold",
                )
            ax.set_xlabel("T (x: held-out predictions)")
            ax.set_ylabel(f"m_p* (loss <= {config.target:g} x uniform)")
            shown = ", ".join(f"d={d}: {v}" for (qq, d), v in decided.items() if qq == q)
            ax.set_title(f"q = {q} (decided {shown})", fontsize=10)
            ax.legend(fontsize=6)
    return [path]
