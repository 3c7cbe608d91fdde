"""A7.8's figure: ``P*(d)`` and ``w*(d)`` with their intervals beside the paper's and the rival's
laws (SPEC Part G, item 2a)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ...metrics import stats
from .. import plotting
from ..base import Record
from .config import Config
from .verdict import RIVAL_ALPHA, analyse


def _errorbar(ax, xs, ci, **kwargs) -> None:
    v = np.array([c[0] for c in ci], dtype=float)
    ok = np.isfinite(v)
    lo = np.array([c[1] for c in ci], dtype=float)[ok]
    hi = np.array([c[2] if math.isfinite(c[2]) else 2 * c[0] for c in ci], dtype=float)[ok]
    xs = np.asarray(xs, dtype=float)[ok]
    ax.errorbar(xs, v[ok], yerr=plotting.bar_lengths(v[ok], lo, hi), capsize=3, **kwargs)


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    """Left: ``P*(d)`` with its intervals beside ``w (d + 2) + 1`` at the fitted constant width,
    at the rival's ``c d^0.5`` and at width 2 (the least a net that can succeed has). Right:
    ``w*(d)`` with the two width laws."""
    path = out / "xor_ffnn_width.png"
    a = analyse(records)
    ds = np.array(a["d"], dtype=float)
    with plotting.figure(path, ncols=2) as (_, (left, right)):
        _errorbar(left, ds, a["P_ci"], fmt="o", color="k", label="measured P* (95%)")
        _errorbar(right, ds, a["w_ci"], fmt="o", color="k", label="measured w* (95%)")
        finite = [x for x in a["w"] if math.isfinite(x)]
        if len(ds) and finite:
            grid = np.geomspace(ds.min(), ds.max(), 40)
            flat = math.exp(float(np.mean(np.log(finite))))
            rival = flat * (grid / grid[0]) ** RIVAL_ALPHA
            for width, style, label in (
                (np.full_like(grid, flat), "-", f"constant width {flat:.2g} (paper)"),
                (rival, "--", "width ~ d^0.5 (rival)"),
                (np.full_like(grid, 2.0), ":", "width 2 (the least that can succeed)"),
            ):
                left.plot(grid, width * (grid + 2) + 1, style, color="grey", label=label)
                right.plot(grid, width, style, color="grey", label=label)
        for ax, what in ((left, "parameters P* = w*(d+2)+1"), (right, "hidden width w*")):
            ax.set_xscale("log", base=2)
            ax.set_yscale("log", base=2)
            ax.set_xlabel("input length d")
            ax.set_ylabel(f"{what}, bootstrap 95%")
            ax.legend(fontsize=7)
        for ax, key in ((left, "alpha_P"), (right, "alpha_w")):
            e = a[key]
            ax.set_title(
                f"90% of replicas at sign error <= 1%: {key} = "
                f"{stats.fmt_interval(e[0], e[1], e[2], 2)}",
                fontsize=9,
            )
    return [path]
