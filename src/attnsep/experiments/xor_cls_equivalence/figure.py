"""A3's figure: the deviations per step and per replica against the rounding twin's (SPEC A3)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .. import plotting
from ..base import Record
from .config import Config
from .verdict import CONDITIONED, MISMATCH, TOLERANCE, label


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    """Left: per size and step the largest deviation over the conditioned replicas (solid), their
    twin's (dashed), the control's median (dotted); right: each replica's ``D`` against its twin,
    with the tolerance, the mismatch level and the conditioning limit."""
    path = out / "cls_equivalence.png"
    floor = 1e-20
    with plotting.figure(path, ncols=2) as (_, (left, right)):
        for i, r in enumerate(sorted(records, key=lambda r: (r["loss"], r["d"]))):
            color = f"C{i % 10}"
            if "curve_dev" in r:
                steps = np.arange(len(r["curve_dev"]))
                for key, style in (
                    ("curve_dev", "-"),
                    ("curve_twin", "--"),
                    ("curve_control", ":"),
                ):
                    left.plot(steps, np.maximum(r[key], floor), style, color=color)
                left.plot([], [], "-", color=color, label=label(r))
            right.scatter(
                np.maximum(r["twin"], floor), np.maximum(r["dev"], floor), s=10, color=color
            )
            right.scatter(
                np.maximum(r["twin"], floor),
                np.maximum(r["control"], floor),
                s=10,
                marker="x",
                color=color,
                label=f"{label(r)} (x: control)",
            )
        for ax in (left, right):
            ax.set_yscale("log")
            ax.axhline(TOLERANCE, color="g", lw=0.8, ls="--")
            ax.axhline(MISMATCH, color="r", lw=0.8, ls="--")
            ax.legend(fontsize=6)
        right.set_xscale("log")
        right.axvline(CONDITIONED, color="grey", lw=0.8)
        left.set_xlabel("step (solid: CLS vs query-vector; dashed: twin; dotted: control)")
        left.set_ylabel("max |deviation| of loss and attention (conditioned)")
        right.set_xlabel("rounding twin's deviation T (conditioned left of the grey line)")
        right.set_ylabel("deviation D per replica (dots), control (x)")
        left.set_title("CLS transformer vs query-vector model (green 1e-9, red 1e-6)", fontsize=9)
    return [path]
