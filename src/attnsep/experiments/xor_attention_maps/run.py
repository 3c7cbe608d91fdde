"""A7.3's jobs and records: one map at one size a job, population GD at every step size of the
grid, the best kept, beside the map's expressivity ceiling (SPEC A7.3, Parts E-F); and the cost
of a job."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ...metrics import stats
from .. import costs
from ..base import Record
from .config import PAPER_MAPS, Config, sizes

if TYPE_CHECKING:
    import torch

    from ...models.query_heads import QueryHeads
    from ...train.descent import Descent
    from .descent import GridDescent, GridRun


def split(config: Config) -> list[Config]:
    """One job per map and size."""
    return [
        config.model_copy(update={"d": d, "m": m, "maps": [name], "paper_sizes": []})
        for d, m, names in sizes(config)
        for name in names
    ]


def __getattr__(name: str) -> Any:
    """``Descent``: GD at one step size on all replicas (``train.descent``), loaded with torch
    on first use (PEP 562)."""
    if name == "Descent":
        from ...train.descent import Descent

        return Descent
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def grid_point(run: Descent | GridRun, exponent: float, target: float) -> Record:
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


def held(model: QueryHeads) -> torch.Tensor:
    """``model``'s embeddings, held whole (never streamed here)."""
    import torch

    assert isinstance(model.V, torch.Tensor)
    return model.V


def outcomes(model: QueryHeads, theta: torch.Tensor, support: torch.Tensor) -> dict:
    from ...metrics.parity import collapsed, specialized

    gamma = model.weights(theta)
    return {
        "specialized": specialized(gamma, support).tolist(),
        "collapsed": collapsed(gamma, support).tolist(),
    }


def run(config: Config) -> list[Record]:
    from ...core.device import torch_threads

    with torch_threads(1):
        return [
            run_map(config.model_copy(update={"d": d, "m": m}), name)
            for d, m, names in sizes(config)
            for name in names
        ]


def run_map(config: Config, name: str, *, reference: bool = False) -> Record:
    """One map at ``config``'s ``(d, m)``: screen the grid, run the budget at the chosen points,
    keep the best (docstring of ``Config``), and the map's expressivity ceiling per replica
    (``ceiling``). The step sizes run together (``descent.GridDescent``: one product with ``V``
    per replica and step for the whole grid); ``reference``: one ``Descent`` per step size, the
    loop this replaced (equal to float64 rounding), for the equivalence test and the
    benchmark."""
    from .ceiling import replica_ceilings

    model, support, runs, grid = start(config, name, reference)
    screen = min(config.screen_steps or config.budget, config.budget)
    exponents = config.eta_exponents
    advance(runs, grid, exponents, screen, None)
    screened = [grid_point(runs[e], e, config.target) for e in exponents]
    ranked = sorted((p for p in screened if not p["diverged"]), key=rank_key)
    chosen = ranked if screen == config.budget else ranked[: config.refine]
    advance(runs, grid, exponents, config.budget, [p["exponent"] for p in chosen])
    full = {
        p["exponent"]: grid_point(runs[p["exponent"]], p["exponent"], config.target) for p in chosen
    }
    curve = [full.get(p["exponent"], p) for p in screened]
    finished = [p for p in full.values() if not p["diverged"]]
    best = best_run(model, support, runs, finished)
    return {
        "attention": name,
        "d": config.d,
        "m": config.m,
        "seeds": config.seeds,
        "ceiling": replica_ceilings(held(model), name).tolist(),
        "budget": config.budget,
        "screen_steps": screen,
        "target": config.target,
        "curve": curve,
        "best": best,
    }


def start(
    config: Config, name: str, reference: bool
) -> tuple[QueryHeads, torch.Tensor, dict[float, Any], GridDescent | None]:
    """Map ``name``'s replicas at ``config``'s ``(d, m)`` (model, supports) and its runs at every
    step size of the grid, not yet stepped: one ``GridDescent`` for all of them, or
    (``reference``) one ``Descent`` each and no grid."""
    from ...core.device import resolve_device
    from ...models.query_heads import QueryHeads, initial_queries
    from ...tasks.parity import SparseParity
    from ...train.descent import Descent
    from ...train.parity import label_correlation, population_objective
    from .descent import GridDescent

    device = resolve_device(config.device)
    task = SparseParity(config.d)
    support = task.supports(config.seed, config.seeds).to(device)
    theta0 = initial_queries(config.seed, config.seeds, 2, config.m).to(device)
    model = QueryHeads.sample(
        config.seed, config.seeds, config.d, config.m, attention=name, device=device
    )
    exponents = config.eta_exponents
    if reference:
        objective = population_objective(model, task, support)
        return model, support, {e: Descent(objective, theta0, 10.0**e) for e in exponents}, None
    corr = label_correlation(model, task)
    grid = GridDescent(model, support, corr, theta0, [10.0**e for e in exponents])
    return model, support, dict(zip(exponents, grid.runs, strict=True)), grid


def advance(
    runs: dict[float, Any],
    grid: GridDescent | None,
    exponents: list[float],
    steps: int,
    chosen: list[float] | None,
) -> None:
    """Run the step sizes ``chosen`` (their exponents; ``None``: all) to ``steps`` steps: on the
    grid together, or each ``Descent`` alone when there is no grid."""
    if grid is None:
        for exponent in runs if chosen is None else chosen:
            runs[exponent].run_to(steps)
    elif chosen is None:
        grid.run_to(steps)
    else:
        grid.run_to(steps, [exponents.index(e) for e in chosen])


def best_run(
    model: QueryHeads, support: torch.Tensor, runs: dict[float, Any], finished: list[Record]
) -> Record | None:
    """The best of the points run to the budget (``rank_key``) with its outcomes after the
    budget and after one step, and its median loss curve; ``None`` when every one diverged."""
    if not finished:
        return None
    point = min(finished, key=rank_key)
    descent = runs[point["exponent"]]
    assert descent.after_one is not None  # a run that did not diverge took a step
    after_one = outcomes(model, descent.after_one, support)
    return {
        **point,
        "final_loss": descent.losses[-1].tolist(),
        **outcomes(model, descent.theta, support),
        "one_step_losses": descent.losses[1].tolist(),
        "one_step_specialized": after_one["specialized"],
        "one_step_collapsed": after_one["collapsed"],
        "loss_curve": [stats.median(loss.tolist()) for loss in descent.losses],
    }


# --- cost (``attnsep reproduce --plan``): the work of one job ---------------------------------


def work(c: costs.Config) -> float:
    budget = c["budget"]
    screen = min(c["screen_steps"] or budget, budget)
    steps = len(c["eta_exponents"]) * screen + c["refine"] * (budget - screen)
    area = len(c["maps"]) * c["d"] * c["m"]
    paper = sum(name in PAPER_MAPS for name in c["maps"])
    more = {tuple(size) for size in c.get("paper_sizes", [])} - {(c["d"], c["m"])}
    area += paper * sum(d * m for d, m in more)
    return steps * c["seeds"] * area


def peak(c: costs.Config) -> float:
    """The largest size's memory (maps and sizes run one after another): ``V``; the grid's state
    (``descent.GridDescent``: ten ``E x G x H x m`` arrays, theta, its gradient, a step's copies
    and the first step's, and every run's losses); a step's score-sized rows, ten arrays of ``E x
    G x H x d`` in chunks of about 16 MB (``CHUNK_BYTES``); and the ceiling
    (``ceiling.replica_ceilings``): ``3 P`` start directions a replica and six arrays of their
    scores in chunks of ``CEILING_CHUNK`` numbers."""
    from .ceiling import CEILING_CHUNK, CEILING_POSITIONS

    E, G, H = c["seeds"], len(c["eta_exponents"]), 2
    budget = c["budget"]
    screen = min(c["screen_steps"] or budget, budget)
    losses = E * (G * screen + c["refine"] * (budget - screen))
    peaks = []
    for d, m, _ in sizes(Config(**c)):
        run, K = G * H * d, 3 * min(d, CEILING_POSITIONS)
        scores = 10 * min(E, max(1, (2 << 20) // run)) * run
        ceiling = K * m * E + 6 * min(E, max(1, CEILING_CHUNK // (K * d))) * K * d
        peaks.append(8.0 * (E * d * m + 10 * E * G * H * m + losses + scores + ceiling))
    return max(peaks)
