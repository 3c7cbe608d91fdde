"""A7.3 — softmax is necessary: steps of GD to a small population loss, per attention map.

Each map (softmax, linear, erf, the normalized erf and its shift-invariant form, SPEC
Part D) runs gradient descent on the exact population loss (SPEC A4) at every step size of a
log grid; per replica the number of steps to reach loss <= ``target`` is recorded. Each map is
judged at its own best step size; after the step budget its specialization and collapse rates
(SPEC A6) carry Wilson intervals and its median steps a bootstrap interval over replicas.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import Field

from ..configs import AttentionName, OneStepConfig, inherit
from ..metrics import stats
from . import plotting
from .base import Device, Experiment, ExperimentConfig, Exponent, Positive, Record, register

if TYPE_CHECKING:
    import torch

    from ..models.query_heads import QueryHeads
    from ..train.descent import Descent

SOFTMAX = "softmax"
LOSS_FLOOR = 1e-16
"""Losses below this (softmax reaches exactly 0 in float64) are drawn at it on log axes."""


class Config(ExperimentConfig):
    """Steps of population GD to loss <= ``target`` per attention map, each at its best eta.

    Best eta (fixed before any numbers): the grid point with the smallest median
    steps-to-target over the replicas (never reached within the budget counts as infinite),
    ties broken by the smaller median final loss; an eta at which any replica's loss, gradient
    or query vectors become non-finite is recorded as diverged and never chosen. When
    ``screen_steps < budget`` the grid is screened first: every grid point runs
    ``screen_steps`` steps and is ranked by that rule on the screen; the ``refine``
    best-ranked points then run the whole budget (GD is deterministic, so they continue from
    the screen) and the best eta is chosen among them.

    Criterion: reproduced when softmax's median steps-to-target is 1 and its specialization
    rate after the budget is >= 0.9, and every other map needs >= 10x softmax's median steps
    (or never reaches the target within the budget) and specializes less often with separated
    intervals (its Wilson upper bound below softmax's Wilson lower bound); not reproduced when
    some other map matches softmax on both (median steps < 10x softmax's and a specialization
    Wilson interval that overlaps or exceeds softmax's); inconclusive otherwise, naming the map
    and whether more seeds or a larger step budget would decide.
    """

    d: int = Field(default=256, ge=2)
    m: int = inherit(OneStepConfig, "m")
    seeds: int = Field(default=64, ge=1)
    maps: list[AttentionName] = Field(
        default=[SOFTMAX, "linear", "erf", "normalized-erf", "shifted-erf"], min_length=1
    )
    eta_exponents: list[Exponent] = Field(default=[k / 2 for k in range(25)], min_length=1)
    budget: Positive = 1000
    screen_steps: Positive | None = 100
    refine: Positive = 3
    target: float = Field(default=0.01, gt=0)
    device: Device = "cpu"


CRITERION = " ".join((Config.__doc__ or "").split("Criterion:")[1].split())
"""The rule exactly as the config's docstring states it."""


def split(config: Config) -> list[Config]:
    return [config.model_copy(update={"maps": [name]}) for name in config.maps]


# --- running ---------------------------------------------------------------------------------


def __getattr__(name: str) -> Any:
    """``Descent``: GD at one step size on all replicas (``train.descent``), loaded with torch
    on first use (PEP 562)."""
    if name == "Descent":
        from ..train.descent import Descent

        return Descent
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def grid_point(run: Descent, exponent: float, target: float) -> Record:
    """A run at one step size ``10^exponent``, summarized as a point of the eta grid."""
    diverged = run.diverged_at is not None
    steps = run.steps_to(target)
    median = stats.median(math.inf if s is None else s for s in steps)
    return {
        "exponent": exponent,
        "eta": run.eta,
        "diverged": diverged,
        "diverged_at": run.diverged_at,
        "horizon": run.steps,
        "steps": steps,
        "median_steps": median if math.isfinite(median) else None,
        "median_loss": None if diverged else stats.median(run.losses[-1].tolist()),
        "one_step_loss": stats.median(run.losses[1].tolist()) if run.steps >= 1 else None,
    }


def rank_key(point: Record) -> tuple[float, float]:
    """The best-eta rule: smallest median steps (``None`` = infinite), then the smaller loss."""
    steps = point["median_steps"]
    return (math.inf if steps is None else steps, point["median_loss"])


def outcomes(model: QueryHeads, theta: torch.Tensor, support: torch.Tensor) -> dict:
    from ..metrics.parity import collapsed, specialized

    gamma = model.weights(theta)
    return {
        "specialized": specialized(gamma, support).tolist(),
        "collapsed": collapsed(gamma, support).tolist(),
    }


def run(config: Config) -> list[Record]:
    from ..device import torch_threads

    with torch_threads(1):
        return [run_map(config, name) for name in config.maps]


def run_map(config: Config, name: str) -> Record:
    """One map: screen the grid, run the budget at the chosen points, keep the best (docstring
    of ``Config``)."""
    from ..device import resolve_device
    from ..models.query_heads import QueryHeads, initial_queries
    from ..tasks.parity import SparseParity
    from ..train.descent import Descent
    from ..train.parity import population_objective

    device = resolve_device(config.device)
    task = SparseParity(config.d)
    support = task.supports(config.seed, config.seeds).to(device)
    theta0 = initial_queries(config.seed, config.seeds, 2, config.m).to(device)
    model = QueryHeads.sample(
        config.seed, config.seeds, config.d, config.m, attention=name, device=device
    )
    objective = population_objective(model, task, support)
    screen = min(config.screen_steps or config.budget, config.budget)
    runs = {e: Descent(objective, theta0, 10.0**e) for e in config.eta_exponents}
    for descent in runs.values():
        descent.run_to(screen)
    screened = [grid_point(runs[e], e, config.target) for e in config.eta_exponents]
    ranked = sorted((p for p in screened if not p["diverged"]), key=rank_key)
    chosen = ranked if screen == config.budget else ranked[: config.refine]
    for point in chosen:
        runs[point["exponent"]].run_to(config.budget)
    full = {
        p["exponent"]: grid_point(runs[p["exponent"]], p["exponent"], config.target) for p in chosen
    }
    curve = [full.get(p["exponent"], p) for p in screened]
    finished = [p for p in full.values() if not p["diverged"]]
    best = None
    if finished:
        point = min(finished, key=rank_key)
        descent = runs[point["exponent"]]
        after_one = outcomes(model, descent.after_one, support)
        best = {
            **point,
            "final_loss": descent.losses[-1].tolist(),
            **outcomes(model, descent.theta, support),
            "one_step_losses": descent.losses[1].tolist(),
            "one_step_specialized": after_one["specialized"],
            "one_step_collapsed": after_one["collapsed"],
            "loss_curve": [stats.median(loss.tolist()) for loss in descent.losses],
        }
    return {
        "attention": name,
        "d": config.d,
        "m": config.m,
        "seeds": config.seeds,
        "budget": config.budget,
        "screen_steps": screen,
        "target": config.target,
        "curve": curve,
        "best": best,
    }


# --- verdict -----------------------------------------------------------------------------------


DESCRIBED = {
    "steps": "median steps to the target",
    "specialized": "specialization rate",
    "collapsed": "collapse rate",
    "final_loss": "median final loss",
    "one_step_losses": "median loss after one step",
    "one_step_specialized": "specialization rate after one step",
    "one_step_collapsed": "collapse rate after one step",
}
"""Each number of a map's summary (a key of its best point) and its label."""


def median_interval(values: list[float]) -> tuple[float, float, float]:
    """The median and its bootstrap interval over replicas (``inf`` counts as not reached)."""
    array = np.array(values, dtype=float)
    draws = stats.bootstrap([array], lambda draw: stats.median(draw[0]))
    return (stats.median(array), *stats.interval(draws))


def summarize(record: Record) -> dict | None:
    """A map's numbers at its best eta with their 95% intervals (Wilson for rates, bootstrap
    over replicas for medians); ``None`` when every eta diverged."""
    best = record["best"]
    if best is None:
        return None
    n = len(best["steps"])
    numbers = {
        "steps": median_interval([math.inf if s is None else s for s in best["steps"]]),
        "final_loss": median_interval(best["final_loss"]),
        "one_step_losses": median_interval(best["one_step_losses"]),
    }
    for key in ("specialized", "collapsed", "one_step_specialized", "one_step_collapsed"):
        numbers[key] = (sum(best[key]) / n, *stats.wilson(sum(best[key]), n))
    name = record["attention"]
    return {
        **numbers,
        "eta": best["eta"],
        "exponent": best["exponent"],
        "estimates": [
            stats.estimate(f"{name}: {label}", *numbers[key]) for key, label in DESCRIBED.items()
        ],
    }


def describe(record: Record, summary: dict | None) -> str:
    name = record["attention"]
    diverged = [f"{p['exponent']:g}" for p in record["curve"] if p["diverged"]]
    tail = f" (diverged at eta = 10^{{{', '.join(diverged)}}})" if diverged else ""
    if summary is None:
        return f"{name}: diverged at every eta"
    numbers = ", ".join(
        f"{label} {stats.fmt_interval(*summary[key])}" for key, label in DESCRIBED.items()
    )
    return f"{name} at eta = 10^{summary['exponent']:g}: {numbers}{tail}"


def grid_text(config: Config, records: list[Record]) -> str:
    grid = f"eta in 10^{{{', '.join(f'{e:g}' for e in config.eta_exponents)}}}"
    screen = records[0]["screen_steps"] if records else config.budget
    budget = records[0]["budget"] if records else config.budget
    if screen < budget:
        return (
            f"{grid}, every point screened for {screen} steps, the budget of {budget} steps "
            f"run at the {config.refine} best-ranked"
        )
    return f"{grid}, every point run for the budget of {budget} steps"


def verdict(records: list[Record], config: Config) -> dict:
    summaries = {r["attention"]: summarize(r) for r in records}
    measured = "; ".join(describe(r, summaries[r["attention"]]) for r in records)
    measured += f"; {grid_text(config, records)}"
    estimates = [e for s in summaries.values() if s for e in s["estimates"]]

    def result(outcome: str, reason: str) -> dict:
        best_eta = {name: s and s["eta"] for name, s in summaries.items()}
        return stats.claim(outcome, reason, measured, CRITERION, estimates, best_eta=best_eta)

    soft = summaries.get(SOFTMAX)
    others = {name: s for name, s in summaries.items() if name != SOFTMAX}
    if soft is None or not others:
        missing = "softmax diverged at every eta or was not run" if soft is None else "no rival"
        return result(stats.INCONCLUSIVE, f"Nothing to compare: {missing}.")
    S = soft["steps"][0]
    low = soft["specialized"][1]

    def fast(s: dict) -> bool:
        return s["steps"][0] < 10 * S

    def separated(s: dict) -> bool:
        return s["specialized"][2] < low

    def steps(s: dict) -> str:
        return "never" if math.isinf(s["steps"][0]) else f"{s['steps'][0]:g}"

    def rate(s: dict) -> str:
        return stats.fmt_interval(*s["specialized"])

    for name, s in others.items():
        if s is not None and fast(s) and not separated(s):
            return result(
                stats.NOT_REPRODUCED,
                f"{name} reaches the target in a median of {steps(s)} steps (< 10x softmax's "
                f"{steps(soft)}) and specializes as often: {rate(s)} vs softmax's {rate(soft)}.",
            )
    if not (S == 1 and soft["specialized"][0] >= 0.9):
        return result(
            stats.INCONCLUSIVE,
            f"softmax misses its own part (median steps {steps(soft)}, specialization "
            f"{rate(soft)}) while no other map matches "
            "it: more seeds would decide a rate whose interval holds 0.9, a larger step budget "
            "a median beyond it.",
        )
    for name, s in others.items():
        if s is None:
            return result(
                stats.INCONCLUSIVE,
                f"{name} diverged at every eta of the grid: smaller step sizes would decide.",
            )
        if not separated(s):
            return result(
                stats.INCONCLUSIVE,
                f"{name} needs a median of {steps(s)} steps (>= 10x softmax's) but its "
                f"specialization {rate(s)} overlaps "
                "softmax's: more seeds, or a larger step budget if it is still converging, "
                "would decide.",
            )
        if fast(s):
            return result(
                stats.INCONCLUSIVE,
                f"{name} reaches the target in a median of {steps(s)} steps (< 10x softmax's) "
                "yet specializes less often with separated intervals: the rule's two parts "
                "disagree, and neither more seeds nor a larger step budget would decide.",
            )
    return result(
        stats.REPRODUCED,
        f"softmax reaches loss <= {records[0]['target']:g} in one step and specializes in "
        f"{soft['specialized'][0]:.2f} of the replicas; every other map needs >= 10x the steps or "
        "never gets there, and specializes less often with separated intervals.",
    )


# --- figure ------------------------------------------------------------------------------------


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    path = out / "attention_maps.png"
    budget = records[0]["budget"]
    with plotting.figure(path, ncols=3, width=5.0) as (_, (left, middle, right)):
        for r in records:
            curve = r["curve"]
            reached = [p for p in curve if p["median_steps"] is not None]
            missed = [p for p in curve if p["median_steps"] is None and not p["diverged"]]
            diverged = [p["eta"] for p in curve if p["diverged"]]
            (line,) = left.plot(
                [p["eta"] for p in reached],
                [p["median_steps"] for p in reached],
                marker="o",
                label=r["attention"],
            )
            color = line.get_color()
            left.plot(
                [p["eta"] for p in missed],
                [p["horizon"] for p in missed],
                ls="none",
                marker="o",
                mfc="none",
                color=color,
            )
            left.plot(diverged, [budget] * len(diverged), ls="none", marker="x", color=color)
            if r["best"] is not None:
                curve = [max(loss, LOSS_FLOOR) for loss in r["best"]["loss_curve"][1:]]
                middle.plot(range(1, len(curve) + 1), curve, label=r["attention"], color=color)
        left.axhline(budget, color="grey", ls="--", lw=0.8)
        left.set_xscale("log")
        left.set_yscale("log")
        left.set_xlabel("learning rate eta")
        left.set_ylabel(f"median steps to loss <= {records[0]['target']:g}")
        left.set_title("open: not reached (at its horizon); x: diverged")
        left.legend()
        middle.axhline(records[0]["target"], color="grey", ls="--", lw=0.8)
        middle.set_xscale("log")
        middle.set_yscale("log")
        middle.set_xlabel("GD step")
        middle.set_ylabel("median population loss")
        middle.set_title(f"at each map's best eta (floored at {LOSS_FLOOR:g})")
        middle.legend()
        rates(right, records)
    return [path]


def rates(ax, records: list[Record]) -> None:
    """Specialization and collapse after the budget, with Wilson bars, per map."""
    for offset, key in ((-0.1, "specialized"), (0.1, "collapsed")):
        xs, ys, bars = [], [], []
        for i, r in enumerate(records):
            if r["best"] is None:
                continue
            k, n = sum(r["best"][key]), len(r["best"][key])
            lo, hi = stats.wilson(k, n)
            xs.append(i + offset)
            ys.append(k / n)
            bars.append((k / n - lo, hi - k / n))
        ax.errorbar(
            xs,
            ys,
            yerr=np.array(bars).T if bars else None,
            ls="none",
            marker="o",
            capsize=3,
            label=key,
        )
    ax.set_xticks(range(len(records)), [r["attention"] for r in records])
    ax.set_ylim(-0.05, 1.05)
    ax.set_ylabel("rate after the budget (Wilson 95%)")
    ax.set_title("specialization and collapse")
    ax.legend()


EXPERIMENT = register(
    Experiment(
        name="attention-maps",
        claim="A7.3",
        title="Exact softmax is necessary",
        paper="Linear and erf attention fail to learn sparse XOR: they do not converge or the two "
        "heads collapse onto the same feature; only exact softmax specializes quickly.",
        config_type=Config,
        run=run,
        figure=figure,
        verdict=verdict,
        split=split,
        version=2,
        presets={
            "quick": {
                "d": 256,
                "m": 32,
                "seeds": 32,
                "budget": 40,
                "screen_steps": None,
                "eta_exponents": list(range(0, 13, 2)),
            },
            "standard": {"d": 256, "m": 32, "seeds": 64, "budget": 1000, "screen_steps": 100},
            "full": {
                "d": 2048,
                "m": 64,
                "seeds": 128,
                "budget": 2000,
                "screen_steps": 200,
                "eta_exponents": [k / 2 for k in range(29)],
                "device": "auto",
            },
        },
    )
)
