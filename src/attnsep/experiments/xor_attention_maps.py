"""A7.3 — softmax is necessary: steps of GD to a small population loss, per attention map.

Each map (the papers' softmax, linear and erf; beyond them the normalized erf and its
shift-invariant form, SPEC Part D) runs gradient descent on the exact population loss (SPEC A4)
at every step size of a log grid; per replica the number of steps to reach loss <= ``target`` is
recorded. Each map is judged at its own best step size; after the step budget its
specialization and collapse rates (SPEC A6) carry Wilson intervals and its median steps a
bootstrap interval over replicas. Beside each map's dynamics the verdict reports its
expressivity ceiling (SPEC Part E), computed from the config: the largest share of its weights
that the map can put on one position of the run's own embeddings.

The verdict judges A7.3 on the papers' maps only and returns A7.3b ("beyond the papers": which
property of the map matters) as a companion entry from the same records.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import Field

from ..configs import AttentionName, OneStepConfig, inherit
from ..metrics import calibration, stats
from . import plotting
from .base import Device, Experiment, ExperimentConfig, Exponent, Positive, Record, register

if TYPE_CHECKING:
    import torch

    from ..models.query_heads import QueryHeads
    from ..train.descent import Descent

SOFTMAX = "softmax"
PAPER_MAPS = (SOFTMAX, "linear", "erf")
"""The maps the papers compare (SPEC Part E, A7.3); every other map run belongs to A7.3b."""
RIVALS = PAPER_MAPS[1:]
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

    Criterion (version 2, SPEC Part E, written after the seed-0 standard data were seen, so its
    confirmatory run is on another master seed): on the papers' maps only (softmax, linear,
    erf), reproduced when softmax's median steps-to-target is 1 and its specialization rate
    after the budget is >= 0.9, and linear and erf each need >= 10x softmax's median steps (or
    never reach the target within the budget) and specialize less often with separated
    intervals (Wilson upper bound below softmax's Wilson lower bound); not reproduced when
    linear or erf matches softmax on both (median steps < 10x softmax's and a specialization
    Wilson interval that overlaps or exceeds softmax's); inconclusive otherwise, naming the map
    and whether more seeds or a larger step budget would decide. Beside each map its
    expressivity ceiling: the largest l1 share |gamma_i| / ||gamma||_1 of one position over
    theta (the largest weight for a probability map), per replica's embeddings, median with a
    bootstrap interval; a map whose ceiling's upper end is below half the share that loss <=
    target needs (even with the rest of the weight spread evenly) fails by expressivity, and
    the reason says so, not learning. The other maps run (normalized-erf, shifted-erf, ...)
    are reported in A7.3b, a finding beyond the papers.
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


CRITERION = " ".join((Config.__doc__ or "").split("    Criterion ")[1].split())
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


# --- the expressivity ceiling (SPEC Part E) ----------------------------------------------------


CEILING_SCALES = tuple(10.0**k for k in range(-2, 5))
"""Starting scales ``c`` of ``theta = c v_i`` (one per decade); the ascent then moves freely."""
CEILING_POSITIONS = 256
"""Positions tried per replica: all of them up to this ``d``, the first this many beyond (rows
of ``V`` are exchangeable, so this only bounds the cost at large ``d``)."""
CEILING_STARTS = 2
"""Best (position, scale) starts per replica that the gradient ascent refines."""
CEILING_STEPS = 200
CEILING_RATE = 0.01
"""Adam's step on ``theta / c`` (``c`` the start's scale): scale-free."""
CEILING_CHUNK = 1 << 22
"""Most scores held at once while the starts are screened."""
_CEILINGS: dict[tuple[int, int, int, str], np.ndarray] = {}
"""Per-replica ceilings computed so far, by (master seed, d, m, map): replica ``e``'s
embeddings depend only on these and ``e``, so a run with more seeds extends the array."""


def l1_share(gamma: torch.Tensor, own: torch.Tensor) -> torch.Tensor:
    """``|gamma_own| / ||gamma||_1`` along the last axis (``own``: index per row, trailing 1)."""
    size = gamma.abs()
    return size.gather(-1, own).squeeze(-1) / size.sum(dim=-1)


def replica_ceilings(V: torch.Tensor, name: str) -> np.ndarray:
    """Per replica of ``V`` (``E x d x m``), the largest l1 share map ``name`` puts on one
    position (SPEC Part E): ``theta = c v_i`` over ``CEILING_SCALES`` and the positions, then
    ``CEILING_STEPS`` of Adam ascent on the log share from the ``CEILING_STARTS`` best starts."""
    import torch

    from .. import attention

    weights = attention.get(name)
    E, d, m = V.shape
    P = min(d, CEILING_POSITIONS)
    Vt = V.transpose(1, 2)
    best = torch.full((E, P), -1.0, dtype=V.dtype)
    scale = torch.ones(E, P, dtype=V.dtype)
    chunk = max(1, CEILING_CHUNK // (P * d))
    for lo in range(0, E, chunk):
        dots = V[lo : lo + chunk, :P] @ Vt[lo : lo + chunk]
        own = torch.arange(P).expand(len(dots), P)[..., None]
        for c in CEILING_SCALES:
            share = torch.nan_to_num(l1_share(weights(c * dots), own), nan=-1.0)
            better = share > best[lo : lo + chunk]
            best[lo : lo + chunk] = torch.where(better, share, best[lo : lo + chunk])
            scale[lo : lo + chunk] = torch.where(better, c, scale[lo : lo + chunk])
    found, top = best.topk(min(CEILING_STARTS, P), dim=1)
    c0 = scale.gather(1, top)[..., None]
    phi = V.gather(1, top[..., None].expand(-1, -1, m)).clone().requires_grad_(True)
    optimizer = torch.optim.Adam([phi], lr=CEILING_RATE)
    for _ in range(CEILING_STEPS):
        if bool((found >= 1 - 1e-12).all()):
            break  # every start already puts all its weight on one position
        share = l1_share(weights((c0 * phi) @ Vt), top[..., None])
        found = torch.maximum(found, torch.nan_to_num(share.detach(), nan=-1.0))
        optimizer.zero_grad()
        (-torch.log(share).sum()).backward()
        optimizer.step()
    return found.max(dim=1).values.numpy()


def ceilings(config: Config, name: str) -> np.ndarray:
    """Map ``name``'s per-replica ceilings on the embeddings ``run`` draws for ``config`` (the
    same ``V``: ``QueryHeads.sample(seed, seeds, d, m)``), computed once per process; ``nan``
    on simulated runs (``calibration.in_simulation``: the ceiling words the reason, it does
    not decide the outcome)."""
    if calibration.in_simulation():
        return np.full(config.seeds, math.nan)
    key = (config.seed, config.d, config.m, name)
    have = _CEILINGS.get(key, np.empty(0))
    if len(have) < config.seeds:
        import torch

        from ..device import torch_threads
        from ..embeddings import sphere_embeddings

        V = sphere_embeddings(
            config.seed, config.seeds - len(have), config.d, config.m, first_replica=len(have)
        )
        with torch_threads(1), torch.enable_grad():
            have = np.concatenate([have, replica_ceilings(V, name)])
        _CEILINGS[key] = have
    return have[: config.seeds]


def needed_share(d: int, target: float) -> float:
    """The l1 share on each head's support bit of the most spread-out weights that reach
    population loss ``target``: ``gamma_1 = t (e_i + r)``, ``gamma_2 = t (e_j + q)`` with ``r``,
    ``q`` of equal magnitudes ``eps`` on the other ``n = d - 2`` positions, orthogonal sign
    patterns and the best ``t``. The loss is then ``1 - 1 / A`` with ``A = (1 + n eps^2)^2 - 2 n
    eps^4``, so ``loss <= target`` allows ``eps^2`` up to the root of ``(n^2 - 2n) x^2 + 2n x
    + 1 - 1 / (1 - target)``, and the share is ``1 / (1 + n eps)``. Spreading the rest evenly
    is what lets a share this small reach the target (a rest concentrated anywhere costs more
    loss per unit of l1 mass); a map whose ceiling is well below it cannot represent the target
    at these sizes (SPEC Part E: expressivity, not learning)."""
    n = d - 2
    if n < 1:
        return 1.0
    a, b, c = n * n - 2 * n, 2 * n, 1 - 1 / (1 - target)
    x = -2 * c / (b + math.sqrt(b * b - 4 * max(a, 0) * c))  # the positive root, stably
    return 1 / (1 + n * math.sqrt(x))


def expressivity_bound(summary: dict, needed: float) -> bool:
    """True when the map's ceiling (upper end) is below half the share the target needs."""
    return summary["ceiling"][2] < needed / 2


# --- verdict -----------------------------------------------------------------------------------


DESCRIBED = {
    "ceiling": "expressivity ceiling (largest l1 share on one position)",
    "steps": "median steps to the target",
    "specialized": "specialization rate",
    "collapsed": "collapse rate",
    "final_loss": "median final loss",
    "one_step_losses": "median loss after one step",
    "one_step_specialized": "specialization rate after one step",
    "one_step_collapsed": "collapse rate after one step",
}
"""Each number of a map's summary and its label."""
TABLE = ("ceiling", "steps", "specialized", "collapsed")
"""The numbers of A7.3b's table per map."""


def replica_draws(n: int) -> np.ndarray:
    """``resamples x n`` replica indices for the bootstrap over replicas (the count of
    ``stats.bootstrap``, as ``stats.resampling`` sets it; seed 0), drawn at once and kept, so
    that every median of every map is resampled in one vectorized step."""
    return _draws(n, stats.resample_count())


@functools.lru_cache(maxsize=16)
def _draws(n: int, resamples: int) -> np.ndarray:
    return stats.resample_rows(n, np.random.default_rng(0), resamples)


def median_interval(
    values: Sequence[float], draws: np.ndarray | None = None
) -> tuple[float, float, float]:
    """The median and its bootstrap interval over replicas (``inf`` counts as not reached)."""
    array = np.array(values, dtype=float)
    rows = replica_draws(len(array)) if draws is None else draws
    return (stats.median(array), *stats.interval(np.median(array[rows], axis=1)))


def summarize(record: Record, ceiling: np.ndarray | None = None) -> dict | None:
    """A map's numbers at its best eta with their 95% intervals (Wilson for rates, bootstrap
    over replicas for medians), with its ceiling when given; ``None`` when every eta diverged."""
    best = record["best"]
    if best is None:
        return None
    n = len(best["steps"])
    rows = replica_draws(n)
    numbers = {
        "steps": median_interval([math.inf if s is None else s for s in best["steps"]], rows),
        "final_loss": median_interval(best["final_loss"], rows),
        "one_step_losses": median_interval(best["one_step_losses"], rows),
    }
    if ceiling is not None:
        numbers["ceiling"] = median_interval(ceiling, rows if len(ceiling) == n else None)
    for key in ("specialized", "collapsed", "one_step_specialized", "one_step_collapsed"):
        numbers[key] = (sum(best[key]) / n, *stats.wilson(sum(best[key]), n))
    name = record["attention"]
    return {
        **numbers,
        "eta": best["eta"],
        "exponent": best["exponent"],
        "estimates": [
            stats.estimate(f"{name}: {label}", *numbers[key])
            for key, label in DESCRIBED.items()
            if key in numbers
        ],
    }


def describe(record: Record, summary: dict | None) -> str:
    name = record["attention"]
    diverged = [f"{p['exponent']:g}" for p in record["curve"] if p["diverged"]]
    tail = f" (diverged at eta = 10^{{{', '.join(diverged)}}})" if diverged else ""
    if summary is None:
        return f"{name}: diverged at every eta"
    numbers = ", ".join(
        f"{label} {stats.fmt_interval(*summary[key])}"
        for key, label in DESCRIBED.items()
        if key in summary
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


def steps_text(s: dict) -> str:
    return "never" if math.isinf(s["steps"][0]) else f"{s['steps'][0]:g}"


def rate_text(s: dict) -> str:
    return stats.fmt_interval(*s["specialized"])


def verdict(records: list[Record], config: Config) -> dict:
    """A7.3 on the papers' maps (``Config``'s criterion), with A7.3b as its companion."""
    target = records[0]["target"] if records else config.target
    needed = needed_share(config.d, target)
    summaries = {r["attention"]: summarize(r, ceilings(config, r["attention"])) for r in records}
    paper = [r for r in records if r["attention"] in PAPER_MAPS]
    measured = "; ".join(describe(r, summaries[r["attention"]]) for r in paper)
    measured += (
        f"; {grid_text(config, records)}; the share on one position that loss <= {target:g} "
        f"needs at d = {config.d} (rest spread evenly): {needed:.3g}"
    )
    estimates = [
        e for r in paper if (s := summaries[r["attention"]]) is not None for e in s["estimates"]
    ]
    extra = [r for r in records if r["attention"] not in PAPER_MAPS]
    companions = [finding(records, summaries, config, needed)] if extra else []

    def result(outcome: str, reason: str) -> dict:
        best_eta = {r["attention"]: (s := summaries[r["attention"]]) and s["eta"] for r in paper}
        return stats.claim(
            outcome,
            reason,
            measured,
            CRITERION,
            estimates,
            best_eta=best_eta,
            needed_share=needed,
            companions=companions,
        )

    return result(*judge(summaries, needed, target))


def judge(summaries: dict[str, dict | None], needed: float, target: float) -> tuple[str, str]:
    """A7.3's outcome and its one-sentence reason (``Config``'s criterion)."""
    soft = summaries.get(SOFTMAX)
    rivals = {name: summaries[name] for name in RIVALS if name in summaries}
    if soft is None or not rivals:
        missing = "softmax diverged at every eta or was not run" if soft is None else "no rival"
        return stats.INCONCLUSIVE, f"Nothing to compare: {missing}."
    S = soft["steps"][0]

    def fast(s: dict) -> bool:
        return s["steps"][0] < 10 * S

    def separated(s: dict) -> bool:
        return s["specialized"][2] < soft["specialized"][1]

    def cause(name: str, s: dict) -> str:
        ceiling = stats.fmt_interval(*s["ceiling"])
        if expressivity_bound(s, needed):
            return (
                f"{name} by expressivity (ceiling {ceiling}, far below the {needed:.2g} that "
                f"loss <= {target:g} needs)"
            )
        return f"{name} by learning (its ceiling {ceiling} allows the target)"

    for name, s in rivals.items():
        if s is not None and fast(s) and not separated(s):
            return stats.NOT_REPRODUCED, (
                f"{name} reaches the target in a median of {steps_text(s)} steps (< 10x "
                f"softmax's {steps_text(soft)}) and specializes as often: {rate_text(s)} vs "
                f"softmax's {rate_text(soft)}."
            )
    if not (S == 1 and soft["specialized"][0] >= 0.9):
        return stats.INCONCLUSIVE, (
            f"softmax misses its own part (median steps {steps_text(soft)}, specialization "
            f"{rate_text(soft)}) while neither linear nor erf matches it: more seeds would "
            "decide a rate whose interval holds 0.9, a larger step budget a median beyond it."
        )
    for name, s in rivals.items():
        if s is None:
            return stats.INCONCLUSIVE, (
                f"{name} diverged at every eta of the grid: smaller step sizes would decide."
            )
        if not separated(s):
            return stats.INCONCLUSIVE, (
                f"{name} needs a median of {steps_text(s)} steps (>= 10x softmax's; "
                f"{cause(name, s)}) but its specialization {rate_text(s)} overlaps softmax's: "
                "more seeds, or a larger step budget if it is still converging, would decide."
            )
        if fast(s):
            return stats.INCONCLUSIVE, (
                f"{name} reaches the target in a median of {steps_text(s)} steps (< 10x "
                "softmax's) yet specializes less often with separated intervals: the rule's two "
                "parts disagree, and neither more seeds nor a larger step budget would decide."
            )
    failing = "; ".join(
        f"{cause(name, s)}, steps {steps_text(s)}, specialization {rate_text(s)}"
        for name, s in rivals.items()
        if s is not None
    )
    return stats.REPRODUCED, (
        f"softmax reaches loss <= {target:g} in one step and specializes at a rate of "
        f"{rate_text(soft)}, while "
        f"{' and '.join(rivals)} need >= 10x the steps or never get there and specialize less "
        f"often with separated intervals, failing {failing}."
    )


# --- A7.3b: which property of the map matters (beyond the papers) -----------------------------


PROPERTIES: dict[str, dict[str, bool]] = {
    "softmax": {"normalized": True, "shift-invariant": True, "bounded tails": False},
    "linear": {"normalized": False, "shift-invariant": False, "bounded tails": False},
    "erf": {"normalized": False, "shift-invariant": False, "bounded tails": True},
    "sigmoid": {"normalized": False, "shift-invariant": False, "bounded tails": True},
    "normalized-erf": {"normalized": True, "shift-invariant": False, "bounded tails": True},
    "shifted-erf": {"normalized": True, "shift-invariant": True, "bounded tails": True},
}
"""Each map's properties (``attention.py``): weights summing to one; unchanged by adding a
constant to every score; the unnormalized weight bounded as a score grows."""

FINDING_RULE = (
    "a finding, not a verdict on the papers: per map (the papers' and the others run) its "
    "expressivity ceiling, median steps to the target, specialization and collapse with 95% "
    "intervals; a map learns when its median steps' upper end is finite (the target reached "
    "in most replicas), fails when the lower end is infinite (never reached), else is "
    "undecided; a property (normalized, shift-invariant, bounded tails, or a ceiling whose "
    "lower end reaches the share the target needs) singles out the maps that learn when every "
    "map that learns has it and no map that fails does, or the reverse"
)


def learns(s: dict | None) -> bool | None:
    """True (reaches the target, interval-wise), False (never does), ``None`` undecided."""
    if s is None:
        return False
    if math.isfinite(s["steps"][2]):
        return True
    return False if math.isinf(s["steps"][1]) else None


def traits(name: str, s: dict | None, needed: float) -> dict[str, bool | None]:
    """The properties A7.3b tests for map ``name``: ``PROPERTIES`` and whether its ceiling
    reaches the share the target needs (``None`` when its interval straddles it)."""
    out: dict[str, bool | None] = dict(PROPERTIES.get(name, {}))
    if s is not None:
        reaches = s["ceiling"][1] >= needed
        out["ceiling >= needed"] = (
            True if reaches else (False if s["ceiling"][2] < needed else None)
        )
    return out


PHRASES = {
    "normalized": ("normalized weights", "unnormalized weights"),
    "shift-invariant": ("shift invariance", "no shift invariance"),
    "bounded tails": ("bounded tails", "unbounded tails"),
    "ceiling >= needed": ("a ceiling that reaches the needed share", "a ceiling below it"),
}
"""Each tested property in words: (had, lacked)."""


def singled_out(groups: dict[bool, list[str]], table: dict[str, dict]) -> list[str]:
    """The properties (in words) that every map of one group has and no map of the other has."""
    names = {p for name in groups[True] + groups[False] for p in table[name]}
    out = []
    for prop in sorted(names):
        values = [[table[name].get(prop) for name in groups[side]] for side in (True, False)]
        for have in (True, False):
            if all(v is have for v in values[0]) and all(v is (not have) for v in values[1]):
                out.append(PHRASES.get(prop, (prop, f"no {prop}"))[0 if have else 1])
    return out


def finding(
    records: list[Record], summaries: dict[str, dict | None], config: Config, needed: float
) -> dict:
    """A7.3b (SPEC Part E, beyond the papers): the table per map and one sentence naming the
    property the data single out."""
    names = [r["attention"] for r in records]
    extra = [r for r in records if r["attention"] not in PAPER_MAPS]
    measured = "; ".join(describe(r, summaries[r["attention"]]) for r in extra)
    measured += f"; the share on one position that the target needs: {needed:.3g}"
    estimates = [
        stats.estimate(f"{name}: {DESCRIBED[key]}", *s[key])
        for name in names
        if (s := summaries[name]) is not None
        for key in TABLE
    ]
    decided = {name: learns(summaries[name]) for name in names}
    groups = {side: [n for n in names if decided[n] is side] for side in (True, False)}
    table = {name: traits(name, summaries[name], needed) for name in names}

    def brief(name: str) -> str:
        s = summaries[name]
        if s is None:
            return f"{name} (diverged)"
        return (
            f"{name} (steps {stats.fmt_interval(*s['steps'])}, ceiling "
            f"{stats.fmt_interval(*s['ceiling'])})"
        )

    undecided = [n for n in names if decided[n] is None]
    rest = f"; undecided: {', '.join(map(brief, undecided))}" if undecided else ""
    if not groups[True] or not groups[False]:
        side = "reaches" if groups[True] else "fails to reach"
        reason = (
            f"Every decided map {side} loss <= {records[0]['target']:g}, so no property "
            f"separates them: {', '.join(map(brief, groups[True] + groups[False]))}{rest}."
        )
    else:
        found = singled_out(groups, table)
        if not found:
            what = (
                "no single property of normalized, shift-invariant, bounded tails or ceiling "
                "separates them"
            )
        elif len(found) == 1:
            what = f"{found[0]} singles them out"
        else:
            what = (
                f"{' and '.join(found)} single them out (confounded in these maps: the data "
                "cannot tell them apart)"
            )
        learners, failers = groups[True], groups[False]
        reason = (
            f"{', '.join(map(brief, learners))} reach{'es' if len(learners) == 1 else ''} loss "
            f"<= {records[0]['target']:g} and {', '.join(map(brief, failers))} never "
            f"do{'es' if len(failers) == 1 else ''}: {what}{rest}."
        )
    judged = stats.claim(stats.FINDING, reason, measured, FINDING_RULE, estimates)
    judged.update(
        claim="A7.3b",
        title="Which property of the attention map matters (beyond the papers)",
        paper="Beyond the papers: substitutes for softmax that keep one of its properties "
        "(normalized, shift-invariant) with erf's bounded tails, or sigmoid's bounded tails "
        "unnormalized; which property, or the expressivity ceiling, decides whether GD learns "
        "sparse XOR.",
        section="beyond the papers",
        properties=table,
    )
    return judged


# --- the hypotheses of the comparison (SPEC Part E) -------------------------------------------


def hypotheses(records: list[Record], config: Config) -> calibration.Hypotheses:
    """The paper's statement and the rival at the measured effect sizes, to measure the
    criterion's error rates (SPEC Part E).

    Paper: softmax reaches the target in one step and specializes at its measured rates (raised
    to 0.9, the SPEC's "with high probability", where the run fell short); linear and erf never
    reach the target and specialize at their measured rates (at 0 where the run measured them at
    or above softmax's: the paper's "collapse"). Rival: the one of linear and erf with the higher
    measured specialization rate (erf on a tie) draws like softmax; the other as in the paper.
    Noise: per replica, one-step arrival and specialization / collapse are drawn at these rates
    (binomial noise at ``config``'s seeds); a replica that misses one step takes a steps count
    resampled from the map's measured ones beyond 1 (never when there are none).
    """
    by_name = {r["attention"]: r for r in records if r["best"] is not None}
    rates = {name: measured_rates(by_name.get(name)) for name in PAPER_MAPS}
    soft = rates[SOFTMAX]
    paper = {SOFTMAX: {**soft, "one": max(soft["one"], 0.9), "spec": max(soft["spec"], 0.9)}}
    for name in RIVALS:
        r = rates[name]
        spec = r["spec"] if r["spec"] < paper[SOFTMAX]["spec"] else 0.0
        paper[name] = {**r, "one": 0.0, "later": [], "spec": spec, "coll": min(r["coll"], 1 - spec)}
    matching = max(RIVALS, key=lambda n: (rates[n]["spec"], n == "erf"))
    rival = {**paper, matching: paper[SOFTMAX]}
    maps = [n for n in PAPER_MAPS if n in {r["attention"] for r in records}]

    def simulate(law: dict[str, dict]) -> calibration.Simulate:
        def draw(cfg: Config, rng: np.random.Generator) -> list[Record]:
            return [simulated_record(name, law[name], cfg, rng) for name in maps]

        return draw

    def text(law: dict[str, dict]) -> str:
        return "; ".join(
            f"{n}: one step {law[n]['one']:.3g}, specialization {law[n]['spec']:.3g}" for n in maps
        )

    return calibration.Hypotheses(
        paper=simulate(paper),
        rival=simulate(rival),
        paper_law=f"softmax learns in one step, linear and erf do not ({text(paper)})",
        rival_law=f"{matching} draws like softmax ({text(rival)})",
        noise="per replica: Bernoulli one-step arrival, specialization and collapse at these "
        "rates; later arrivals resampled from the measured steps",
    )


def measured_rates(record: Record | None) -> dict[str, Any]:
    """A map's measured per-replica rates: reached in one step, specialized, collapsed, and
    its steps counts beyond 1 (``None``: never reached); a map that diverged everywhere never
    reaches the target and never specializes."""
    if record is None:
        return {"one": 0.0, "spec": 0.0, "coll": 0.0, "later": [None]}
    best = record["best"]
    n = len(best["steps"])
    return {
        "one": sum(s == 1 for s in best["steps"]) / n,
        "spec": sum(best["specialized"]) / n,
        "coll": sum(best["collapsed"]) / n,
        "later": [s for s in best["steps"] if s != 1],
    }


def simulated_record(
    name: str, law: dict[str, Any], config: Config, rng: np.random.Generator
) -> Record:
    """One map's record at ``config``'s seeds, budget and target, drawn from ``law``'s rates."""
    n = config.seeds
    later = law["later"] or [None]
    steps = [1 if u < law["one"] else later[int(rng.integers(len(later)))] for u in rng.random(n)]
    steps = [None if s is None or s > config.budget else s for s in steps]
    kind = rng.random(n)
    specialized = (kind < law["spec"]).tolist()
    collapsed = ((kind >= law["spec"]) & (kind < law["spec"] + law["coll"])).tolist()
    final = [0.0 if s is not None else 1.0 for s in steps]
    best = {
        "exponent": 0.0,
        "eta": 1.0,
        "steps": steps,
        "final_loss": final,
        "one_step_losses": [0.0 if s == 1 else 1.0 for s in steps],
        "specialized": specialized,
        "collapsed": collapsed,
        "one_step_specialized": specialized,
        "one_step_collapsed": collapsed,
    }
    return {
        "attention": name,
        "budget": config.budget,
        "screen_steps": min(config.screen_steps or config.budget, config.budget),
        "target": config.target,
        "curve": [],
        "best": best,
    }


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
        hypotheses=hypotheses,
        criterion_version=2,
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
