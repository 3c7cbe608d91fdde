"""A7.5's figures: success against ``n`` and ``n*(d)`` against ``d^4`` (A7.5a), and A7.5b's
(``growth.figure``) (SPEC A7.5, Part E, F)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from ...metrics.laws import POWER
from ...metrics.stats import fmt_interval
from .. import plotting
from ..base import Record
from . import growth
from .config import Config
from .search import analyse, bound, edge, series
from .verdict import EMPIRICAL


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    """Left: success vs ``n`` per ``d`` at the fixed width, certified (Wilson bands; dotted: the
    population step). Right (A7.5a): ``n*(d)`` with bootstrap bars, the fitted power law with
    its exponent interval, a ``d^1`` slope, the bound ``d^4`` and ``d^4 (ln d)^2``. A second
    figure is A7.5b's (``growth.figure``)."""
    path = out / "finite_samples.png"
    a = analyse(series(records), config)
    paths = []
    if a["rows"]:
        with plotting.figure(path, ncols=2) as (_, (left, right)):
            for r in a["rows"]:
                probes = sorted(r["probes"], key=lambda p: p["size"])
                sizes = [p["size"] for p in probes]
                plotting.rate_band(left, sizes, probes, label=f"d = {r['d']}")
                color = left.lines[-1].get_color()
                left.axhline(r["population"]["rate"], color=color, ls=":", lw=0.8)
            left.set_xscale("log", base=2)
            left.set_xlabel("samples n (one empirical step); dotted: population step")
            left.set_ylabel("success rate (Wilson 95%)")
            left.legend(fontsize=7)
            _thresholds_panel(right, a, config)
        paths.append(path)
    return paths + [growth.figure(records, config, out)]


def _thresholds_panel(ax, a: dict[str, Any], config: Config) -> None:
    ds, n = np.array(a["d"]), np.array(a["n"])
    low, high = np.array(a["low"]), np.array(a["high"])
    found = np.isfinite(n)
    guard = np.array(a["guard"])
    top = np.where(np.isinf(high), 2.0 * guard, high)  # open: drawn to twice the guard
    ax.errorbar(
        ds[found],
        n[found],
        yerr=plotting.bar_lengths(n[found], low[found], top[found]),
        fmt="o",
        color="k",
        capsize=3,
        label="n*, bootstrap 95% (open: to twice the guard)",
    )
    if (~found).any():
        ax.plot(ds[~found], guard[~found], "^", color="k", label="n* > the guard")
    value, lo, hi = a["alpha"]
    if found.sum() >= 1:
        grid = np.geomspace(ds.min(), ds.max(), 32)
        pivot_d, pivot_n = ds[found][0], n[found][0]
        ax.plot(grid, pivot_n * (grid / pivot_d) ** EMPIRICAL, ":", color="grey", label="d^1")
    grid = np.geomspace(ds.min(), ds.max(), 32)
    ax.plot(grid, [bound(d) for d in grid], "-.", color="grey", label="d^4 (the bound)")
    ax.plot(grid, [edge(d) for d in grid], "-.", color="red", lw=0.8, label="d^4 (ln d)^2")
    if np.isfinite(value):
        grid = np.geomspace(ds.min(), ds.max(), 32)
        params = POWER.fit(ds.tolist(), n.tolist())
        (line,) = ax.plot(
            grid,
            POWER.predict(params, grid),
            "-",
            label=f"fit: alpha = {fmt_interval(value, lo, hi)}",
        )
        centre = math.exp(np.log(ds).mean())
        middle = float(POWER.predict(params, [centre])[0])
        for slope in (lo, hi):
            if np.isfinite(slope):
                ax.plot(
                    grid, middle * (grid / centre) ** slope, "--", lw=0.8, color=line.get_color()
                )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("d")
    ax.set_ylabel(f"n* (rate >= {config.target:g} x population)")
    ax.legend(fontsize=7)
