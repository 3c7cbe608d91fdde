"""A7.3's figures, one per size run: steps to the target against the step size, the loss curve
at each map's best step size, and specialization and collapse rates with Wilson bars (SPEC
A7.3)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...metrics import stats
from .. import plotting
from ..base import Record
from .ceiling import needed_weight
from .config import Config
from .stats import by_size, size_text

LOSS_FLOOR = 1e-16
"""Losses below this (softmax reaches exactly 0 in float64) are drawn at it on log axes."""


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    """``attention_maps.png`` at ``(d, m)``, ``attention_maps_d{d}_m{m}.png`` at each other size."""
    paths = []
    for (d, m), group in by_size(records).items():
        main = (d, m) == (config.d, config.m)
        name = "attention_maps.png" if main else f"attention_maps_d{d}_m{m}.png"
        paths.append(draw(group, out / name))
    return paths


def draw(records: list[Record], path: Path) -> Path:
    """The three panels for the maps of one size."""
    from matplotlib import colormaps

    budget = records[0]["budget"]
    name = "tab10" if len(records) <= 10 else "tab20"
    # tab10 and tab20 are ListedColormaps, whose colours the Colormap stub does not declare
    palette = colormaps[name].colors  # type: ignore[attr-defined]
    with plotting.figure(path, ncols=3, width=5.0) as (fig, (left, middle, right)):
        fig.suptitle(size_text((records[0]["d"], records[0]["m"])))
        for i, r in enumerate(records):
            curve = r["curve"]
            reached = [p for p in curve if p["median_steps"] is not None]
            missed = [p for p in curve if p["median_steps"] is None and not p["diverged"]]
            diverged = [p["eta"] for p in curve if p["diverged"]]
            (line,) = left.plot(
                [p["eta"] for p in reached],
                [p["median_steps"] for p in reached],
                marker="o",
                label=r["attention"],
                color=palette[i % len(palette)],
            )
            color = line.get_color()
            left.plot(
                [p["eta"] for p in missed],
                [p["horizon"] for p in missed],
                ls="none",
                marker="o",
                mfc="none",
                color=color,
            )
            left.plot(diverged, [budget] * len(diverged), ls="none", marker="x", color=color)
            if r["best"] is not None:
                curve = [max(loss, LOSS_FLOOR) for loss in r["best"]["loss_curve"][1:]]
                middle.plot(range(1, len(curve) + 1), curve, label=r["attention"], color=color)
        left.axhline(budget, color="grey", ls="--", lw=0.8)
        left.set_xscale("log")
        left.set_yscale("log")
        left.set_xlabel("learning rate eta")
        left.set_ylabel(f"median steps to loss <= {records[0]['target']:g}")
        left.set_title("open: not reached (at its horizon); x: diverged")
        left.legend(**legend(records))
        middle.axhline(records[0]["target"], color="grey", ls="--", lw=0.8)
        middle.set_xscale("log")
        middle.set_yscale("log")
        middle.set_xlabel("GD step")
        middle.set_ylabel("median population loss")
        middle.set_title(f"at each map's best eta (floored at {LOSS_FLOOR:g})")
        middle.legend(**legend(records))
        rates(right, records)
    return path


def legend(records: list[Record]) -> dict:
    """Legend options: small, in two columns, when many maps share a panel."""
    return {"fontsize": "small", "ncol": 2} if len(records) > 6 else {}


def rates(ax, records: list[Record]) -> None:
    """Specialization and collapse after the budget, with Wilson bars, per map, beside its
    expressivity ceiling and the weight the target needs (``ceiling``)."""
    for offset, key in ((-0.1, "specialized"), (0.1, "collapsed")):
        xs, ys, bars = [], [], []
        for i, r in enumerate(records):
            if r["best"] is None:
                continue
            k, n = sum(r["best"][key]), len(r["best"][key])
            lo, hi = stats.wilson(k, n)
            xs.append(i + offset)
            ys.append(k / n)
            bars.append((k / n - lo, hi - k / n))
        ax.errorbar(
            xs,
            ys,
            yerr=np.array(bars).T if bars else None,
            ls="none",
            marker="o",
            capsize=3,
            label=key,
        )
    ceilings = [(i, r["ceiling"]) for i, r in enumerate(records) if r.get("ceiling")]
    if ceilings:
        ax.plot(
            [i for i, _ in ceilings],
            [float(np.median(c)) for _, c in ceilings],
            ls="none",
            marker="_",
            markersize=14,
            color="black",
            label="expressivity ceiling (median)",
        )
        needed = needed_weight(records[0]["d"], records[0]["target"])
        ax.axhline(needed, color="black", ls=":", lw=0.8, label=f"weight needed ({needed:.2g})")
    many = len(records) > 6
    ax.set_xticks(
        range(len(records)),
        [r["attention"] for r in records],
        rotation=60 if many else 0,
        ha="right" if many else "center",
    )
    ax.set_ylim(-0.05, 1.05)
    ax.set_ylabel("rate after the budget (Wilson 95%); ceiling")
    ax.set_title("specialization, collapse and expressivity ceiling")
    ax.legend(fontsize="small")
