"""B5.4's figure: per setting the trained FCNs' losses against their width beside the floor, and
the transformer's width needed (SPEC B5.4)."""

from __future__ import annotations

from pathlib import Path

from ...metrics import stats
from .. import plotting
from ..base import Record
from .config import TARGET, Config
from .verdict import TRANSFORMER_SHARE, setting_name, summarize


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    """Per setting: the floor against the width, the trained FCNs (±2 s.e.), the transformer's
    ``d + m_p*``, uniform attention and the target as lines."""
    from ...exact.selection_bounds import fcn_bottleneck_loss, uniform_attention_loss

    path = out / "fcn_selection.png"
    rows = summarize(records)
    with plotting.figure(path, ncols=max(1, len(rows)), width=5.0, height=4.2) as (_, axes):
        for ax, row in zip(axes, rows, strict=False):
            T, d, q = row["setting"]
            Td = row["Td"]
            uniform = float(uniform_attention_loss(T, q, d))
            top = max([Td * 2] + [r["width"] for r in row["nets"]])
            grid = list(range(1, top + 1))
            ax.plot(
                grid,
                [float(fcn_bottleneck_loss(T, q, d, w)) for w in grid],
                color="black",
                label="floor (any FCN of width w)",
            )
            ax.errorbar(
                [r["width"] for r in row["nets"]],
                [r["loss"] for r in row["nets"]],
                yerr=[2 * r["stderr"] for r in row["nets"]],
                fmt="o",
                capsize=3,
                label="trained MLPs (±2 s.e.)",
            )
            selector = row["selector"]
            if selector is not None and selector["width"] is not None:
                losses = next(
                    p["losses"] for p in selector["probes"] if p["size"] == selector["m_p"]
                )
                _, se = stats.mean_se(losses)
                ax.errorbar(
                    [selector["width"]],
                    [selector["loss"]],
                    yerr=[2 * se],
                    fmt="*",
                    ms=14,
                    color="crimson",
                    label=f"transformer d + m_p* = {selector['width']}",
                )
            ax.axhline(uniform, ls="--", color="grey", label="uniform attention")
            ax.axhline(
                TARGET * uniform, ls=":", color="tab:green", label=f"target {TARGET} x uniform"
            )
            ax.axvline(Td, ls=":", color="grey")
            ax.axvline(TRANSFORMER_SHARE * Td, ls="-.", color="crimson", alpha=0.4)
            ax.set_xlabel(f"first-layer width w (Td = {Td}; 0.25 Td dash-dot)")
            ax.set_ylabel("loss E|f - STS|^2")
            ax.set_title(setting_name(row["setting"]))
            ax.legend(fontsize=7)
    return [path]
