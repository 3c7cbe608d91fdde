"""B5.6's figure: each mode's loss against ``T'`` beside the blind fixed-PE limit, and the
in-distribution loss curves (SPEC B5.3, Part G, item B5.6)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import plotting
from ..base import Record
from ..select_common import mean_bars
from .config import Config
from .verdict import FIT_BAR, OOD_BAR, curve_summary, relative, summarize


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    """Left: each mode's loss / uniform against ``T'`` (± 2 s.e.), the bars 0.1 and 0.5 and the
    blind fixed-PE limit; right: the in-distribution loss curves / uniform."""
    from ...exact.blind_pe import blind_ratio

    path = out / "fixed_pe.png"
    rows = summarize(records)
    with plotting.figure(path, ncols=2) as (_, (left, right)):
        for pe, marker in (("fixed", "s"), ("stochastic", "o")):
            shown = [t for t in rows if rows[t][pe] is not None]
            if shown:
                summaries = [relative(rows[t][pe], rows[t]["uniform"]) for t in shown]
                mean_bars(left, shown, summaries, marker=marker, label=f"{pe} PE (± 2 s.e.)")
        beyond = [t for t in rows if t > config.T]  # the limit is 0 at T itself
        if beyond:
            left.plot(
                beyond,
                [blind_ratio(config.T, t, config.q) for t in beyond],
                ":",
                color="black",
                label="fitted fixed PE blind beyond T (limit)",
            )
        for level, style in ((OOD_BAR, "--"), (FIT_BAR, "-.")):
            left.axhline(level, color="grey", ls=style, lw=0.8, label=f"{level} x uniform")
        left.axvline(config.T, color="black", lw=0.6, ls=":")
        left.set_xscale("log", base=2)
        left.set_yscale("log")
        left.set_xlabel("evaluation length T' (trained at T, dotted)")
        left.set_ylabel("loss / uniform attention (mean over seeds)")
        left.set_title(f"d={config.d}, T={config.T}, q={config.q}, m_p={config.pe_dim}")
        left.legend(fontsize=7)
        _curves(right, records)
    return [path]


def _curves(ax: Any, records: list[Record]) -> None:
    for pe, marker in (("fixed", "s"), ("stochastic", "o")):
        points = curve_summary(records, pe)
        if points:
            mean_bars(
                ax, [s for s, _ in points], [v for _, v in points], marker=marker, label=f"{pe} PE"
            )
    ax.axhline(FIT_BAR, color="grey", ls="-.", lw=0.8, label=f"{FIT_BAR} x uniform")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("training step")
    ax.set_ylabel("training loss at T / uniform (window mean, ± 2 s.e.)")
    ax.set_title("in distribution")
    ax.legend(fontsize=7)
