"""B5.3b — in distribution, how fast fixed and stochastic PE's training losses converge (SPEC
B5.3, Part F), a companion entry of ``length-generalization`` (the package).

The paper's sentence is about training-loss convergence ("no clear effect"). Each run of B5.3
stores its per-step training losses (``step_losses``, on the run's first record); the measure is
the steps a run needs until its running mean stays within 10% of its own final loss
(:func:`steps_to_converge`), judged as the fixed / stochastic ratio of the seed means. That fixed
PE ends lower in distribution (it fits the training length) is the paper's own remark, reported
beside it (fixed / stochastic final loss at ``T``), not judged.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

from ...metrics import calibration, stats
from ..base import Record
from ..select_common import fmt_mean, mean_estimate, seed_mean
from .corollary import main_records

MIN_SEEDS = 4
"""Fewer seeds per mode decide nothing (B5.3 and B5.3b)."""
SPREAD_FLOOR = 1e-3
"""Least per-seed relative spread a simulation uses (a measured spread of one seed is 0)."""
BAND = (0.5, 2.0)
"""B5.3b: "no clear effect" means a fixed / stochastic ratio of the steps to converge inside
this band."""
CLOSE = 0.1
"""B5.3b: a run has converged once its running mean stays within 10% of its final loss."""
SMOOTHING = 20
"""B5.3b: the running mean is centred, over ``steps // 20`` steps (21 at 400), cut at the ends."""

SimulateAtT = Callable[[Any, np.random.Generator], list[Record]]
"""``(config, rng) -> records``: B5.3's simulated run at the training length alone."""

CRITERION = (
    "per run, the steps to converge: the first step from which the running mean of the "
    f"per-step training losses (centred, steps // {SMOOTHING} steps) stays within "
    f"{CLOSE:.0%} of the run's final loss (mean over its last tenth); fixed / stochastic ratio of "
    "the seed means with its bootstrap 95% interval over seeds: reproduced when the interval "
    f"lies inside [{BAND[0]}, {BAND[1]:g}], not reproduced when it lies entirely outside it, "
    f"inconclusive otherwise (or with fewer than {MIN_SEEDS} seeds per mode); the fixed / "
    "stochastic final loss at T is reported, not judged (criterion version 3, SPEC Part F)"
)


def running_mean(losses: stats.Floats) -> np.ndarray:
    """The per-step losses' running mean, centred over ``steps // SMOOTHING`` steps (at least
    one, made odd) and cut at the ends."""
    v = np.asarray(losses, dtype=float)
    n, half = len(v), max(1, len(v) // SMOOTHING) // 2
    sums = np.concatenate([[0.0], np.cumsum(v)])
    at = np.arange(n)
    low, high = np.maximum(at - half, 0), np.minimum(at + half + 1, n)
    return (sums[high] - sums[low]) / (high - low)


def final_loss(losses: stats.Floats) -> float:
    """A run's final loss: the mean over its last tenth of steps (as ``train_loss``)."""
    v = np.asarray(losses, dtype=float)
    return float(v[-max(1, len(v) // 10) :].mean())


def steps_until(losses: stats.Floats, low: float, high: float) -> int:
    """The first step (counted from 1) from which the running mean stays inside ``[low, high]``
    to the end; ``steps + 1`` when it is outside at the last step."""
    mean = running_mean(losses)
    outside = np.flatnonzero((mean < low) | (mean > high))
    return int(outside[-1]) + 2 if len(outside) else 1


def steps_to_converge(losses: stats.Floats) -> int:
    """B5.3b's measure: the steps until the running mean stays within ``CLOSE`` (10%) of the
    run's final loss (:func:`final_loss`)."""
    final = final_loss(losses)
    return steps_until(losses, (1 - CLOSE) * final, (1 + CLOSE) * final)


def curves(records: list[Record]) -> dict[str, list[Any]]:
    """Per PE mode, each seed's per-step training losses (``step_losses``), in seed order."""
    out = {}
    for pe in ("fixed", "stochastic"):
        mine = [r for r in main_records(records) if r["pe"] == pe and "step_losses" in r]
        out[pe] = [r["step_losses"] for r in sorted(mine, key=lambda r: r["seed"])]
    return out


def _losses_at(records: list[Record], T: int, pe: str) -> np.ndarray:
    return np.array([r["loss"] for r in main_records(records) if r["pe"] == pe and r["T"] == T])


def _ratio_draws(top: np.ndarray, bottom: np.ndarray, seed: int = 0) -> np.ndarray:
    """Bootstrap draws of ``mean(top) / mean(bottom)``, each array resampled on its own (as
    ``stats.bootstrap``, vectorized; the count honours ``stats.resampling``)."""
    rng = np.random.default_rng(seed)
    means = [v[stats.resample_rows(len(v), rng)].mean(axis=1) for v in (top, bottom)]
    return means[0] / means[1]


def ratio_estimate(name: str, top: np.ndarray, bottom: np.ndarray) -> dict | None:
    """``mean(top) / mean(bottom)`` with its bootstrap 95% interval over seeds (each array's
    seeds resampled on their own); ``None`` with fewer than 2 seeds in either."""
    if min(len(top), len(bottom)) < 2:
        return None
    draws = _ratio_draws(top, bottom)
    return stats.estimate(name, top.mean() / bottom.mean(), *stats.interval(draws))


def in_distribution(records: list[Record], T: int) -> dict | None:
    """Fixed / stochastic final loss at ``T`` on the evaluation set (reported, not judged)."""
    fixed, stochastic = (_losses_at(records, T, pe) for pe in ("fixed", "stochastic"))
    return ratio_estimate(f"fixed / stochastic loss at T' = T = {T}", fixed, stochastic)


def convergence(records: list[Record]) -> dict[str, Any]:
    """B5.3b's numbers: per mode each seed's steps to converge (:func:`steps_to_converge`), their
    fixed / stochastic ratio (judged) and, reported, the ratio of the steps until the running
    mean stays below ``1 + CLOSE`` times stochastic's mean final loss, a level both modes reach
    when fixed PE ends lower."""
    runs = curves(records)
    steps = {pe: np.array([steps_to_converge(c) for c in cs], float) for pe, cs in runs.items()}
    name = "fixed / stochastic steps to converge"
    found = {
        "steps": steps,
        "seeds": min(len(v) for v in steps.values()),
        "ratio": ratio_estimate(name, steps["fixed"], steps["stochastic"]),
        "common": None,
    }
    if runs["stochastic"]:
        level = (1 + CLOSE) * float(np.mean([final_loss(c) for c in runs["stochastic"]]))
        reach = {
            pe: np.array([steps_until(c, -np.inf, level) for c in cs]) for pe, cs in runs.items()
        }
        name = f"fixed / stochastic steps to {1 + CLOSE:g} x stochastic's final loss"
        found["common"] = ratio_estimate(name, reach["fixed"], reach["stochastic"])
    return found


def judge_in_distribution(ratio: dict | None, seeds: int) -> tuple[str, str, str]:
    """B5.3b's outcome, one-sentence reason and summary (``CRITERION``)."""
    low, high = BAND
    if ratio is None or seeds < MIN_SEEDS:
        return (
            stats.INCONCLUSIVE,
            f"needs the training-loss curves of both PE modes with at least {MIN_SEEDS} seeds; "
            f"got {seeds}",
            f"needs {MIN_SEEDS} seeds' curves per PE mode, got {seeds}",
        )
    band, shown = f"[{low}, {high:g}]", f"[{ratio['low']:.3g}, {ratio['high']:.3g}]"
    needs = f"fixed PE needs {ratio['value']:.3g}x"
    steps, short = f"{needs} {shown} the steps", f"{needs} the steps"
    if low <= ratio["low"] and ratio["high"] <= high:
        return (
            stats.REPRODUCED,
            f"the fixed / stochastic ratio of the steps the training loss needs to converge lies "
            f"inside {band} (interval {shown})",
            stats.fitting(f"{steps}, inside {band}", f"{short}, inside {band}"),
        )
    if ratio["high"] < low or ratio["low"] > high:
        side = "faster" if ratio["high"] < low else "slower"
        return (
            stats.NOT_REPRODUCED,
            f"the fixed / stochastic ratio of the steps the training loss needs to converge lies "
            f"outside {band} (interval {shown}): fixed PE converges clearly {side}",
            stats.fitting(f"{steps}, outside {band}", steps, f"{short}, outside {band}"),
        )
    end = f"{low}" if ratio["low"] < low else f"{high:g}"  # the end the interval straddles
    return (
        stats.INCONCLUSIVE,
        f"the interval {shown} of the fixed / stochastic ratio of the steps to converge "
        f"straddles an end of {band} (more seeds would decide)",
        stats.fitting(f"{steps}, across {end}", f"{short}; its interval spans {end}"),
    )


def setting(config: Any) -> str:
    """What the two PE modes share in ``run()``: the width, the steps and the rate's scaling."""
    rows = config.T * max(config.factors)  # the fixed table's positions, as in run()
    rates = {pe: config.training(config.pe_dim, 0, pe, rows).lr for pe in ("stochastic", "fixed")}
    return (
        f"equal width (m_p = {config.pe_dim}), equal steps ({config.steps}) and equal batch; "
        f"the rate is scaled to the rank each PE spans ({rates['stochastic']:.3g} stochastic, "
        f"{rates['fixed']:.3g} fixed)"
    )


def verdict(records: list[Record], config: Any) -> dict:
    """The B5.3b entry without its calibration (``stats.claim``); ``config`` is B5.3's."""
    found, level = convergence(records), in_distribution(records, config.T)
    ratio, seeds = found["ratio"], found["seeds"]
    outcome, reason, short = judge_in_distribution(ratio, seeds)
    estimates, parts = [], []
    if ratio is not None:
        estimates.append(ratio)
        parts.append(f"{stats.fmt_estimate(ratio)} (bootstrap over {seeds} seeds per mode)")
    for pe, steps in found["steps"].items():
        if len(steps):
            summary = seed_mean(list(steps))
            estimates.append(mean_estimate(f"{pe} PE steps to converge", summary))
            parts.append(f"{pe} PE converges in {fmt_mean(summary)} of {config.steps} steps")
    parts.append(
        f"steps to converge: the first step from which the running mean of the per-step "
        f"training losses (centred, {max(1, config.steps // SMOOTHING) // 2 * 2 + 1} steps) stays "
        f"within {CLOSE:.0%} of the run's final loss (its mean over the last tenth of steps)"
    )
    reported = [e for e in (found["common"], level) if e is not None]
    estimates += reported
    if reported:
        shown = "; ".join(stats.fmt_estimate(e) for e in reported)
        parts.append(f"reported, not judged: {shown}")
    parts.append(f"the two modes at {setting(config)}")
    return stats.claim(
        outcome,
        reason,
        "; ".join(parts),
        CRITERION,
        estimates,
        summary=short,
        claim="B5.3b",
        title="Fixed vs stochastic PE: training-loss convergence in distribution",
        paper="In distribution (training-loss convergence), using fixed instead of stochastic "
        "positional encoding has no clear effect.",
        section="the papers' claims",
    )


CURVE_START = 10.0
"""A simulated loss curve starts ``1 + 10`` times above its final level (:func:`loss_curve`)."""


def loss_curve(final: float, steps_needed: float, steps: int) -> np.ndarray:
    """A simulated run's per-step losses ``final · (1 + A e^(−t / τ))``, ``A = CURVE_START``,
    ``τ = steps_needed / ln(A / CLOSE)``: ``CLOSE`` above ``final`` at step ``steps_needed``.
    :func:`steps_to_converge` reads it back within half its window (10 steps at 400) up to
    about 0.4 of the run, and up to 6% early at 0.75 of it (the last tenth still decays)."""
    tau = steps_needed / np.log(CURVE_START / CLOSE)
    return final * (1 + CURVE_START * np.exp(-np.arange(steps) / tau))


@cache
def _readings(steps: int) -> np.ndarray:
    """:func:`steps_to_converge` of ``loss_curve(1, n, steps)`` for ``n = 1 … steps``."""
    read = [steps_to_converge(loss_curve(1.0, n, steps)) for n in range(1, steps + 1)]
    return np.maximum.accumulate(np.array(read, dtype=float))


def curve_read_as(final: float, steps_read: float, steps: int) -> np.ndarray:
    """A :func:`loss_curve` that :func:`steps_to_converge` reads as ``steps_read`` (its readings
    inverted by interpolation); no such curve is read later than about 0.8 of the run (325 of
    400 steps), and a later ``steps_read`` gets the latest."""
    needed = np.interp(steps_read, _readings(steps), np.arange(1, steps + 1))
    return loss_curve(final, float(needed), steps)


def fitted(steps: dict[str, np.ndarray], finals: dict[str, np.ndarray]) -> dict[str, Any]:
    """The parameters :func:`hypotheses` simulates from, fitted to per-seed steps to converge and
    final losses per mode: the stochastic mode's mean steps (``base``), the fixed / stochastic
    ratio of the means (``measured``), per mode the s.d. of ``ln`` steps (``spread``, at least
    ``SPREAD_FLOOR``) and the mean final loss (``finals``), and the rival's ratio (``rival``):
    the measured one when outside ``BAND``, else the nearer end moved out by 2x."""
    base = float(steps["stochastic"].mean())
    measured = float(steps["fixed"].mean()) / base
    inside = BAND[0] <= measured <= BAND[1]
    return {
        "base": base,
        "measured": measured,
        "inside": inside,
        "rival": (2 * BAND[1] if measured >= 1 else BAND[0] / 2) if inside else measured,
        "spread": {
            pe: max(SPREAD_FLOOR, float(np.log(v).std(ddof=1)) if len(v) > 1 else 0.0)
            for pe, v in steps.items()
        },
        "finals": {pe: float(v.mean()) for pe, v in finals.items()},
    }


def hypotheses(records: list[Record], simulate_at_T: SimulateAtT) -> calibration.Hypotheses:
    """B5.3b's two statements with the measured per-seed noise (SPEC Part E). Paper: fixed PE
    converges in the steps stochastic PE needs (ratio 1); rival: a ratio outside ``BAND``, the
    measured one if it is, else the nearer end moved out by 2x (4 or 0.25). Per seed the steps
    are log-normal around the mode's mean with the s.d. of their log, each run a curve read as
    that many steps (:func:`curve_read_as`) to the mode's mean final loss; the losses at ``T``
    (reported, not judged) as measured, by ``simulate_at_T`` (B5.3's simulation at the training
    length only: B5.3b reads no other length).

    Each simulated run redraws these parameters (:func:`fitted`) from one bootstrap draw of the
    real run's seeds, each mode's resampled on their own as the criterion's interval does
    (``redraws_itself``): the rival's ratio is the measured one, which a run simulated from the
    paper's law (ratio 1) would not carry."""
    runs, found = curves(records), convergence(records)
    steps = found["steps"]
    finals = {pe: np.array([final_loss(c) for c in runs[pe]]) for pe in runs}
    point = fitted(steps, finals)

    def redrawn(rng: np.random.Generator) -> dict[str, Any]:
        picks = {pe: rng.integers(len(v), size=len(v)) for pe, v in steps.items()}
        return fitted(
            {pe: v[picks[pe]] for pe, v in steps.items()},
            {pe: v[picks[pe]] for pe, v in finals.items()},
        )

    def simulated(paper: bool) -> calibration.Simulate:
        def draw(cfg: Any, rng: np.random.Generator) -> list[Record]:
            p = redrawn(rng)
            ratio = 1.0 if paper else p["rival"]
            mean_steps = {"stochastic": p["base"], "fixed": ratio * p["base"]}
            out = simulate_at_T(cfg, rng)
            for r in out:
                pe = r["pe"]
                needed = mean_steps[pe] * math.exp(p["spread"][pe] * rng.standard_normal())
                r["step_losses"] = curve_read_as(p["finals"][pe], needed, cfg.steps)
            return out

        return draw

    spread, finals_mean = point["spread"], point["finals"]
    return calibration.Hypotheses(
        paper=simulated(True),
        rival=simulated(False),
        paper_law=f"fixed PE converges in the steps stochastic PE needs (ratio 1; "
        f"{point['base']:.3g} steps as measured)",
        rival_law=f"fixed / stochastic steps to converge = {point['rival']:.3g} "
        + (
            "(as measured)"
            if not point["inside"]
            else f"(measured {point['measured']:.3g}, inside the band)"
        ),
        noise="log-normal steps per seed with the measured s.d. of their log: stochastic "
        f"{spread['stochastic']:.2g}, fixed {spread['fixed']:.2g}; mean final losses "
        f"{finals_mean['stochastic']:.3g} stochastic, {finals_mean['fixed']:.3g} fixed; every "
        "simulated run redraws these, the mean steps and the rival's ratio from a bootstrap of "
        "the seeds (each mode's on their own)",
        redraws_itself=True,
    )
