"""A7.6's figure: each model's parameters needed against ``d`` and the FCN's hidden width needed
(SPEC A7.6)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ...metrics import stats
from ...metrics.laws import POWER
from .. import plotting
from ..base import Record
from .analysis import _num
from .config import Config

LABELS = {"transformer": "attention, one step (2m)", "fcn": "two-layer ReLU (width·(d+2)+1)"}


def _bars(values: list, lows: list, highs: list) -> np.ndarray:
    """Error-bar lengths below and above (an unbounded upper end is drawn to twice the value)."""
    lo = [np.nan if x is None else x for x in lows]
    hi = [2 * y if x is None else x for x, y in zip(highs, values, strict=True)]
    return plotting.bar_lengths(values, lo, hi)


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    from .. import xor_thresholds as xt

    path = out / "separation_xor.png"
    fits = {m: xt.frontier_of(records, m) for m in xt.KNOBS}
    with plotting.figure(path, ncols=2, width=5.5, height=4.5) as (_, (ax, wx)):
        for model, f in fits.items():
            rows = [p for p in f.points if p["params"] is not None]
            if not rows:
                continue
            ds = [p["d"] for p in rows]
            values = [p["params"] for p in rows]
            bars = _bars(values, [p["params_low"] for p in rows], [p["params_high"] for p in rows])
            value, low, high = f.exponent()
            label = f"{LABELS[model]}: α = {stats.fmt_interval(_num(value), low, high, 2)}"
            handle = ax.errorbar(ds, values, yerr=bars, marker="o", capsize=3, ls="none")
            if math.isfinite(value):
                grid = np.geomspace(min(ds), max(ds), 50)
                params = POWER.fit(ds, values)
                ax.plot(grid, POWER.predict(params, grid), color=handle[0].get_color())
            handle.set_label(label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_xlabel("input length d")
        ax.set_ylabel("trainable parameters needed")
        ax.set_title("Sparse XOR: parameters for 90% of replicas at sign error ≤ 1%", fontsize=9)
        ax.legend(fontsize=8)
        rows = [p for p in fits["fcn"].points if p["width_star"] is not None]
        if rows:
            widths = [p["width_star"] for p in rows]
            bars = _bars(
                widths, [p["width_star_low"] for p in rows], [p["width_star_high"] for p in rows]
            )
            wx.errorbar([p["d"] for p in rows], widths, yerr=bars, marker="o", capsize=3)
        wx.set_xscale("log", base=2)
        wx.set_xlabel("input length d")
        wx.set_ylabel("FCN hidden width needed")
        wx.set_ylim(bottom=0)
        wx.set_title("FCN hidden width needed (parameters: width·(d+2)+1)", fontsize=9)
    return [path]
