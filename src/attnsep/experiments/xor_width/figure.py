"""A7.2's figure: ``m*(d)`` with its bootstrap bars and both laws fitted on the smaller half
(SPEC A7.2, Part F)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from ...metrics import stats
from ...metrics.laws import POLYLOG, POWER
from .. import plotting
from ..base import Record
from .config import Config
from .verdict import analyse


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    """``m*(d)`` with bootstrap bars and both laws fitted on the smaller half (the held-out
    test's): against ``d`` (log-log) and against ``ln d`` (log-log: polylog is a line)."""
    from ..xor_growth_text import fmt_rule

    path = out / "polylog_width.png"
    a = analyse(records, config)
    ds, m, low = np.array(a["d"]), np.array(a["m"]), np.array(a["low"])
    found = np.isfinite(m)
    largest = np.array([size for size, _, _ in a["plateaus"]], dtype=float)
    high = np.where(np.isinf(a["high"]), 2.0 * largest, a["high"])  # open: drawn to 2x
    grid = np.geomspace(ds.min(), ds.max(), 64)
    x_forms: tuple[Callable[[np.ndarray], np.ndarray], ...] = (np.asarray, np.log)
    g = a["growth"]
    with plotting.figure(path, ncols=2) as (_, axes):
        for ax, x_of, xlabel in zip(axes, x_forms, ("d", "ln d"), strict=True):
            bars = plotting.bar_lengths(m[found], low[found], high[found])
            label = "measured m*, bootstrap 95%"
            ax.errorbar(x_of(ds[found]), m[found], yerr=bars, fmt="o", color="k", label=label)
            if (~found).any():
                ax.plot(x_of(ds[~found]), largest[~found], "^", color="k", label="no plateau")
            for side, law, style in (("paper", POLYLOG, "-"), ("rival", POWER, "--")):
                if "fits" in g:
                    fitted_on = f"d <= {int(max(g['held_out']['fitted_on']))}"
                    label = f"{law.formula} fitted on {fitted_on}"
                    ax.plot(x_of(grid), law.predict(g["fits"][side], grid), style, label=label)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log", base=2)
            ax.set_xlabel(xlabel)
            ax.set_ylabel(f"m* (success >= {config.target:g} x plateau)")
        axes[1].set_xticks(np.log(ds), [f"{v:.1f}" for v in np.log(ds)], minor=False)
        axes[1].minorticks_off()
        axes[0].legend(fontsize=7)
        axes[0].set_title(f"m* = c d^alpha: alpha = {stats.fmt_interval(*a['alpha'])}", fontsize=9)
        title = f"m* = a (ln d)^p: p = {stats.fmt_interval(*a['p'])}"
        if "curvature" in g:
            c = g["curvature"]
            title += f"\nlocal exponent {fmt_rule(c['smaller'])} -> {fmt_rule(c['larger'])}"
        axes[1].set_title(title, fontsize=9)
    return [path]
