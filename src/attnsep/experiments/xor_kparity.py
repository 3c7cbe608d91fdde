"""Beyond the papers — k-sparse parity with k heads: one step is not enough, a few GD steps are.

SPEC A1 generalizes sparse XOR to ``y = s prod_{a in S} x_a`` with ``|S| = k`` and the model
to ``H = k`` heads (A2; the anti-symmetric start becomes a regular simplex). Each job runs
population GD (SPEC A4, the grouped exact loss of ``exact.kparity``) for one ``(k, d, m)`` at
every step size of a grid ``eta = 2^j d^k ln d`` (SPEC A5's ``d^2 ln d`` for ``k = 2``; the
scores' gradient at a near-uniform start is of order ``d^-k``), all grid points and replicas in
one batched tensor, and records per replica the first step at which the certified error is
``<= success_tol`` (the one-step claim's success, SPEC A6).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ..configs import XorTrainConfig, inherit
from ..metrics import stats
from ..metrics.stats import POLYLOG, POWER
from . import plotting
from .base import (
    Device,
    Experiment,
    ExperimentConfig,
    Exponent,
    InputLength,
    Positive,
    Record,
    register,
)

SECTION = "beyond the papers"
"""The report section this claim belongs to: not a claim of either paper."""
RIVAL_MIN_ALPHA = 0.25
CONTRADICTING_ALPHA = 0.5
ONE_STEP_TARGET = 0.9


class Series(BaseModel):
    """The sizes ``d`` at which ``k``-parity is run (at the main width ``m``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    k: int = Field(ge=2, le=4)
    d_values: list[InputLength] = Field(min_length=1)


class Config(ExperimentConfig):
    """Steps of population GD to success for ``k``-sparse parity with ``k`` heads, vs ``d``
    (width ``m``) and vs ``m`` (at ``d = width_d``), each ``(k, d, m)`` at its best step size.

    For each ``(k, d, m)`` and each ``eta = 2^j d^k ln d`` of ``eta_exponents`` (the ``j``'s),
    ``seeds`` replicas run up to ``budget`` steps; a replica's *steps to success* is the first
    step with certified error ``<= success_tol`` (infinite if not reached). *steps\\*(k, d, m)*
    is the smallest, over the grid, of the median steps to success over the replicas; its 95%
    interval is the bootstrap over replicas of that whole statistic (the best ``eta`` is chosen
    again on every resample; a median not reached within the budget is infinite). *one-step
    rate* is the largest, over the grid, share of replicas that succeed after exactly one step,
    with its Wilson interval.

    Criterion (written before any number was seen), for each ``k`` of ``series``, on its
    ``d_values`` at width ``m``: the polylog law ``a (ln d)^p`` and the power law ``c d^alpha``
    with ``alpha >= 0.25`` are fitted to steps\\* on the smaller half of the ``d``'s and predict
    the larger half; ``alpha`` fitted on all ``d``'s has a bootstrap interval (conservative
    lower bound as in A7.2: an unreached median counts as ``budget + 1`` at a ``d`` above the
    mean ``ln d`` and sends the draw's exponent to ``-inf`` below it). **reproduced** when, for
    every ``k``, the one-step rate's Wilson upper bound is below 0.9 at every ``d`` (one step
    does not suffice), steps\\* has a finite
    upper bound at every ``d`` (GD does), only the polylog law predicts the held-out ``d``'s,
    and ``alpha``'s lower bound is below 0.5. **not reproduced** when, for some ``k``, the
    one-step rate's Wilson lower bound is ``>= 0.9`` at the largest ``d`` (one step suffices),
    or ``alpha``'s lower bound is ``>= 0.5`` and the held-out test does not favour polylog
    (the steps grow like a power of ``d``). **inconclusive** otherwise (fewer than 3 ``d``'s,
    steps\\* unreached within the budget, both or neither law predicting, an interval that
    straddles 0.9); the reason says what would decide. The ``m_values`` series (``k = width_k``,
    ``d = width_d``) is reported beside it as information.
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
    device: Device = "cpu"


CRITERION = " ".join((Config.__doc__ or "").split("Criterion")[1].split()).replace("\\", "")
"""The rule exactly as the config's docstring states it."""


def jobs(config: Config) -> list[tuple[int, int, int, str]]:
    """``(k, d, m, role)`` of every run: each ``d`` series at width ``m`` (role ``"d"``), then
    ``k = width_k`` at ``d = width_d`` for each of ``m_values`` (role ``"m"``)."""
    out = [(s.k, d, config.m, "d") for s in config.series for d in s.d_values]
    return out + [(config.width_k, config.width_d, m, "m") for m in config.m_values]


def split(config: Config) -> list[Config]:
    """One job per ``(k, d, m)``."""
    return [
        config.model_copy(
            update={"series": [Series(k=k, d_values=[d])], "m_values": []}
            if role == "d"
            else {"series": [], "m_values": [m]}
        )
        for k, d, m, role in jobs(config)
    ]


# --- running ---------------------------------------------------------------------------------


def descend(
    k: int, d: int, m: int, config: Config
) -> tuple[list[list[int | None]], list[list[bool]], list[list[bool]]]:
    """GD at every grid step size at once: per replica and grid point, the steps to success,
    success after one step and collapse after the last step (``seeds x grid`` lists)."""
    import torch

    from ..device import resolve_device, resolve_dtype
    from ..metrics.parity import best_assignment, collapsed
    from ..models.query_heads import QueryHeads
    from ..train.descent import Descent
    from ..train.xor_train import Batches, TrainingObjective, default_train_eta, initial_state

    base = XorTrainConfig(
        d=d,
        m=m,
        k=k,
        seeds=config.seeds,
        seed=config.seed,
        success_tol=config.success_tol,
        device=config.device,
    )
    device, dtype = resolve_device(base.device), resolve_dtype(base.dtype)
    model, support, theta = initial_state(base, device, dtype)
    G, E = len(config.eta_exponents), config.seeds
    wide = QueryHeads(model.V.repeat(G, 1, 1), model.attention, model.sign)  # grid-major
    support, theta = support.repeat(G, 1), theta.repeat(G, 1, 1)
    unit = default_train_eta(d, k, 1.0)
    eta = torch.tensor([2.0**j * unit for j in config.eta_exponents], dtype=dtype, device=device)
    eta = eta.repeat_interleave(E)[:, None, None]
    objective = TrainingObjective(base, wide, support, Batches(base, support, device, dtype))

    def watch(theta: torch.Tensor) -> torch.Tensor:
        return best_assignment(objective.weights(theta), support)[0].cpu() <= config.success_tol

    def all_done(run: Descent) -> bool:
        return bool(torch.stack(run.trace).any(dim=0).all())

    run = Descent(objective, theta, eta, watch=watch)
    run.run_to(config.budget, until=all_done)
    reached = torch.stack(run.trace).numpy()  # steps x (G E)
    first = reached.argmax(axis=0)
    steps = [int(t) if reached[t, i] else None for i, t in enumerate(first)]
    one = reached[1] if len(reached) > 1 else np.zeros(G * E, dtype=bool)
    fold = collapsed(wide.weights(run.theta), support).tolist()

    def grid(values: list) -> list[list]:
        return [[values[g * E + e] for g in range(G)] for e in range(E)]

    return grid(steps), grid([bool(v) for v in one]), grid(fold)


def run(config: Config) -> list[Record]:
    from ..device import torch_threads

    records = []
    with torch_threads(1):
        for k, d, m, role in jobs(config):
            steps, one, fold = descend(k, d, m, config)
            records.append(
                {
                    "k": k,
                    "d": d,
                    "m": m,
                    "role": role,
                    "seeds": config.seeds,
                    "budget": config.budget,
                    "eta_exponents": list(config.eta_exponents),
                    "steps": steps,
                    "one_step": one,
                    "collapsed": fold,
                }
            )
    return records


# --- analysis --------------------------------------------------------------------------------


def steps_matrix(record: Record) -> np.ndarray:
    """``seeds x grid`` steps to success, ``inf`` where not reached."""
    return np.array(
        [[math.inf if s is None else s for s in row] for row in record["steps"]], dtype=float
    )


def best_steps(matrix: np.ndarray) -> float:
    """steps\\*: the smallest over the grid of the median over replicas."""
    return min(stats.median(col) for col in matrix.T)


def point(record: Record) -> dict[str, Any]:
    """steps\\* with its bootstrap interval, the best grid point and the one-step rate."""
    matrix = steps_matrix(record)
    value = best_steps(matrix)
    draws = stats.bootstrap([matrix], lambda draw: best_steps(draw[0]), seed=record["d"])
    low, high = stats.interval(draws)
    medians = [stats.median(col) for col in matrix.T]
    best = int(np.argmin(medians))
    one = np.array(record["one_step"], dtype=bool).sum(axis=0)  # per grid point
    n = len(record["steps"])
    top = int(one.max())
    return {
        "k": record["k"],
        "d": record["d"],
        "m": record["m"],
        "budget": record["budget"],
        "steps": value,
        "low": low,
        "high": math.inf if math.isinf(value) else high,
        "draws": draws,
        "best_exponent": record["eta_exponents"][best],
        "medians": medians,
        "one_step": (top / n, *stats.wilson(top, n)),
        "one_step_exponent": record["eta_exponents"][int(one.argmax())],
        "reached": float(np.isfinite(matrix[:, best]).mean()),
        "collapse": float(np.mean([row[best] for row in record["collapsed"]])),
    }


def analyse_series(points: list[dict[str, Any]]) -> dict[str, Any]:
    """The held-out law comparison and ``alpha`` with its interval, for one ``k``."""
    points = sorted(points, key=lambda p: p["d"])
    ds = [float(p["d"]) for p in points]
    values = [p["steps"] for p in points]
    out: dict[str, Any] = {"points": points, "comparison": None, "alpha": (math.nan,) * 3}
    if len(ds) >= 2:
        matrix = np.column_stack([p["draws"] for p in points])
        fitted = POWER.fit(ds, values)[1]
        unreached = np.isinf(matrix)
        floor = np.where(unreached, max(p["budget"] for p in points) + 1.0, matrix)
        low = stats.one_sided_exponent(POWER, ds, floor, unreached, "low")
        high = stats.interval(stats.exponent_draws(POWER, ds, matrix))[1]
        out["alpha"] = (fitted, low, high)
    if len(ds) >= 3:
        lows, highs = [p["low"] for p in points], [p["high"] for p in points]
        out["comparison"] = stats.compare_laws(
            POLYLOG, POWER, ds, values, lows, highs, RIVAL_MIN_ALPHA
        )
    return out


def analyse(records: list[Record]) -> dict[int, dict[str, Any]]:
    by_k: dict[int, list[dict[str, Any]]] = {}
    for r in records:
        if r["role"] == "d":
            by_k.setdefault(r["k"], []).append(point(r))
    return {k: analyse_series(points) for k, points in sorted(by_k.items())}


# --- verdict ---------------------------------------------------------------------------------


def judge(k: int, a: dict[str, Any]) -> tuple[str, str]:
    """One ``k``'s outcome and its reason (the criterion of ``Config``)."""
    points, cmp = a["points"], a["comparison"]
    alpha_low = a["alpha"][1]
    largest = points[-1]
    if largest["one_step"][1] >= ONE_STEP_TARGET:
        return stats.NOT_REPRODUCED, (
            f"k={k}: one step suffices at d={largest['d']}: one-step rate "
            f"{stats.fmt_interval(*largest['one_step'])}"
        )
    favours = cmp is not None and cmp["decided"] == "paper"
    if alpha_low >= CONTRADICTING_ALPHA and not favours:
        return stats.NOT_REPRODUCED, (
            f"k={k}: steps* grow like a power of d: alpha's lower bound {alpha_low:.3g} >= "
            f"{CONTRADICTING_ALPHA}"
        )
    open_one = [p["d"] for p in points if p["one_step"][2] >= ONE_STEP_TARGET]
    if open_one:
        return stats.INCONCLUSIVE, (
            f"k={k}: the one-step rate's interval reaches {ONE_STEP_TARGET} at d={open_one}: "
            "more seeds would decide"
        )
    unreached = [p for p in points if math.isinf(p["high"])]
    if unreached:
        shares = ", ".join(f"{p['reached']:.2f} at d={p['d']}" for p in unreached)
        return stats.INCONCLUSIVE, (
            f"k={k}: steps* has no finite upper bound at d={[p['d'] for p in unreached]} (share "
            f"of replicas reaching success at the best step size: {shares}): a larger step budget "
            "or more seeds would decide, unless the replicas left are stuck (collapsed)"
        )
    if cmp is None:
        return stats.INCONCLUSIVE, f"k={k}: the held-out test needs at least 3 values of d"
    if not favours:
        listed = ", ".join(f"{p['steps']:g}" for p in points)
        sizes = ", ".join(str(p["d"]) for p in points)
        said = {
            "both": "both laws predict the held-out d's: larger d would separate them",
            "neither": "neither law predicts the held-out d's within their intervals (steps* "
            f"{listed} at d = {sizes}; alpha = {stats.fmt_interval(*a['alpha'])})",
            "rival": "only the power law predicts the held-out d's, but alpha's lower bound "
            f"{alpha_low:.3g} < {CONTRADICTING_ALPHA}",
        }[cmp["decided"]]
        return stats.INCONCLUSIVE, f"k={k}: {said}"
    if alpha_low >= CONTRADICTING_ALPHA:
        return stats.INCONCLUSIVE, (
            f"k={k}: the held-out test favours polylog but alpha's lower bound {alpha_low:.3g} "
            f">= {CONTRADICTING_ALPHA}: the two rules disagree"
        )
    return stats.REPRODUCED, (
        f"k={k}: one step does not suffice at any d, GD reaches success, and only the polylog "
        "law predicts steps* at the larger d's"
    )


def verdict(records: list[Record], config: Config) -> dict:
    analysed = analyse(records)
    judged = {k: judge(k, a) for k, a in analysed.items()}
    outcomes = [o for o, _ in judged.values()]
    if not judged:
        outcome, reason = stats.INCONCLUSIVE, "no d series was run"
    elif stats.NOT_REPRODUCED in outcomes:
        outcome = stats.NOT_REPRODUCED
        reason = "; ".join(r for o, r in judged.values() if o == stats.NOT_REPRODUCED)
    elif all(o == stats.REPRODUCED for o in outcomes):
        outcome, reason = stats.REPRODUCED, "; ".join(r for _, r in judged.values())
    else:
        outcome = stats.INCONCLUSIVE
        reason = "; ".join(r for o, r in judged.values() if o == stats.INCONCLUSIVE)
    estimates, measured = [], []
    for k, a in analysed.items():
        for p in a["points"]:
            estimates.append(
                stats.estimate(f"k={k}: steps*(d={p['d']})", p["steps"], p["low"], p["high"])
            )
            estimates.append(stats.estimate(f"k={k}: one-step rate (d={p['d']})", *p["one_step"]))
            measured.append(
                f"k={k}, d={p['d']}: steps* {stats.fmt_interval(p['steps'], p['low'], p['high'])} "
                f"(best eta 2^{p['best_exponent']:g} d^k ln d, reached by {p['reached']:.2f} of "
                f"the replicas there, {p['collapse']:.2f} collapsed at the budget), one-step rate "
                f"{stats.fmt_interval(*p['one_step'])}"
            )
        estimates.append(stats.estimate(f"k={k}: power exponent alpha", *a["alpha"]))
        if a["comparison"] is not None:
            c = a["comparison"]
            measured.append(
                f"k={k} held-out test (fit d <= {int(max(c['paper']['fitted_on']))}): "
                f"polylog {_predicted(c['paper'])}, power {_predicted(c['rival'])} -> "
                f"{c['decided']}; alpha = {stats.fmt_interval(*a['alpha'])}"
            )
    for r in records:
        if r["role"] == "m":
            p = point(r)
            estimates.append(
                stats.estimate(
                    f"k={r['k']}: steps*(d={r['d']}, m={r['m']})", p["steps"], p["low"], p["high"]
                )
            )
            measured.append(
                f"k={r['k']}, d={r['d']}, m={r['m']}: steps* "
                f"{stats.fmt_interval(p['steps'], p['low'], p['high'])}, one-step rate "
                f"{stats.fmt_interval(*p['one_step'])}"
            )
    return stats.claim(
        outcome,
        reason,
        "; ".join(measured),
        CRITERION + f" ({config.seeds} seeds, budget {config.budget} steps)",
        estimates,
    )


def _predicted(fit: dict[str, Any]) -> str:
    shown = ", ".join("n/a" if v is None else f"{v:.3g}" for v in fit["predicted"])
    return f"[{shown}] ({'inside' if fit['inside'] else 'outside'})"


# --- figure ----------------------------------------------------------------------------------


def _steps_bars(ax, xs, points, budget: int, **style) -> None:
    r"""steps* with bootstrap bars; an open upper end is drawn to the budget, a value never
    reached as a triangle at the budget."""
    vals = np.array([p["steps"] for p in points])
    lows = np.array([p["low"] for p in points])
    highs = np.array([p["high"] for p in points])
    highs = np.where(np.isinf(highs), float(budget), highs)
    xs, shown = np.asarray(xs, dtype=float), np.isfinite(vals)
    bars = plotting.bar_lengths(vals[shown], lows[shown], highs[shown])
    line = ax.errorbar(xs[shown], vals[shown], yerr=bars, fmt="o", capsize=3, **style)
    if (~shown).any():
        color = line.lines[0].get_color()
        ax.plot(xs[~shown], [budget] * int((~shown).sum()), "^", color=color)


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    r"""steps\* vs ``d`` (both laws fitted on the smaller half), the best one-step rate vs ``d``,
    the median steps per step size, and steps\* vs ``m``."""
    path = out / "kparity_steps.png"
    analysed = analyse(records)
    with plotting.figure(path, ncols=4, width=4.6) as (_, (by_d, one_ax, by_eta, by_m)):
        for k, a in analysed.items():
            pts = a["points"]
            ds = [p["d"] for p in pts]
            _steps_bars(by_d, ds, pts, config.budget, label=f"k={k}: steps* (bootstrap 95%)")
            c = a["comparison"]
            grid = np.geomspace(min(ds), max(ds), 64)
            for side, law, style in (("paper", POLYLOG, "-"), ("rival", POWER, "--")):
                if c is not None and None not in c[side]["params"]:
                    fitted = law.predict(c[side]["params"], grid)
                    by_d.plot(
                        grid, fitted, style, lw=1, label=f"k={k}: {law.formula}, smaller half"
                    )
            rates = np.array([p["one_step"] for p in pts])
            one_ax.errorbar(
                ds,
                rates[:, 0],
                yerr=plotting.bar_lengths(rates[:, 0], rates[:, 1], rates[:, 2]),
                marker="o",
                capsize=3,
                label=f"k={k}",
            )
            for r, p in zip(
                sorted(
                    (r for r in records if r["role"] == "d" and r["k"] == k), key=lambda r: r["d"]
                ),
                pts,
                strict=True,
            ):
                medians = np.array(p["medians"])
                exps = np.array(r["eta_exponents"])
                by_eta.plot(
                    exps,
                    np.where(np.isfinite(medians), medians, config.budget),
                    marker="o",
                    label=f"k={k}, d={p['d']}",
                )
        widths = sorted((point(r) for r in records if r["role"] == "m"), key=lambda p: p["m"])
        if widths:
            _steps_bars(by_m, [p["m"] for p in widths], widths, config.budget)
            by_m.set_title(f"k={config.width_k}, d={config.width_d}", fontsize=9)
        else:
            by_m.text(
                0.5, 0.5, "no width series in this preset", ha="center", transform=by_m.transAxes
            )
        for ax, xlabel in ((by_d, "d"), (one_ax, "d"), (by_m, "m")):
            ax.set_xscale("log", base=2)
            ax.set_xlabel(xlabel)
        for ax in (by_d, by_eta, by_m):
            ax.set_ylabel(f"steps to certified error <= {config.success_tol:g}")
            ax.set_yscale("log", base=2)
            ax.set_ylim(bottom=0.8)
        by_d.set_title("steps* (median, best step size); bar to the budget: open", fontsize=9)
        by_d.legend(fontsize=6)
        one_ax.axhline(ONE_STEP_TARGET, color="grey", ls="--", lw=0.8)
        one_ax.set_ylim(-0.05, 1.05)
        one_ax.set_ylabel("best one-step success rate (Wilson 95%)")
        one_ax.legend(fontsize=7)
        by_eta.axhline(config.budget, color="grey", ls="--", lw=0.8)
        by_eta.set_xlabel("j  (eta = 2^j d^k ln d)")
        by_eta.set_title("median steps per step size (at the budget: not reached)", fontsize=9)
        by_eta.legend(fontsize=6)
    return [path]


EXPERIMENT = register(
    Experiment(
        name="kparity-steps",
        claim="A1.k",
        title="k-sparse parity: a few GD steps instead of one (beyond the papers)",
        paper="Not a claim of the papers (SPEC A1 generalization): with k = 3 (and 4) heads, one "
        "population step no longer suffices, while the number of population GD steps to "
        "success grows at most polylogarithmically in d at fixed width.",
        config_type=Config,
        run=run,
        figure=figure,
        verdict=verdict,
        split=split,
        section=SECTION,
        presets={
            "quick": {
                "series": [{"k": 3, "d_values": [16, 32, 64, 128]}],
                "m_values": [],
                "seeds": 16,
                "eta_exponents": [-4.0, -2.0, 0.0, 2.0],
                "budget": 100,
            },
            "standard": {
                "series": [
                    {"k": 3, "d_values": [16, 32, 64, 128, 256, 512, 1024]},
                    {"k": 4, "d_values": [16, 32, 64, 128]},
                ],
                "m_values": [8, 16, 64],
                "width_k": 3,
                "width_d": 256,
                "seeds": 64,
                "eta_exponents": [-6.0, -4.0, -2.0, 0.0, 2.0, 4.0],
                "budget": 200,
            },
            "full": {
                "series": [
                    {"k": 3, "d_values": [2**j for j in range(4, 14)]},
                    {"k": 4, "d_values": [2**j for j in range(4, 10)]},
                ],
                "m_values": [8, 16, 64, 128],
                "width_d": 1024,
                "seeds": 128,
                "eta_exponents": [j / 2 for j in range(-12, 9)],
                "budget": 1000,
                "device": "auto",
            },
        },
    )
)
