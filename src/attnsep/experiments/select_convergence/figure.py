"""B5.1's figure: the losses, the judged ratio trained / family's best and ``cos(W, W*)``
against ``m_p``, and B5.1b's ratio beside them (SPEC B5.1)."""

from __future__ import annotations

from pathlib import Path

from .. import plotting
from ..base import Record
from ..select_common import mean_bars
from . import paper
from .config import Config
from .verdict import ALIGNED, NEAR, summarize


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    """B5.1's losses, the judged ratio trained / family's best and cos against ``m_p``; with
    ``paper_widths`` a fourth panel, B5.1b."""
    path = out / "select_convergence.png"
    rows = summarize(records)
    ms = [r["pe_dim"] for r in rows]
    with plotting.figure(path, ncols=4 if config.paper_widths else 3) as (_, axes):
        left, middle, right = axes[0], axes[1], axes[2]
        if config.paper_widths:
            paper.panel(axes[3], records)
        if not rows:
            for ax in (left, middle, right):
                ax.set_axis_off()
            return [path]
        for key, label, marker in (
            ("sgd", "trained (mean ± 2 s.e.)", "o"),
            ("family", "best W = αI (± 2 s.e.)", "s"),
        ):
            mean_bars(left, ms, [r[key] for r in rows], marker=marker, label=label)
        left.axhline(rows[0]["uniform"], color="grey", ls="--", label="uniform attention (W = 0)")
        left.set_yscale("log")
        left.set_ylabel("loss at T (exact over tokens, summed over d)")
        left.set_title(f"d={config.d}, T={config.T}, q={config.q}")
        ratios = [dict(zip(("mean", "low", "high"), r["ratio"], strict=True)) for r in rows]
        mean_bars(middle, ms, ratios, marker="o", label="trained / best W = αI (bootstrap 95%)")
        middle.axhline(1.0, color="black", ls=":", label="the family's best")
        middle.axhline(NEAR, color="grey", ls="--", label=f"{NEAR} x it (the criterion)")
        middle.set_ylabel("trained loss / family's best")
        mine = [r for r in records if not paper.is_paper_setting(r)]
        right.plot(
            [r["pe_dim"] for r in mine], [r["cos"] for r in mine], "o", alpha=0.6, label="one seed"
        )
        right.axhline(ALIGNED, color="grey", ls="--", label=f"cos = {ALIGNED}")
        right.set_ylabel("cos(W, W*)")
        for ax in (left, middle, right):
            ax.set_xscale("log", base=2)
            ax.set_xlabel("PE width m_p")
            ax.legend(fontsize=8)
    return [path]
