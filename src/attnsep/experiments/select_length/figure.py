"""B5.3's figure: the losses against ``T'``, B5.3b's training curves and B5.3c's loss against
``m_p`` (SPEC B5.3, Part E)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...metrics import stats
from ...metrics.laws import POWER
from .. import plotting
from ..base import Record
from ..select_common import mean_bars
from .config import Config
from .convergence import CLOSE, curves, running_mean, steps_to_converge
from .corollary import WITHIN, analyse, table
from .verdict import HALF, summarize


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    """B5.3's losses against ``T'``, B5.3b's training curves and, with ``corollary_widths``,
    B5.3c's panel."""
    path = out / "length_generalization.png"
    rows = summarize(records)
    lengths = list(rows)
    panels = 3 if config.corollary_widths else 2
    with plotting.figure(path, ncols=panels) as (_, axes):
        ax = axes[0]
        convergence_panel(axes[1], records)
        if panels == 3:
            corollary_panel(axes[2], records, config)
        for kind, label in (
            ("stochastic", "stochastic PE"),
            ("fixed", "fixed PE"),
            ("family", "best W = αI at T'"),
        ):
            shown = [t for t in lengths if rows[t][kind] is not None]
            if not shown:
                continue
            mean_bars(
                ax,
                shown,
                [rows[t][kind] for t in shown],
                marker="o" if kind != "family" else "s",
                label=f"{label} (± 2 s.e.)",
            )
        shown = [t for t in lengths if rows[t]["at_train_alpha"] is not None]
        if shown:
            ax.plot(
                shown,
                [rows[t]["at_train_alpha"]["mean"] for t in shown],
                ":",
                color="black",
                label="W = αI at the trained α (best at T)",
            )
        ax.plot(
            lengths,
            [rows[t]["uniform"] for t in lengths],
            "--",
            color="grey",
            label="uniform attention",
        )
        ax.plot(
            lengths,
            [HALF * rows[t]["uniform"] for t in lengths],
            ":",
            color="grey",
            label=f"{HALF} x uniform",
        )
        ax.axvline(config.T, color="black", lw=0.6, ls=":")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("evaluation length T' (trained at T, dotted)")
        ax.set_ylabel(f"loss on {config.eval_size} fixed sequences (exact over tokens)")
        ax.set_title(f"d={config.d}, T={config.T}, q={config.q}, m_p={config.pe_dim}")
        ax.legend(fontsize=8)
    return [path]


def convergence_panel(ax: Any, records: list[Record]) -> None:
    """B5.3b: each run's running mean of its per-step training losses, with its steps to
    converge marked (:func:`steps_to_converge`)."""
    runs = curves(records)
    if not any(runs.values()):
        ax.set_axis_off()
        return
    for pe, color in (("stochastic", "C0"), ("fixed", "C1")):
        for i, losses in enumerate(runs[pe]):
            ax.plot(running_mean(losses), color=color, lw=0.8, label=f"{pe} PE" if i == 0 else None)
            ax.axvline(steps_to_converge(losses), color=color, lw=0.5, ls=":")
    ax.set_yscale("log")
    ax.set_xlabel(f"training step (dotted: within {CLOSE:.0%} of the run's final loss from there)")
    ax.set_ylabel("training loss at T, running mean")
    ax.set_title("B5.3b: training-loss convergence")
    ax.legend(fontsize=8)


def corollary_panel(ax: Any, records: list[Record], config: Config) -> None:
    """Loss at ``k T`` / uniform against ``m_p`` (log-log): stochastic PE with ``± 2 s.e.``,
    the family at the trained ``α``, ``1.5 x`` it, the fitted ``c m_p^b`` and the loss at ``T``."""
    k = config.corollary_factor
    a = analyse(table(records, config), config.seed)
    rows = a["rows"]
    widths = list(rows)
    if not widths:
        ax.set_axis_off()
        return
    mean_bars(
        ax,
        widths,
        [r["ood"] for r in rows.values()],
        marker="o",
        label=f"stochastic PE at {k}T (± 2 s.e.)",
    )
    family = [r["family"]["mean"] for r in rows.values()]
    ax.plot(widths, family, ":", color="black", label=f"W = αI at the trained α, {k}T")
    ax.plot(
        widths, [WITHIN * f for f in family], "-.", color="green", lw=0.8, label=f"{WITHIN} x it"
    )
    mean_bars(
        ax,
        widths,
        [r["id"] for r in rows.values()],
        marker="s",
        color="grey",
        label="stochastic PE at T (± 2 s.e.)",
    )
    if a["exponent"] is not None:
        params = POWER.fit(widths, [r["ood"]["mean"] for r in rows.values()])
        ax.plot(
            widths,
            POWER.predict(params, widths),
            "--",
            color="C3",
            lw=0.8,
            label=f"fit c m_p^b, b = {stats.fmt_interval(*a['exponent'])}",
        )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("PE width m_p")
    ax.set_ylabel("loss / uniform attention's")
    ax.set_title(f"B5.3c: trained at T={config.T}, evaluated at T'={k}T")
    ax.legend(fontsize=8)
