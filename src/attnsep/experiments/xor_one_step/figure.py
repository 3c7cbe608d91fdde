"""A7.1's figure: the one-step success rate against ``d`` for the schedule and each fixed width,
with Wilson bands (SPEC A7.1)."""

from __future__ import annotations

from pathlib import Path

from .. import plotting
from ..base import Record
from .config import Config
from .verdict import TARGET, fixed_widths, series_rows


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    """The certified success rate against ``d``, one curve per series and width, Wilson 95%
    bands; the criterion's 0.9 dashed."""
    path = out / "one_step_success.png"
    with plotting.figure(path) as (_, (ax,)):
        curves = [
            (f"m = ceil({config.schedule_scale:g} (ln d)^2)", series_rows(records, "schedule"))
        ]
        curves += [
            (f"m = {m} fixed", series_rows(records, "fixed", m)) for m in fixed_widths(records)
        ]
        for label, rows in curves:
            if rows:
                plotting.rate_band(ax, [r["d"] for r in rows], rows, label=label)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("input length d")
        ax.set_ylabel("certified success rate after one step")
        ax.set_ylim(-0.02, 1.02)
        ax.axhline(TARGET, color="grey", lw=0.8, ls="--")
        ax.legend()
        ax.set_title(f"One population gradient step ({config.attention}, 95% Wilson bands)")
    return [path]
