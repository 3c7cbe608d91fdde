"""A7.4's figures (SPEC A7.4): the heads' weight on their bits, attention maps before and after
the step, the on-target rate of each init and the alignment ratio against ``d``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...configs import INITS
from .. import plotting
from ..base import Record
from .config import Config
from .run import MASS
from .verdict import LOWER, RATE, RATIO_BAR, ratio_median, summary_rows

Curve = tuple[str, list[int], list[tuple[float, float, float]]]
"""``(label, d values, (value, low, high) per d)``."""


def mass(summaries: list[Record], threshold: float, out: Path) -> Path:
    """Histograms of each head's weight on its assigned support bit, one panel per ``d``."""
    path = out / "head_mass.png"
    ds = sorted({r["d"] for r in summaries})
    with plotting.figure(path, ncols=len(ds), width=4.2) as (_, axes):
        for ax, d in zip(axes, ds, strict=True):
            for r in (x for x in summaries if x["d"] == d):
                weights = np.asarray(r["mass"]).ravel()
                label = f"{r['init']}, m={r['m']}"
                ax.hist(weights, bins=np.linspace(0, 1, 41), alpha=0.5, label=label)
            ax.axvline(threshold, color="grey", lw=0.8, ls="--")
            ax.set_yscale("log")
            ax.set_xlabel("head's weight on its assigned support bit")
            ax.set_title(f"d = {d}, after one step")
            ax.legend(fontsize=8)
        axes[0].set_ylabel("heads (all replicas)")
    return path


def maps(records: list[Record], out: Path) -> list[Path]:
    """Attention maps before and after the step at the smallest ``d`` shown, one file per init."""
    if not records:
        return []
    d = min(r["d"] for r in records)
    paths = []
    for init in sorted({r["init"] for r in records if r["d"] == d}):
        shown = [r for r in records if r["d"] == d and r["init"] == init]
        path = out / f"head_maps_{init}.png"
        with plotting.figure(path, ncols=len(shown), width=3.6, height=3.4) as (_, axes):
            for ax, r in zip(axes, shown, strict=True):
                rows = [r["before"][0], r["before"][1], r["after"][0], r["after"][1]]
                ax.imshow(rows, aspect="auto", cmap="viridis", vmin=0, vmax=1)
                ax.set_yticks(
                    range(4), ["head 1 before", "head 2 before", "head 1 after", "head 2 after"]
                )
                for pos in r["support"]:
                    ax.axvline(pos, color="red", lw=0.6, ls=":")
                ax.set_xlabel("position (red: support)")
                ax.set_title(
                    f"{init}, d={d}, replica {r['replica']}"
                    + ("" if r["hit"] else " (off target)"),
                    fontsize=9,
                )
        paths.append(path)
    return paths


def _curves(ax: Any, curves: Sequence[Curve]) -> None:
    for label, ds, points in curves:
        val = np.asarray(points, dtype=float)
        ax.errorbar(
            ds,
            val[:, 0],
            yerr=[val[:, 0] - val[:, 1], val[:, 2] - val[:, 0]],
            marker="o",
            ls="-" if "schedule" in label else ":",
            capsize=3,
            label=label,
        )


def rates(curves: Sequence[Curve], rate: float, lower: float, out: Path) -> Path:
    """The on-target rate with its Wilson 95% interval against ``d``, one curve per init and
    series; the criterion's rate and lower bound as lines."""
    return _against_d(
        out / "head_rates.png",
        curves,
        [(rate, "--"), (lower, ":")],
        "both heads >= 0.9 on distinct support bits",
        "One step: on-target rate by init (Wilson 95%)",
    )


def ratio(curves: Sequence[Curve], bar: float, out: Path) -> Path:
    """The median alignment ratio with its 95% interval against ``d``, one curve per series;
    1 and the criterion's ``bar`` as lines."""
    return _against_d(
        out / "alignment_ratio.png",
        curves,
        [(1.0, ":"), (bar, "--")],
        "own-bit change / largest ambient |change|",
        "One step: own-bit vs ambient score change (median, 95%)",
    )


def _against_d(
    path: Path, curves: Sequence[Curve], lines: list[tuple[float, str]], ylabel: str, title: str
) -> Path:
    """``curves`` against ``d`` (log scale) with grey horizontal ``lines`` ``(y, style)``."""
    with plotting.figure(path) as (_, (ax,)):
        _curves(ax, curves)
        for y, style in lines:
            ax.axhline(y, color="grey", lw=0.8, ls=style)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("input length d")
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=8)
    return path


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    """Weights on the support bits, attention maps (fixed width, smallest ``d``), the on-target
    rate and the median alignment ratio of every series and init."""
    ratio_curves: list[Curve] = []
    rate_curves: list[Curve] = []
    for series in ("schedule", "fixed"):
        for init in INITS:
            if rows := summary_rows(records, init, series):
                width = "m(d) schedule" if series == "schedule" else f"m = {config.m}"
                ds = [r["d"] for r in rows]
                ratio_curves.append((f"{init}, {width}", ds, [ratio_median(r) for r in rows]))
                on_target = [
                    (r["on_target_rate"], r["on_target_low"], r["on_target_high"]) for r in rows
                ]
                rate_curves.append((f"{init}, {width}", ds, on_target))
    summaries = [r for r in records if r["kind"] == "summary"]
    map_records = [r for r in records if r["kind"] == "map"]
    return [
        mass(summaries, MASS, out),
        *maps(map_records, out),
        rates(rate_curves, RATE, LOWER, out),
        ratio(ratio_curves, RATIO_BAR, out),
    ]
