"""A7.7's figure: ``N*`` against ``d`` per ``k`` with the fitted exponents, and against ``k`` per
``d``, beside the Walsh functions of degree ``<= k`` (SPEC Part G, item 1)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ...exact import fixed_features as ff
from .. import plotting
from ..base import Record
from .config import Config
from .verdict import analyse


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    """Left: ``N*(d)`` per ``k`` (bootstrap 95%) with the fitted ``c d^alpha_k`` and the Walsh
    functions of degree ``<= k`` (dashed). Right: ``N*`` against ``k`` at every ``d`` (log
    scale: a straight line is exponential in ``k``)."""
    path = out / "fixed_embeddings.png"
    series = analyse(records, config)
    with plotting.figure(path, ncols=2) as (_, (left, right)):
        for i, (k, s) in enumerate(series.items()):
            color = f"C{i}"
            lows, highs = zip(*(s.interval(j) for j in range(len(s.d))), strict=True)
            _bars(left, s.d, s.n, lows, highs, color, f"k={k}, alpha={s.alpha:.2f}")
            grid = np.geomspace(s.d.min(), s.d.max(), 32)
            if math.isfinite(s.alpha):
                fitted = np.polyfit(np.log(s.d), np.log(s.n), 1)
                left.plot(grid, np.exp(np.polyval(fitted, np.log(grid))), "-", color=color, lw=0.8)
            walsh = [ff.walsh_count(int(d), k) for d in s.d]
            left.plot(s.d, walsh, "--", color=color, lw=0.8)
        left.set_xscale("log", base=2)
        left.set_yscale("log", base=2)
        ds = sorted({int(d) for s in series.values() for d in s.d})
        left.set_xticks(ds, [str(d) for d in ds], minor=False)
        left.minorticks_off()
        left.set_xlabel("d (dashed: Walsh functions of degree <= k)")
        left.set_ylabel(f"N* (>= {config.target_rate:g} of replicas), bootstrap 95%")
        left.legend(fontsize=7)
        _by_k(right, series)
    return [path]


def _bars(ax, xs, values, lows, highs, color: str, label: str) -> None:
    v = np.asarray(values, dtype=float)
    shown = np.isfinite(v)
    hi = np.where(np.isfinite(highs), highs, 2 * v)
    ax.errorbar(
        np.asarray(xs, dtype=float)[shown],
        v[shown],
        yerr=plotting.bar_lengths(v[shown], np.asarray(lows)[shown], hi[shown]),
        fmt="o",
        capsize=2,
        color=color,
        label=label,
    )


def _by_k(ax, series) -> None:
    ds = sorted({float(d) for s in series.values() for d in s.d})
    ks = list(series)
    for i, d in enumerate(ds):
        rows = [(k, s, int(np.nonzero(s.d == d)[0][0])) for k, s in series.items() if d in s.d]
        values = [s.n[j] for _, s, j in rows]
        lows, highs = zip(*(s.interval(j) for _, s, j in rows), strict=True)
        _bars(ax, [k for k, _, _ in rows], values, lows, highs, f"C{i}", f"d={int(d)}")
        ax.plot([k for k, _, _ in rows], values, "-", color=f"C{i}", lw=0.8)
    if ds:
        ax.plot(ks, [ff.walsh_count(int(ds[-1]), k) for k in ks], "k--", lw=0.8, label="Walsh")
    ax.set_yscale("log")
    ax.set_xticks(ks)
    ax.set_xlabel("k (dashed: Walsh functions of degree <= k at the largest d)")
    ax.set_ylabel("N*, bootstrap 95%")
    ax.legend(fontsize=7)
