"""A7.9's figure: the four arms' success rates and the losses against ``d``, with the
transformer's ceiling on the rotated task (SPEC Part G, item 7)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .. import plotting
from ..base import Record
from .config import Config
from .verdict import ARMS, analyse

FIGURE = "rotated_basis.png"
LOG_FLOOR = 1e-3
"""On the log axis a median below this (a bound of 0) is left out, an interval end clipped."""
STYLE = {
    ("transformer", "axis"): ("o-", "C0"),
    ("transformer", "rotated"): ("o--", "C0"),
    ("mlp", "axis"): ("s-", "C1"),
    ("mlp", "rotated"): ("s--", "C1"),
}


def draw_rates(ax, a: dict[int, dict[Any, Any]]) -> None:
    """Success rates of the four arms vs ``d`` with their Wilson intervals."""
    for arm in ARMS:
        points = [(d, arms[arm]) for d, arms in a.items() if arm in arms]
        if not points:
            continue
        ds = np.array([d for d, _ in points], dtype=float)
        r = np.array([p["rate"] for _, p in points])
        bars = [[p["low"] for _, p in points], [p["high"] for _, p in points]]
        fmt, color = STYLE[arm]
        ax.errorbar(
            ds,
            r,
            yerr=plotting.bar_lengths(r, *bars),
            fmt=fmt,
            color=color,
            capsize=2,
            label=f"{arm[0]}, {arm[1]}",
        )
    ax.set_xscale("log", base=2)
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel("d")
    ax.set_ylabel("success rate (loss <= target), Wilson 95%")
    ax.legend(fontsize=7)


def draw_losses(ax, a: dict[int, dict[Any, Any]], success_loss: float) -> None:
    """Median losses vs ``d`` with bootstrap intervals, the ceiling and the success line."""
    series: list[tuple[str, tuple[str, str], str, str]] = [
        ("transformer, rotated: least loss", ("transformer", "rotated"), "least", "C0"),
        ("ceiling: least over all weights", ("transformer", "rotated"), "floor_found", "k"),
        ("ceiling: proven bound", ("transformer", "rotated"), "floor_bound", "grey"),
        ("MLP, axis: test loss", ("mlp", "axis"), "loss", "C1"),
        ("MLP, rotated: test loss", ("mlp", "rotated"), "loss", "C3"),
    ]
    for label, arm, key, color in series:
        points = [
            (d, arms[arm][key])
            for d, arms in a.items()
            if arm in arms and key in arms[arm] and arms[arm][key][0] > LOG_FLOOR
        ]
        if not points:
            continue
        ds = np.array([d for d, _ in points], dtype=float)
        shown = np.maximum(np.array([p for _, p in points], dtype=float), LOG_FLOOR)  # log axis
        v = shown[:, 0]
        bars = plotting.bar_lengths(v, shown[:, 1], shown[:, 2])
        ax.errorbar(ds, v, yerr=bars, fmt="o-", color=color, capsize=2, label=label)
    ax.axhline(success_loss, color="green", lw=0.8, ls=":", label=f"success: {success_loss:g}")
    ax.axhline(1.0, color="grey", lw=0.6, ls="-.", label="trivial predictor f = 0")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("d")
    ax.set_ylabel("loss, median over replicas (bootstrap 95%)")
    ax.legend(fontsize=6)


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    """Left: success rates of the four arms vs ``d`` (Wilson 95%). Right: losses vs ``d``: the
    transformer's least rotated loss, its ceiling (least over all attention weights, and the
    proven bound), the MLP's median test loss per task, and the success line."""
    path = out / FIGURE
    a = analyse(records, config)
    with plotting.figure(path, ncols=2) as (_, (left, right)):
        draw_rates(left, a)
        draw_losses(right, a, config.success_loss)
    return [path]
