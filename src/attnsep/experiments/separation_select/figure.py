"""Part C's figure: per ``q`` the transformer's width ``d + m_p*`` beside the FCN's proven
minimum, and their ratio against ``T`` (SPEC Parts C, E)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .. import plotting
from ..base import Record
from ..select_width.figure import draw_series
from .config import Config
from .verdict import analyse


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    """Per ``q``: the transformer's width ``d + m_p*`` with its held-out predictions and the
    FCN's proven minimum; last panel: the ratio FCN / transformer against ``T`` per ``q``."""
    path = out / "separation_select.png"
    series = analyse(records, config)
    with plotting.figure(path, ncols=len(series) + 1) as (_, axes):
        _ratio_panel(axes[-1], series)
        for ax, (q, s) in zip(axes[:-1], series.items(), strict=True):
            draw_series(ax, s, "C0", "transformer d + m_p*")
            g = s["fcn_growth"]
            ax.plot(
                s["T"],
                s["fcn"],
                "s-",
                color="k",
                label=f"FCN proven minimum (slope {g['slope']:.3g} per T)",
            )
            ax.set_yscale("log", base=2)
            ax.set_xlabel("T (x: held-out predictions)")
            ax.set_ylabel(f"width needed (loss <= {config.target:g} x uniform)")
            ax.set_title(f"d = {config.d}, q = {q}", fontsize=10)
            ax.legend(fontsize=6)
    return [path]


def _ratio_panel(ax, series: dict[int, dict[str, Any]]) -> None:
    for q, s in series.items():
        f, w = np.array(s["fcn"], dtype=float), np.array(s["m"], dtype=float)
        lo, hi = np.array(s["low"], dtype=float), np.array(s["high"], dtype=float)
        shown = np.isfinite(w) & np.isfinite(hi)  # an unreached width has no ratio to draw
        ratio = f[shown] / w[shown]
        ax.errorbar(
            np.array(s["T"], dtype=float)[shown],
            ratio,
            yerr=plotting.bar_lengths(ratio, f[shown] / hi[shown], f[shown] / lo[shown]),
            fmt="o-",
            capsize=2,
            label=f"q = {q}",
        )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("T")
    ax.set_ylabel("FCN minimum width / transformer d + m_p* (95%)")
    ax.legend(fontsize=6)
