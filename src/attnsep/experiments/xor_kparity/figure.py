"""A1.k's figure: collapse and steps to success against ``d`` per rule and gradient, collapse
per step size, steps against ``m`` (SPEC A1, A6; Part F's finding A1.k)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .. import plotting
from ..base import Record
from .config import RULE_NAMES, Config
from .verdict import TARGET, point

STYLES = {"constant": "C0", "capped": "C1"}
"""The colour of each step rule."""
MARKERS = {2: "D", 3: "o", 4: "s"}
"""The marker of each ``k`` (``o`` for any other)."""


def _steps_bars(ax, xs, points, budget: int, **style) -> None:
    """Median steps with bootstrap bars; an open upper end is drawn to the budget, a median
    never reached as a triangle at the budget."""
    vals = np.array([p["steps"][0] for p in points])
    lows = np.array([p["steps"][1] for p in points])
    highs = np.array([p["steps"][2] for p in points])
    highs = np.where(np.isinf(highs), float(budget), highs)
    xs, shown = np.asarray(xs, dtype=float), np.isfinite(vals)
    bars = plotting.bar_lengths(vals[shown], lows[shown], highs[shown])
    style.setdefault("marker", "o")
    line = ax.errorbar(xs[shown], vals[shown], yerr=bars, fmt="-", capsize=3, **style)
    unreached = np.isinf(vals)
    if unreached.any():
        color = line.lines[0].get_color()
        ax.plot(xs[unreached], [budget] * int(unreached.sum()), "^", color=color)


def _series(points, **key) -> list[dict[str, Any]]:
    """The points matching ``key``, by ``d`` (then ``m``)."""
    chosen = [p for p in points if all(p[f] == v for f, v in key.items())]
    return sorted(chosen, key=lambda p: (p["d"], p["m"]))


def _same(record: Record, p: dict[str, Any]) -> bool:
    """Whether ``record`` is the job of point ``p``."""
    return all(record.get(f, None) == p[f] for f in ("k", "d", "m", "role", "rule", "gradient"))


def _collapse_panel(ax, points: list[dict[str, Any]]) -> None:
    """Collapse at the best step size vs ``d`` (Wilson bars) per ``k``, rule and gradient, the
    target as a grey line."""
    for k in sorted({p["k"] for p in points}):
        for rule, name in RULE_NAMES.items():
            for gradient, ls in (("population", "-"), ("fixed", "--")):
                pts = _series(points, k=k, rule=rule, gradient=gradient, role="d")
                if not pts:
                    continue
                rates = np.array([p["collapse"] for p in pts])
                source = (
                    "population" if gradient == "population" else f"{pts[0]['samples']} samples"
                )
                ax.errorbar(
                    [p["d"] for p in pts],
                    rates[:, 0],
                    yerr=plotting.bar_lengths(rates[:, 0], rates[:, 1], rates[:, 2]),
                    marker=MARKERS.get(k, "o"),
                    ls=ls,
                    capsize=3,
                    color=STYLES[rule],
                    label=f"k={k}, {name}, {source}",
                )
    ax.axhline(TARGET, color="grey", ls=":", lw=0.8)
    ax.set_ylim(-0.05, 1.05)
    ax.set_ylabel("collapsed at the best step size (Wilson 95%)")
    ax.legend(fontsize=6)


def _steps_panel(ax, points: list[dict[str, Any]], budget: int) -> None:
    """Median steps to success among the non-collapsed vs ``d`` per ``k`` and rule
    (population)."""
    for k in sorted({p["k"] for p in points}):
        for rule, name in RULE_NAMES.items():
            pts = _series(points, k=k, rule=rule, gradient="population", role="d")
            if pts:
                _steps_bars(
                    ax,
                    [p["d"] for p in pts],
                    pts,
                    budget,
                    color=STYLES[rule],
                    marker=MARKERS.get(k, "o"),
                    label=f"k={k}, {name}",
                )
    ax.set_title("non-collapsed replicas (bootstrap 95%; ^: unreached)", fontsize=9)
    ax.legend(fontsize=6)


def _by_eta_panel(ax, records: list[Record], points: list[dict[str, Any]], first) -> None:
    """The first series' collapse per step size, per ``d`` and rule (population)."""
    for i, d in enumerate(sorted({p["d"] for p in points if p["k"] == first})):
        for rule, ls in (("constant", "-"), ("capped", "--")):
            for p in _series(points, k=first, d=d, rule=rule, gradient="population", role="d"):
                rec = next(r for r in records if _same(r, p))
                ax.plot(
                    rec["eta_exponents"],
                    p["collapse_by_step"],
                    marker="o",
                    ls=ls,
                    color=f"C{i % 10}",
                    label=f"d={d}, {RULE_NAMES[rule]}",
                )
    ax.set_xlabel("j  (eta = 2^j d^k ln d)")
    ax.set_ylabel("collapsed (population)")
    ax.set_title(f"k={first}: collapse per step size", fontsize=9)
    ax.set_ylim(-0.05, 1.05)
    ax.legend(fontsize=5, ncol=2)


def _by_m_panel(ax, points: list[dict[str, Any]], config: Config) -> None:
    """Median steps to success vs ``m`` per rule (the width series), or a note without one."""
    for rule, name in RULE_NAMES.items():
        widths = _series(points, rule=rule, role="m")
        if widths:
            _steps_bars(
                ax, [p["m"] for p in widths], widths, config.budget, color=STYLES[rule], label=name
            )
    if not any(p["role"] == "m" for p in points):
        ax.text(0.5, 0.5, "no width series in this preset", ha="center", transform=ax.transAxes)
    else:
        ax.set_title(f"k={config.width_k}, d={config.width_d}", fontsize=9)
        ax.legend(fontsize=7)


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    """Collapse rate vs ``d`` per rule and gradient, steps among the non-collapsed vs ``d``,
    collapse per step size, and steps vs ``m``."""
    path = out / "kparity_steps.png"
    points = [point(r) for r in records]
    with plotting.figure(path, ncols=4, width=4.6) as (_, (fold_ax, steps_ax, by_eta, by_m)):
        _collapse_panel(fold_ax, points)
        _steps_panel(steps_ax, points, config.budget)
        first = config.series[0].k if config.series else None
        _by_eta_panel(by_eta, records, points, first)
        _by_m_panel(by_m, points, config)
        for ax, xlabel in ((fold_ax, "d"), (steps_ax, "d"), (by_m, "m")):
            ax.set_xscale("log", base=2)
            ax.set_xlabel(xlabel)
        for ax in (steps_ax, by_m):
            ax.set_ylabel(f"median steps to certified error <= {config.success_tol:g}")
            ax.set_yscale("log", base=2)
            ax.set_ylim(bottom=0.8)
    return [path]
