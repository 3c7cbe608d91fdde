"""A1.k's finding from the records: per job, at its best step size, the collapse rate, the steps
to success among the non-collapsed replicas and the one-step rate; the capped step's collapse
against its target (SPEC A1, A6; Part F's finding A1.k)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...metrics import stats
from ..base import Record
from .config import RULE_NAMES, Config

TARGET = 0.05
"""The collapse rate the capped step is meant to stay under at ``k = 3``, ``d <= 64``."""
TARGET_K, TARGET_D = 3, 64
"""Where the target applies: ``k = 3``, ``d <= 64``."""

RULE_TEXT = " ".join((Config.__doc__ or "").split("Finding (")[1].split()).replace("\\", "")
"""The finding's definitions exactly as the config's docstring states them."""


def steps_matrix(record: Record) -> np.ndarray:
    """``seeds x grid`` steps to success, ``inf`` where not reached."""
    return np.array(
        [[math.inf if s is None else s for s in row] for row in record["steps"]], dtype=float
    )


def best_index(matrix: np.ndarray, exps: list[float]) -> int:
    """The best step size: fewest median steps, then the larger share succeeding, then the
    smaller step."""
    medians = np.median(matrix, axis=0)
    reached = np.isfinite(matrix).mean(axis=0)
    return int(np.lexsort((np.asarray(exps), -reached, medians))[0])


def point(record: Record) -> dict[str, Any]:
    """The finding's numbers of one job (``Config``'s docstring) at its best step size."""
    matrix = steps_matrix(record)
    best = best_index(matrix, record["eta_exponents"])
    steps = matrix[:, best]
    fold = np.array(record["collapsed"], dtype=bool)[:, best] & np.isinf(steps)
    n, lost = len(steps), int(fold.sum())
    one = np.array(record["one_step"], dtype=bool).sum(axis=0)  # per grid point
    return {
        **{key: record[key] for key in ("k", "d", "m", "role", "budget")},
        "rule": record.get("rule", "constant"),
        "gradient": record.get("gradient", "population"),
        "samples": record.get("samples"),
        "seeds": n,
        "best_exponent": record["eta_exponents"][best],
        "collapsed": lost,
        "collapse": (lost / n, *stats.wilson(lost, n)),
        "stuck": float((np.isinf(steps) & ~fold).mean()),
        "steps": stats.median_interval(steps[~fold], seed=record["d"]),
        "one_step": (int(one.max()) / n, *stats.wilson(int(one.max()), n)),
        "collapse_by_step": (np.array(record["collapsed"], dtype=bool) & np.isinf(matrix))
        .mean(axis=0)
        .tolist(),
    }


def label(p: dict[str, Any]) -> str:
    """``k=3, d=64, capped step, population`` (and ``m`` in the width series)."""
    source = "population" if p["gradient"] == "population" else f"{p['samples']} samples"
    width = f", m={p['m']}" if p["role"] == "m" else ""
    return f"k={p['k']}, d={p['d']}{width}, {RULE_NAMES[p['rule']]}, {source}"


def describe(p: dict[str, Any]) -> str:
    """One job's numbers in words."""
    return (
        f"{label(p)}: collapsed {stats.fmt_interval(*p['collapse'])} ({p['collapsed']}/"
        f"{p['seeds']}), stuck {p['stuck']:.2f}, steps to success among the non-collapsed "
        f"{stats.fmt_interval(*p['steps'])} (best eta 2^{p['best_exponent']:g} d^k ln d), "
        f"one-step rate {stats.fmt_interval(*p['one_step'])}"
    )


def target_clause(points: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Per gradient: the capped step's collapse at ``k = 3``, ``d <= 64`` against the target,
    beside plain GD's; each clause with its summary."""
    out = []
    for gradient in ("population", "fixed"):
        chosen = [
            p
            for p in points
            if p["k"] == TARGET_K and p["gradient"] == gradient and p["d"] <= TARGET_D
        ]
        by_rule = {r: [p for p in chosen if p["rule"] == r] for r in RULE_NAMES}
        if not by_rule["capped"]:
            continue
        capped = by_rule["capped"]
        worst = max(p["collapse"][0] for p in capped)
        upper = max(p["collapse"][2] for p in capped)
        met = "meets" if worst <= TARGET else "misses"
        source = "population" if gradient == "population" else f"{capped[0]['samples']} samples"
        clause = (
            f"{source}, k={TARGET_K}, d <= {TARGET_D}: the capped step {met} collapse <= "
            f"{TARGET:g} (at most {worst:.3f}; Wilson upper ends up to {upper:.3f})"
        )
        short = f"collapse: capped step {worst:.3f} {'<=' if worst <= TARGET else '>'} {TARGET:g}"
        if by_rule["constant"]:
            rates = [p["collapse"][0] for p in by_rule["constant"]]
            clause += f", plain GD collapses in {span(rates)}"
            short = stats.fitting(f"{short}, plain GD {span(rates)}", short)
        out.append((clause, short))
    return out


def span(values: list[float], form: str = ".3f") -> str:
    """``low-high`` of ``values`` (one number when they agree)."""
    low, high = format(min(values), form), format(max(values), form)
    return low if low == high else f"{low}-{high}"


def verdict(records: list[Record], config: Config) -> dict:
    points = [point(r) for r in records]
    points.sort(
        key=lambda p: (p["role"], p["k"], p["gradient"] != "population", p["rule"], p["d"], p["m"])
    )
    estimates, measured = [], []
    for p in points:
        name = label(p)
        estimates.append(stats.estimate(f"{name}: collapse rate", *p["collapse"]))
        estimates.append(stats.estimate(f"{name}: steps to success (non-collapsed)", *p["steps"]))
        estimates.append(stats.estimate(f"{name}: one-step rate", *p["one_step"]))
        measured.append(describe(p))
    clauses = target_clause(points) + steps_clause(points)
    reason = "; ".join(clause for clause, _ in clauses) or "no job was run"
    return stats.claim(
        stats.FINDING,
        reason,
        "; ".join(measured),
        RULE_TEXT
        + f" ({config.seeds} seeds, budget {config.budget} steps, {config.init} start at k >= 3,"
        f" score cap {config.score_cap:g})",
        estimates,
        summary=clauses[0][1] if clauses else "no job was run",
    )


def steps_clause(points: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The median steps among the non-collapsed replicas, per ``k`` and rule (population, the
    ``d`` series), as a range over ``d``; each clause with its summary."""
    out = []
    for k in sorted({p["k"] for p in points}):
        for rule, name in RULE_NAMES.items():
            values = [
                p["steps"][0]
                for p in points
                if (p["k"], p["rule"], p["gradient"], p["role"]) == (k, rule, "population", "d")
            ]
            if values:
                out.append(
                    (
                        f"k={k}, {name}: the non-collapsed replicas' median steps to success "
                        f"{span(values, 'g')} over d",
                        f"k={k}, {name}: median steps to success {span(values, 'g')} over d",
                    )
                )
    return out
