"""B5.3d's figure: each mode's loss relative to uniform against the test length (SPEC B5.3;
Part G, item B5.3d)."""

from __future__ import annotations

from pathlib import Path

from .. import plotting
from ..base import Record
from ..select_common import mean_bars
from .config import Config
from .verdict import summarize


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    """Each mode's loss / uniform against the test length (± 2 s.e.), the family at the trained
    ``α``, uniform attention, and the training range shaded."""
    path = out / "randomized_pe.png"
    rows = summarize(records)
    with plotting.figure(path) as (_, (ax,)):
        for pe, marker in (("stochastic", "o"), ("fixed", "s")):
            shown = [t for t in rows if rows[t][pe] is not None]
            if shown:
                ratios = [_scaled(rows[t][pe], rows[t]["uniform"]) for t in shown]
                mean_bars(ax, shown, ratios, marker=marker, label=f"{pe} PE (± 2 s.e.)")
        shown = [t for t in rows if rows[t]["family"] is not None]
        if shown:
            ax.plot(
                shown,
                [rows[t]["family"]["mean"] / rows[t]["uniform"] for t in shown],
                ":",
                color="black",
                label="W = αI at the trained α",
            )
        ax.axhline(1.0, color="grey", ls="--", lw=0.8, label="uniform attention")
        ax.axvspan(config.first, config.T, color="grey", alpha=0.15, label="training lengths")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("test length T'")
        ax.set_ylabel(f"loss / uniform ({config.eval_size} sequences per T')")
        ax.set_title(f"d={config.d}, q={config.q}, m_p={config.pe_dim}")
        ax.legend(fontsize=7)
    return [path]


def _scaled(summary: dict[str, float], scale: float) -> dict[str, float]:
    return {k: v / scale for k, v in summary.items()}
