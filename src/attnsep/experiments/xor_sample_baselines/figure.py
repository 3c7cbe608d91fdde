"""A7.5c's figure: ``n*(d)`` per method beside the lines ``d`` and ``d^4``, and elimination's
distribution function against its exact law (SPEC Part G, item 2b)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from ...exact import gf2
from ...metrics import stats
from .. import plotting
from ..base import Record
from .config import Config
from .verdict import LABELS, QUANTILE, analyse, counts


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    """Left: ``n*(d)`` per method (log-log, bootstrap 95%), the exact elimination ``n*``, the
    information floor ``log2 C(d, 2)`` and the lines ``d`` and ``d^4``. Right: elimination's
    simulated distribution function at the largest ``d`` against the exact one."""
    path = out / "xor_sample_baselines.png"
    a = analyse(records)
    ds = sorted({float(r["d"]) for r in records})
    with plotting.figure(path, ncols=2) as (_, (left, right)):
        for method, s in a.items():
            v = np.array([p[0] for p in s["points"]])
            ok = np.isfinite(v)
            lo = np.array([p[1] for p in s["points"]])[ok]
            hi = np.array([p[2] if math.isfinite(p[2]) else 2 * p[0] for p in s["points"]])[ok]
            left.errorbar(
                np.array(s["d"])[ok],
                v[ok],
                yerr=plotting.bar_lengths(v[ok], lo, hi),
                fmt="o-",
                capsize=3,
                label=f"{LABELS[method]}: α = {_ci(s['alpha'])}",
            )
        grid = np.geomspace(min(ds), max(ds), 40)
        left.plot(grid, grid, ":", color="grey", label="d")
        left.plot(grid, grid**4, "-.", color="grey", label="d^4 (Corollary 3)")
        left.plot(
            grid,
            [gf2.information_floor(int(round(x))) for x in grid],
            "--",
            color="k",
            lw=0.8,
            label="log2 C(d,2) (information floor)",
        )
        left.plot(
            ds,
            [gf2.span_quantile(int(d), QUANTILE) for d in ds],
            "x",
            color="k",
            label="elimination n*, exact",
        )
        for ax in (left,):
            ax.set_xscale("log", base=2)
            ax.set_yscale("log", base=2)
        left.set_xlabel("input length d")
        left.set_ylabel("samples n* (90% of replicas done; bootstrap 95%)")
        left.legend(fontsize=6)
        _cdf_panel(right, a)
    return [path]


def _ci(t: tuple[float, ...]) -> str:
    return stats.fmt_interval(t[0], t[1], t[2], 2)


def _cdf_panel(ax, a: dict[str, dict[str, Any]]) -> None:
    if "elimination" not in a:
        ax.set_axis_off()
        return
    r = a["elimination"]["rows"][-1]
    values, d = np.sort(counts(r)), r["d"]
    grid = np.arange(d - 1, int(values.max()) + 2)
    ax.step(
        grid,
        np.searchsorted(values, grid, side="right") / len(values),
        where="post",
        label=f"simulated ({len(values)} replicas)",
    )
    ax.plot(
        grid,
        [gf2.span_probability(d, int(n)) for n in grid],
        "o",
        ms=3,
        color="k",
        label="prod_{i<d}(1 - 2^(i-n))",
    )
    ax.set_xlabel(f"samples n (d = {d})")
    ax.set_ylabel("P(inputs span GF(2)^d)")
    ax.legend(fontsize=7)
