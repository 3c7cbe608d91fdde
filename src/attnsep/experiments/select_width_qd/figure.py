"""B5.5's figure: ``m_p*`` against ``d`` per ``q`` and its geometric mean over ``d`` against
``q``, with the ``W = αI`` family's thresholds (SPEC Part G, item B5.5)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ...metrics import stats
from .. import plotting
from ..base import Record
from .config import Config
from .verdict import analyse


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    """Left: ``m_p*`` against ``d`` per ``q`` (bootstrap bars) with the family's ``d``-free
    threshold and a rival ``∝ d`` line; right: the geometric mean over ``d`` against ``q`` with
    ``a + b q`` and ``a + c q²`` fitted on the smaller ``q``'s, and the family's threshold."""
    path = out / "select_width_qd.png"
    t = analyse(records)
    ds, qs = np.array(t["d"], dtype=float), np.array(t["q"], dtype=float)
    with plotting.figure(path, ncols=2) as (_, (left, right)):
        for i, q in enumerate(t["q"]):
            color = f"C{i % 10}"
            v = t["value"][i]
            lo, hi = (np.array([stats.interval(t["draws"][:, i, j])[k] for j in range(len(ds))])
                      for k in (0, 1))  # fmt: skip
            shown = np.isfinite(v) & np.isfinite(hi)
            bars = plotting.bar_lengths(v[shown], lo[shown], hi[shown])
            left.errorbar(ds[shown], v[shown], yerr=bars, fmt="o-", color=color, label=f"q={q}")
            fam = [r["family_m"] for r in records if r["q"] == q and r.get("family_m")]
            if fam:
                left.axhline(fam[0], ls=":", color=color, lw=1)
            if shown.any():
                left.plot(ds, v[shown][0] * ds / ds[shown][0], "--", color=color, lw=0.7)
        if np.isfinite(t["value"]).any():  # a log scale needs a point to draw
            left.set_xscale("log", base=2)
            left.set_yscale("log", base=2)
        left.set_xlabel("d (dotted: W = αI family, d-free; dashed: rival ∝ d)")
        left.set_ylabel(f"m_p* (loss <= {config.target:g} x uniform, T = {config.T})")
        left.set_title(f"β_d = {stats.fmt_interval(*t['beta_d'])}", fontsize=10)
        left.legend(fontsize=7)
        _q_panel(right, t, records, qs)
    return [path]


def _q_panel(ax, t: dict[str, Any], records: list[Record], qs: np.ndarray) -> None:
    levels = np.array([v[0] for v in t["levels"]])
    low, high = (np.array([v[k] for v in t["levels"]]) for k in (1, 2))
    shown = np.isfinite(levels) & np.isfinite(high)
    bars = plotting.bar_lengths(levels[shown], low[shown], high[shown])
    ax.errorbar(qs[shown], levels[shown], yerr=bars, fmt="o", color="k", label="m_p* (gmean d)")
    fam = sorted({(r["q"], r["family_m"]) for r in records if r.get("family_m")})
    if fam:
        ax.plot(*zip(*fam, strict=True), "s", mfc="none", color="grey", label="W = αI family")
    if len(qs) >= 3 and shown.all():
        grid = np.linspace(qs[0], qs[-1], 64)
        for power, style, name in ((1, "-", "a + b q"), (2, "--", "a + c q²")):
            b, a = np.polyfit(qs[:-1] ** power, levels[:-1], 1)
            ax.plot(grid, a + b * grid**power, style, color="C3", lw=1, label=f"{name} (q < max)")
    ax.set_xlabel("q")
    ax.set_ylabel("m_p* (geometric mean over d, 95%)")
    ax.legend(fontsize=7)
