"""A7.10's figure: success and final loss against ``d`` per model (SPEC A7.10)."""

from __future__ import annotations

from pathlib import Path

from ...metrics import stats
from .. import plotting
from ..base import Record
from .config import NAMES, Config
from .verdict import best_loss, mean_estimate


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    """Left: certified success against ``d`` per model, after one step (solid) and after the
    budget (dashed), Wilson bands; right: mean final loss per model with bootstrap bars, and each
    model's best reachable loss (dotted)."""
    path = out / "one_head.png"
    rows = sorted(records, key=lambda r: r["d"])
    ds = [r["d"] for r in rows]
    with plotting.figure(path, ncols=2) as (_, (left, right)):
        for i, (arm, name) in enumerate(NAMES.items()):
            color = f"C{i}"
            for key, style in (("success1", "-"), ("success_final", "--")):
                pts = []
                for r in rows:
                    k, n = sum(r["arms"][arm][key]), r["seeds"]
                    low, high = stats.wilson(k, n)
                    pts.append({"rate": k / n, "low": low, "high": high})
                when = "one step" if key == "success1" else f"{config.budget} steps"
                plotting.rate_band(left, ds, pts, label=f"{name}, {when}", color=color)
                left.lines[-1].set_linestyle(style)
            e = [mean_estimate("", r["arms"][arm]["loss_final"]) for r in rows]
            v = [x["value"] for x in e]
            right.errorbar(
                ds,
                v,
                yerr=plotting.bar_lengths(v, [x["low"] for x in e], [x["high"] for x in e]),
                fmt="o-",
                color=color,
                capsize=2,
                label=name,
            )
            right.plot(ds, [best_loss(arm, d) for d in ds], ":", color=color)
        for ax in (left, right):
            ax.set_xscale("log", base=2)
            ax.set_xlabel("input length d")
            ax.legend(fontsize=6)
        left.set_ylim(-0.02, 1.02)
        left.set_ylabel("certified success rate (Wilson 95%)")
        right.set_ylabel(f"mean population loss after {config.budget} steps (dotted: best)")
        left.set_title("Sparse XOR: two heads vs one head (tied / alone)", fontsize=9)
    return [path]
