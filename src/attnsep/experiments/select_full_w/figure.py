"""B5.7's figure: GD's loss beside the family's best, their ratio, and the off-family blocks'
relative curvatures, each against ``m_p`` (SPEC Part G, item B5.7)."""

from __future__ import annotations

from pathlib import Path

from .. import plotting
from ..base import Record
from .config import Config
from .verdict import NEAR, STALLED, summarize


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    """GD's loss and the family's best, their ratio against the 1.1 and 1.5 lines, and the
    relative curvatures ``κ`` of the off-family blocks against 0, each against ``m_p``."""
    path = out / "select_full_w.png"
    rows = summarize(records)
    ms = [r["pe_dim"] for r in rows]
    with plotting.figure(path, ncols=3) as (_, axes):
        left, middle, right = axes
        for key, label, marker in (("gd", "GD on the full W", "o"), ("family", "best αI", "s")):
            means = [r[key]["mean"] for r in rows]
            bars = plotting.bar_lengths(
                means, [r[key]["low"] for r in rows], [r[key]["high"] for r in rows]
            )
            left.errorbar(ms, means, yerr=bars, fmt=marker + "-", capsize=3, label=label)
        if rows:
            left.axhline(rows[0]["uniform"], color="grey", ls="--", label="uniform (W = 0)")
        left.set_yscale("log")
        left.set_ylabel("population loss (exact over tokens; mean ± 2 s.e.)")
        left.set_title(f"d={config.d}, T={config.T}, q={config.q}", fontsize=10)
        ratio = [r["ratio"] for r in rows]
        middle.errorbar(
            ms,
            [v[0] for v in ratio],
            yerr=plotting.bar_lengths(
                [v[0] for v in ratio], [v[1] for v in ratio], [v[2] for v in ratio]
            ),
            fmt="o-",
            capsize=3,
            label="GD / family's best (bootstrap 95%)",
        )
        middle.axhline(NEAR, color="green", ls="--", label=f"{NEAR} (reproduced below)")
        middle.axhline(STALLED, color="red", ls="--", label=f"{STALLED} (not reproduced above)")
        middle.set_ylabel("loss ratio")
        for block, marker in (("symmetric", "o"), ("antisymmetric", "s"), ("content", "^")):
            kappa = [r["kappa"][block] for r in rows]
            right.errorbar(
                ms,
                [k[0] for k in kappa],
                yerr=plotting.bar_lengths(
                    [k[0] for k in kappa], [k[1] for k in kappa], [k[2] for k in kappa]
                ),
                fmt=marker + "-",
                capsize=3,
                label=f"{block} block",
            )
        right.axhline(0.0, color="red", ls="--", label="0: a saddle below")
        right.set_yscale("symlog", linthresh=0.01)
        right.set_ylabel("curvature / L''(alpha) (bootstrap 95%)")
        for ax in axes:
            ax.set_xscale("log", base=2)
            ax.set_xlabel("PE width m_p")
            ax.legend(fontsize=7)
    return [path]
