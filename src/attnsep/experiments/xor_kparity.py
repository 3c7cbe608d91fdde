"""Beyond the papers — k-sparse parity with k heads: a few GD steps instead of one, and how often
the heads collapse (SPEC A1, A6; Part F's finding A1.k).

SPEC A1 generalizes sparse XOR to ``y = s prod_{a in S} x_a`` with ``|S| = k`` and the model
to ``H = k`` heads (A2; the anti-symmetric start becomes a regular simplex). Each job runs GD
for one ``(k, d, m)``, one step-size rule and one gradient at every step size of a grid
``eta = 2^j d^k ln d`` (SPEC A5's ``d^2 ln d`` for ``k = 2``; the scores' gradient at a
near-uniform start is of order ``d^-k``), all grid points and replicas at once: plain GD on the
exact population loss by ``train.grid_descent``, the capped step and the fixed-sample runs by
``train.capped_descent``. It records per replica the first step at
which the certified error is ``<= success_tol`` (the one-step claim's success, SPEC A6),
success after one step, and collapse after the last step.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ..configs import Device, Init, XorTrainConfig, inherit
from ..metrics import stats
from . import costs, plotting
from .base import (
    Experiment,
    ExperimentConfig,
    Exponent,
    InputLength,
    Positive,
    Record,
    register,
)

if TYPE_CHECKING:
    from ..train.grid_descent import GridRuns

SECTION = "beyond the papers"
"""The report section this finding belongs to: not a claim of either paper."""
TARGET = 0.05
"""The collapse rate the capped step is meant to stay under at ``k = 3``, ``d <= 64``."""
TARGET_K, TARGET_D = 3, 64
"""Where the target applies: ``k = 3``, ``d <= 64``."""
Rule = Literal["constant", "capped"]
Gradient = Literal["population", "fixed"]
RULE_NAMES = {"constant": "plain GD", "capped": "capped step"}
SCORE_CAP = 4.0
"""The cap on a step's largest score change (*choice*): on the development seed (master seed 1,
128 replicas, ``m = 32``, budget 100, ``k = 3, 4``, ``d = 16, 32, 64``, ``eta = 2^j d^k ln d``
for ``j = -10, -8, ..., 0``), every cap from 0.5 to 4 left no replica collapsed at any step size
(6 and 8: up to 2% and 3% at one step size, ``k = 4``) and none unreached within the budget at
the best step size (6 and 8: up to 7% and 12% at ``k = 4``); 4 is the largest such cap, at a
median of 4 to 5 steps to success (0.5: 15 to 22; plain GD 2 to 5)."""


class Series(BaseModel):
    """The sizes ``d`` at which ``k``-parity is run (at the main width ``m``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    k: int = Field(ge=2, le=4)
    d_values: list[InputLength] = Field(min_length=1)


class Config(ExperimentConfig):
    """Steps of GD to success for ``k``-sparse parity with ``k`` heads, and how often the heads
    collapse, vs ``d`` (width ``m``) and vs ``m`` (at ``d = width_d``), for plain GD and for the
    capped step.

    Runs: for each ``(k, d, m)``, each step-size rule of ``rules`` and each ``eta = 2^j d^k ln
    d`` of ``eta_exponents`` (the ``j``'s), ``seeds`` replicas run up to ``budget`` steps on the
    exact population gradient; at ``d <= samples_d_max`` (the ``d`` series) also on one fixed
    set of ``samples`` inputs per replica (``gradients``), at the ``j``'s of
    ``samples_eta_exponents``. Rules: ``constant`` is plain GD; ``capped`` shortens each step so
    that no score ``v_a . theta_h`` moves by more than ``score_cap`` (``train.capped_descent``).

    Initialization (SPEC A2, *choice* for ``k >= 3``): ``init``, used for ``k >= 3`` (``k = 2``
    always starts anti-symmetric). The default ``antisymmetric`` is, for ``k`` heads, the regular
    simplex centred at 0 in a uniformly random orientation (unit norms, pairwise inner products
    ``-1/(k-1)``); ``orthogonal`` (a random orthonormal frame) and ``independent`` are options.
    A replica collapses (here ``metrics.parity.collapsed``: every head on a support bit, two on
    one) mostly when the heads' first preferences
    (each head's largest score ``v_a . theta_h`` among the support bits) are not a permutation:
    at ``k = 3, d = 64`` (128 seeds, ``eta = 2^-4 d^k ln d``) 1 of 66 such starts collapsed,
    17 of the 62 others. For unit-norm heads with one pairwise inner product, that chance falls
    as the inner product rises, so the simplex, with the most negative one, gives the most: 0.51
    at ``k = 3`` and 0.25 at ``k = 4``, against 0.22 and 0.09 for an orthogonal frame (a simplex
    shrunk by ``sqrt((k-1)/k)`` plus a direction common to all heads). Collapse at the best step
    size, simplex / orthogonal (seed 0, 128 seeds, ``m = 32``, ``j = -6 ... 4``, budget 200):
    ``k = 3``: 0.09 / 0.11 at ``d = 16``, 0.14 / 0.21 at ``d = 64``; ``k = 4``: 0.25 / 0.34 at
    ``d = 16``, 0.29 / 0.30 at ``d = 64``.

    Why, and what removes it (development seed 1, 128 replicas, ``m = 32``, budget 100, the
    simplex start; collapse as the finding defines it below): collapse is a large-step effect.
    Plain GD's collapse at ``k = 3``, ``d = 16, 32, 64`` is 0, 0.01, 0.01 at ``j = -10``; 0.09,
    0.27, 0.18 at ``j = -4``; 0.42, 0.49, 0.53 at ``j = -2``; at ``k = 4``, ``d = 64`` it falls
    from 0.20 at ``j = -10`` to 0.02 at ``j = -14`` (budget 1500): close to gradient flow the
    heads separate, but only after tens of steps. Tried (collapse at ``k = 3``, ``d = 16 ...
    64``, at the best step size below): a warm-up of 4 steps at ``eta / 16`` (0.09-0.27), a
    doubling ramp from ``eta / 32`` (0.04-0.29), per-head random norms ``exp(0.5 z)``
    (0.13-0.46), norms halving from head to head (0.23-0.36), per-head step factors ``4^-h``
    (0.13-0.21) and ``16^-h`` (0.02-0.20): none stays under 0.05. The capped step leaves no
    replica collapsed at any step size of the grid, at ``k = 3`` and 4, for every cap from 0.5
    to 4 (``SCORE_CAP``); at 1000 fixed samples (the fixed-sample grid) the cap 4 leaves none at
    ``k = 3`` and at most 2 of 128 at ``k = 4``, where at ``d = 64`` few replicas succeed with
    either rule (the heads settle on non-support bits: *stuck*).

    Finding (version 3, SPEC Part F: beyond the papers, no verdict and no calibration; written
    after master seeds 0, 1 and 3 were seen): a replica's *steps to success* is the first step
    with certified error ``<= success_tol`` (SPEC A6); it is *collapsed* when it never succeeds
    within the budget and, after the last step, two heads put their largest weight on the same
    support bit, whatever the other heads do (SPEC A6's collapse), *stuck* when it never
    succeeds and is not collapsed. For each ``(k, d, m)``, rule and gradient, the *best step
    size* is the grid point with the fewest median steps to success over all replicas
    (unreached: infinite), ties to the larger share succeeding, then the smaller step. At it:
    the collapse rate with its Wilson 95% interval; the median steps to success among the
    non-collapsed replicas (a stuck one counts as infinite) with its bootstrap 95% interval over
    them; the stuck rate; and beside them the one-step rate (the largest share, over the grid,
    that succeeds after exactly one step, Wilson). The reason states, for each gradient, whether
    the capped step's collapse rate is ``<= 0.05`` at ``k = 3`` and every ``d <= 64`` (point
    estimates, with the largest Wilson upper end), beside plain GD's.
    """

    series: list[Series] = Field(default=[Series(k=3, d_values=[16, 32, 64, 128])])
    m: int = inherit(XorTrainConfig, "m")
    m_values: list[Positive] = Field(default=[])
    width_k: int = Field(default=3, ge=2, le=4)
    width_d: InputLength = 64
    seeds: Positive = 16
    eta_exponents: list[Exponent] = Field(default=[-4.0, -2.0, 0.0, 2.0], min_length=1)
    budget: Positive = 100
    success_tol: float = inherit(XorTrainConfig, "success_tol")
    init: Init = inherit(XorTrainConfig, "init")
    rules: list[Rule] = Field(default=["constant", "capped"], min_length=1)
    """Step-size rules: ``constant`` (plain GD) and ``capped`` (``train.capped_descent``)."""
    score_cap: float = Field(default=SCORE_CAP, gt=0)
    """The capped step's largest score change per step."""
    gradients: list[Gradient] = Field(default=["population", "fixed"], min_length=1)
    """``population``: the exact gradient; ``fixed``: one set of ``samples`` inputs."""
    samples: Positive = 1000
    samples_d_max: int = Field(default=64, ge=0)
    """The fixed-sample runs' largest ``d`` (the ``d`` series only)."""
    samples_eta_exponents: list[Exponent] = Field(default=[-8.0, -6.0, -4.0], min_length=1)
    """The fixed-sample runs' step sizes ``2^j d^k ln d``."""
    device: Device = "cpu"


RULE_TEXT = " ".join((Config.__doc__ or "").split("Finding (")[1].split()).replace("\\", "")
"""The finding's definitions exactly as the config's docstring states them."""


class Job(NamedTuple):
    k: int
    d: int
    m: int
    role: str  # "d": the d series at width m; "m": the width series at d = width_d
    rule: Rule
    gradient: Gradient


def jobs(config: Config) -> list[Job]:
    """Every run: each ``d`` series at width ``m`` (role ``"d"``; the fixed-sample runs at ``d
    <= samples_d_max``), then ``k = width_k`` at ``d = width_d`` for each of ``m_values`` (role
    ``"m"``, population only), each for every rule."""
    out = [
        Job(s.k, d, config.m, "d", rule, gradient)
        for s in config.series
        for d in s.d_values
        for gradient in config.gradients
        if gradient == "population" or d <= config.samples_d_max
        for rule in config.rules
    ]
    if "population" in config.gradients:
        out += [
            Job(config.width_k, config.width_d, m, "m", rule, "population")
            for m in config.m_values
            for rule in config.rules
        ]
    return out


def split(config: Config) -> list[Config]:
    """One job per ``(k, d, m)``, rule and gradient."""
    return [
        config.model_copy(
            update={
                "series": [Series(k=j.k, d_values=[j.d])] if j.role == "d" else [],
                "m_values": [] if j.role == "d" else [j.m],
                "rules": [j.rule],
                "gradients": [j.gradient],
            }
        )
        for j in jobs(config)
    ]


# --- running ---------------------------------------------------------------------------------


def initialization(k: int, config: Config) -> Init:
    """The start of the ``k``-head runs: ``config.init`` for ``k >= 3``; ``k = 2`` keeps the
    paper's anti-symmetric start (SPEC A2)."""
    return "antisymmetric" if k == 2 else config.init


def descend(job: Job, config: Config) -> tuple[GridRuns, np.ndarray]:
    """GD at every grid step size at once (plain GD on the population gradient by
    ``train.grid_descent``, the rest by ``train.capped_descent``), and per
    replica and step size whether two heads share a support bit after the last step."""
    from ..train.capped_descent import capped_descent, shared_support_bit
    from ..train.grid_descent import grid_descent

    base = train_config(job.k, job.d, job.m, config, job.gradient)
    grid = etas(job.k, job.d, config, job.gradient)
    if job.rule == "constant" and job.gradient == "population":
        got = grid_descent(base, grid, config.budget)
    else:
        cap = config.score_cap if job.rule == "capped" else None
        got = capped_descent(base, grid, config.budget, cap)
    return got, shared_support_bit(base, got.theta).numpy()


def train_config(
    k: int, d: int, m: int, config: Config, gradient: Gradient = "population"
) -> XorTrainConfig:
    """The replicas of one ``(k, d, m)``: seeds, start, tolerance and device of ``config``;
    ``fixed``: one set of ``config.samples`` inputs per replica."""
    return XorTrainConfig(
        d=d,
        m=m,
        k=k,
        seeds=config.seeds,
        seed=config.seed,
        success_tol=config.success_tol,
        init=initialization(k, config),
        device=config.device,
        gradient=gradient,
        samples=config.samples if gradient == "fixed" else None,
    )


def exponents(config: Config, gradient: str = "population") -> list[float]:
    """The grid's ``j``'s for ``gradient``."""
    return list(config.samples_eta_exponents if gradient == "fixed" else config.eta_exponents)


def etas(k: int, d: int, config: Config, gradient: str = "population") -> list[float]:
    """The grid's step sizes ``2^j d^k ln d``."""
    from ..configs import default_train_eta

    unit = default_train_eta(d, k, 1.0)
    return [2.0**j * unit for j in exponents(config, gradient)]


def run(config: Config) -> list[Record]:
    from ..core.device import torch_threads

    records = []
    with torch_threads(1):
        for job in jobs(config):
            got, shared = descend(job, config)
            records.append(
                {
                    **job._asdict(),
                    "samples": config.samples if job.gradient == "fixed" else None,
                    "score_cap": config.score_cap if job.rule == "capped" else None,
                    "seeds": config.seeds,
                    "budget": config.budget,
                    "eta_exponents": exponents(config, job.gradient),
                    "steps": got.steps(),
                    "one_step": got.one_step.tolist(),
                    "collapsed": shared.tolist(),
                    "init": initialization(job.k, config),
                }
            )
    return records


# --- the finding -----------------------------------------------------------------------------


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


def finding(records: list[Record], config: Config) -> dict:
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


# --- figure ----------------------------------------------------------------------------------


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


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    """Collapse rate vs ``d`` per rule and gradient, steps among the non-collapsed vs ``d``,
    collapse per step size, and steps vs ``m``."""
    path = out / "kparity_steps.png"
    points = [point(r) for r in records]
    styles = {"constant": "C0", "capped": "C1"}
    with plotting.figure(path, ncols=4, width=4.6) as (_, (fold_ax, steps_ax, by_eta, by_m)):
        for k in sorted({p["k"] for p in points}):
            marker = {2: "D", 3: "o", 4: "s"}.get(k, "o")
            for rule, name in RULE_NAMES.items():
                for gradient, ls in (("population", "-"), ("fixed", "--")):
                    pts = _series(points, k=k, rule=rule, gradient=gradient, role="d")
                    if not pts:
                        continue
                    rates = np.array([p["collapse"] for p in pts])
                    source = (
                        "population" if gradient == "population" else f"{pts[0]['samples']} samples"
                    )
                    fold_ax.errorbar(
                        [p["d"] for p in pts],
                        rates[:, 0],
                        yerr=plotting.bar_lengths(rates[:, 0], rates[:, 1], rates[:, 2]),
                        marker=marker,
                        ls=ls,
                        capsize=3,
                        color=styles[rule],
                        label=f"k={k}, {name}, {source}",
                    )
                pts = _series(points, k=k, rule=rule, gradient="population", role="d")
                if pts:
                    _steps_bars(
                        steps_ax,
                        [p["d"] for p in pts],
                        pts,
                        config.budget,
                        color=styles[rule],
                        marker=marker,
                        label=f"k={k}, {name}",
                    )
        first = config.series[0].k if config.series else None
        for i, d in enumerate(sorted({p["d"] for p in points if p["k"] == first})):
            for rule, ls in (("constant", "-"), ("capped", "--")):
                for p in _series(points, k=first, d=d, rule=rule, gradient="population", role="d"):
                    rec = next(r for r in records if _same(r, p))
                    by_eta.plot(
                        rec["eta_exponents"],
                        p["collapse_by_step"],
                        marker="o",
                        ls=ls,
                        color=f"C{i % 10}",
                        label=f"d={d}, {RULE_NAMES[rule]}",
                    )
        for rule, name in RULE_NAMES.items():
            widths = _series(points, rule=rule, role="m")
            if widths:
                _steps_bars(
                    by_m,
                    [p["m"] for p in widths],
                    widths,
                    config.budget,
                    color=styles[rule],
                    label=name,
                )
        if not any(p["role"] == "m" for p in points):
            by_m.text(
                0.5, 0.5, "no width series in this preset", ha="center", transform=by_m.transAxes
            )
        else:
            by_m.set_title(f"k={config.width_k}, d={config.width_d}", fontsize=9)
            by_m.legend(fontsize=7)
        for ax, xlabel in ((fold_ax, "d"), (steps_ax, "d"), (by_m, "m")):
            ax.set_xscale("log", base=2)
            ax.set_xlabel(xlabel)
        fold_ax.axhline(TARGET, color="grey", ls=":", lw=0.8)
        fold_ax.set_ylim(-0.05, 1.05)
        fold_ax.set_ylabel("collapsed at the best step size (Wilson 95%)")
        fold_ax.legend(fontsize=6)
        for ax in (steps_ax, by_m):
            ax.set_ylabel(f"median steps to certified error <= {config.success_tol:g}")
            ax.set_yscale("log", base=2)
            ax.set_ylim(bottom=0.8)
        steps_ax.set_title("non-collapsed replicas (bootstrap 95%; ^: unreached)", fontsize=9)
        steps_ax.legend(fontsize=6)
        by_eta.set_xlabel("j  (eta = 2^j d^k ln d)")
        by_eta.set_ylabel("collapsed (population)")
        by_eta.set_title(f"k={first}: collapse per step size", fontsize=9)
        by_eta.set_ylim(-0.05, 1.05)
        by_eta.legend(fontsize=5, ncol=2)
    return [path]


def _same(record: Record, p: dict[str, Any]) -> bool:
    """Whether ``record`` is the job of point ``p``."""
    return all(record.get(f, None) == p[f] for f in ("k", "d", "m", "role", "rule", "gradient"))


# --- cost (``attnsep reproduce --plan``): the work of one job ---------------------------------


def work(c: costs.Config) -> costs.Parts:
    """Every run (replica x step size) at every step of the budget. Population: ``k 2^k d m``
    each, the count of the autograd loop that ran before ``train.grid_descent``, kept because it
    still orders the jobs within about 2x and the plan fits its seconds per unit on timed jobs
    (measured on ``grid_descent``: a run-step costs about ``k d (m + 100)`` products' worth plus
    about 2.5 ms a step in Python, and only 20% to 50% of the run-steps are evaluated; counts
    built on that predicted the standard timings from the quick ones worse than this one).
    Fixed samples: ``2 k n d`` each (the products of ``train.xor_train.sample_gradient``), on
    their own grid."""
    rules = len(c.get("rules", ["constant"]))
    gradients = c.get("gradients", ["population"])
    population = fixed = 0.0
    if "population" in gradients:
        runs = [(s["k"], d, c["m"]) for s in c["series"] for d in s["d_values"]]
        runs += [(c["width_k"], c["width_d"], m) for m in c["m_values"]]
        steps = len(c["eta_exponents"]) * c["budget"]
        population = rules * steps * c["seeds"] * sum(k * 2**k * d * m for k, d, m in runs)
    if "fixed" in gradients:
        sizes = [(s["k"], d) for s in c["series"] for d in s["d_values"]]
        steps = len(c["samples_eta_exponents"]) * c["budget"]
        fixed = (
            rules
            * steps
            * c["seeds"]
            * sum(2 * k * c["samples"] * d for k, d in sizes if d <= c["samples_d_max"])
        )
    return {"population": population, "samples": fixed}


def peak(c: costs.Config) -> float:
    """The largest run's memory (runs one after another): its replicas' embeddings, data and
    trajectories (``XorTrainConfig.peak_bytes`` of ``train_config``), the grid's ``E x G`` runs'
    query vectors and gradients (five ``H x m`` arrays a run), and the ``H x d`` score-sized rows
    of the runs evaluated together: plain GD on the population gradient
    (``train.grid_descent``) in chunks of about 48 MB (its ``CHUNK_BYTES``); the capped step and
    fixed samples (``train.capped_descent``) in chunks of whole replicas of at most ``2^22``
    numbers a score-sized array (its ``CHUNK_NUMBERS``), about sixteen such arrays (measured at
    ``d = 1024``), with fixed samples also the chunk's ``n x G x H`` projections on its data."""
    config = Config(**c)
    peaks = []
    for job in jobs(config):
        G, E, H, d = len(exponents(config, job.gradient)), config.seeds, job.k, job.d
        numbers = 5.0 * E * G * H * job.m
        if job.rule == "constant" and job.gradient == "population":
            numbers += min(6 << 20, 48 * E * G * H * d)
        else:
            chunk = min(E, max(1, (1 << 22) // (G * H * d)))
            numbers += 16 * chunk * G * H * d
            if job.gradient == "fixed":
                numbers += 2 * H * chunk * config.samples * G * H
        base = train_config(job.k, d, job.m, config, job.gradient)
        peaks.append(base.peak_bytes() + 8 * numbers)
    return max(peaks)


EXPERIMENT = register(
    Experiment(
        work=work,
        peak=peak,
        name="kparity-steps",
        claim="A1.k",
        title="k-sparse parity: steps and the heads' collapse (beyond the papers)",
        paper="Not a claim of the papers (SPEC A1 generalization): with k = 3 (and 4) heads, a "
        "few population GD steps reach success where k = 2 needs one, but some replicas collapse "
        "(two heads on one support bit) and never do; how often, and what removes it.",
        config_type=Config,
        run=run,
        figure=figure,
        verdict=finding,
        split=split,
        section=SECTION,
        kind="finding",
        criterion_version=3,
        # 3: a finding (SPEC Part F): collapse rate and steps among the non-collapsed, plain GD
        # beside the capped step, population beside fixed samples
        tuned_on=(0, 1, 3),
        # 3: records carry the rule and the gradient; the capped and fixed-sample runs added
        version=3,
        presets={
            "quick": {
                "series": [{"k": 3, "d_values": [16, 32, 64, 128]}],
                "m_values": [],
                "seeds": 16,
                "eta_exponents": [-8.0, -6.0, -4.0, -2.0],
                "budget": 100,
            },
            "standard": {
                "series": [
                    {"k": 3, "d_values": [16, 32, 64, 128, 256, 512, 1024]},
                    {"k": 4, "d_values": [16, 32, 64, 128, 256, 512, 1024]},
                ],
                "m_values": [8, 16, 64],
                "width_k": 3,
                "width_d": 256,
                "seeds": 64,
                "eta_exponents": [-10.0, -8.0, -6.0, -4.0, -2.0, 0.0],
                "budget": 100,
            },
            "full": {
                "series": [
                    {"k": 3, "d_values": [2**j for j in range(4, 14)]},
                    {"k": 4, "d_values": [2**j for j in range(4, 11)]},
                ],
                "m_values": [8, 16, 64, 128],
                "width_d": 1024,
                "seeds": 128,
                "eta_exponents": [j / 2 for j in range(-20, 9)],
                "budget": 1000,
                "device": "auto",
            },
        },
    )
)
