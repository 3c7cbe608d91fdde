"""A7.2 — polylog parameters: the smallest width ``m*(d)`` whose one-step success reaches a share
of its plateau, and its growth law decided against a power-law rival (SPEC A7.2, Parts D–F).

For each ``d`` the search (``search_width``) first finds the success plateau, then ``m*`` by
bisection; every probe keeps each replica's certified outcome (SPEC A6), so the bootstrap over
replicas re-runs the search on the stored probes, plateau included (``stats.threshold_draws``
with a ``reference``). The growth of ``m*`` is decided by the rule of SPEC Part F
(``xor_thresholds.growth_test``: the local log-log exponent's fall and the held-out relative
errors of the polylog law and of the power law); the criterion's error rates come from simulated
runs (``hypotheses``, Part E) that reproduce the plateau.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import Field

from ..configs import Device, OneStepConfig
from ..metrics import calibration, stats
from ..metrics.stats import POLYLOG, POWER
from ..train.search import Outcomes, Probe, probe_matrix, smallest_passing
from . import costs, plotting
from .base import Experiment, ExperimentConfig, InputLength, Record, register

RIVAL_MIN_ALPHA = 0.25
"""The rival: a power law ``c d^alpha`` with ``alpha >= 0.25``."""
CONTRADICTING_ALPHA = 0.5
"""``not reproduced`` when the power exponent's bootstrap lower bound reaches this."""
PLATEAU_FLOOR = 0.5
"""A doubling's rate is taken as the plateau only when at least this (``search_width``)."""


class Config(ExperimentConfig):
    """``m*(d)``: the smallest embedding width whose certified one-step success rate (SPEC A6,
    one population step) reaches ``target`` times the success plateau at that ``d``; the same
    ``seeds`` replicas (same ``seed``) at every probe.

    The plateau (SPEC Part F: a success target below the success plateau): one step leaves a
    few replicas failing at every width (about 5–8%; they are different replicas at each ``m``),
    so the rate saturates near 0.92–0.96 and an absolute 0.9 target sits on the plateau's noise.
    The search doubles ``m`` from ``m_start`` until a width's rate is at least ``target`` times
    the rate at twice that width, the latter at least 1/2 (``PLATEAU_FLOOR``); the rate at that
    doubled width, the search's largest probe, is the plateau; then bisection to a step of 1
    finds the smallest ``m`` whose rate reaches ``target`` times the plateau. No plateau up to
    ``m_limit``: ``m*`` not reached (``inf``). The bootstrap resamples the replicas of the
    probes and of the plateau together (the goal is ``target`` times the resampled plateau).

    Criterion (SPEC A7.2, Parts D–F; criterion version 3, written after the standard runs on
    master seeds 0, 1 and 3 were seen, before any standard run of this version): each ``m*`` made
    continuous by interpolating the crossing between the stored probe below it and it, on all
    replicas and on each bootstrap resample (``xor_thresholds.crossing_draws``; SPEC Part E), at
    least 4 ``d``'s, every ``m*`` reached.

    * (i) curvature (``growth.curvature``): the local log-log exponent on the larger half of the
      ``d``'s interval-separated below the smaller half's, or its upper end below 0.25, sides
      with polylog; its lower end at least 0.25 with no such fall sides with the power law.
    * (ii) held-out error (``growth.held_out_errors``): ``a (ln d)^p`` and ``c d^alpha``
      (``alpha >= 0.25``) fitted on the smaller half, mean ``|ln(predicted / measured)|`` on the
      larger half; the rival's minus the paper's error with its 95% interval above 0 sides with
      polylog, below 0 with the power law.

    **reproduced**: both rules side with polylog and the power exponent ``alpha`` (all ``d``'s)
    has a bootstrap lower bound below 0.5. **not reproduced** (SPEC Part D): that lower bound is
    ``>= 0.5`` and the rules do not both side with polylog. **inconclusive**: otherwise (fewer
    than 4 ``d``'s, an ``m*`` not reached, a rule undecided or the two disagreeing); the reason
    names the smallest ``d`` at which the two laws fitted on all sizes differ by more than the
    measured relative interval width.

    The bootstrap lower bound of ``alpha`` is conservative: a resampled ``m*`` counts as its
    smallest value consistent with the probes (one above the largest failing probe below it) at a
    ``d`` above the mean ``ln d``, and as itself below it (both can only lower the slope); one
    beyond every probe below the mean ``ln d`` makes that draw's slope ``-inf``.

    Error rates (``hypotheses``): the paper's side ``m* = a (ln d)^p``, the rival ``c d^alpha``
    (``alpha >= 0.25``), each simulated run with the law refitted to one bootstrap draw of the
    measured ``m*``; per ``d``, latent per-replica thresholds (log-normal with the run's
    log-spread, redrawn per simulated run from the probes with their replicas resampled,
    ``target`` quantile on the law) and, at every probe afresh, failures at the
    plateau's rate (the run's pooled plateau, redrawn binomially per simulated run) go through
    ``search_width``, so the simulated probes sit on the real grid.

    The standard preset starts at ``d = 2^8``: at small ``d`` about one replica in five
    collapses under the anti-symmetric init (SPEC A6).
    """

    d_values: list[InputLength] = Field(
        default=[2**8, 2**10, 2**12, 2**14], min_length=1, description="Input lengths d."
    )
    seeds: int = Field(default=32, ge=1, description="Replicas, the same at every probe.")
    target: float = Field(
        default=0.9,
        gt=0,
        le=1,
        description="m* is the smallest m whose success rate reaches target x the plateau.",
    )
    m_start: int = Field(default=2, ge=1, description="First width the doubling probes.")
    m_limit: int = Field(default=256, ge=1, description="Largest width probed.")
    device: Device = Field(default="cpu", description="cpu, cuda, or auto (cuda if present).")


CRITERION = (
    "m*(d): the smallest m whose certified success rate reaches 0.9 x the success plateau at "
    "that d (the rate at the search's largest probe, a doubling past the first width within 0.9 "
    "of it), bootstrap 95% intervals over replicas with the plateau resampled alike; m* made "
    "continuous by interpolating the crossing, at least 4 d's. (i) curvature: the local log-log "
    "exponent on the larger half of the d's interval-separated below the smaller half's, or its "
    f"upper end below {RIVAL_MIN_ALPHA}, sides with polylog; its lower end >= "
    f"{RIVAL_MIN_ALPHA} with no such fall sides with the power law; (ii) held-out: a(ln d)^p "
    f"and c d^alpha (alpha >= {RIVAL_MIN_ALPHA}) fitted on the smaller half, mean "
    "|ln(predicted/measured)| on the larger half: the rival's minus the paper's error with its "
    "95% interval above 0 sides with polylog, below 0 with the power law. Reproduced when both "
    "rules side with polylog and alpha (all d's) has a bootstrap lower bound < "
    f"{CONTRADICTING_ALPHA}; not reproduced when that lower bound >= {CONTRADICTING_ALPHA} and "
    "the rules do not both side with polylog; inconclusive otherwise (criterion version 3)"
)


def split(config: Config) -> list[Config]:
    return [config.model_copy(update={"d_values": [d]}) for d in config.d_values]


def search_width(
    evaluate: Callable[[int], Outcomes], target: float, start: int, limit: int
) -> tuple[int | None, list[Probe]]:
    """``m*`` relative to the success plateau (``Config``) and every probe, sorted by size.

    Doubling from ``start`` (at most ``limit``) stops at the first ``m`` whose rate is at least
    ``target`` times the rate at ``2m``, that rate at least ``PLATEAU_FLOOR``: ``2m`` is the
    plateau probe, the largest probe of the search. Then ``search.smallest_passing`` with the goal
    ``target`` times the plateau re-walks the doubling (stored probes are not recomputed) and
    bisects, so every stored probe below ``m*`` fails the goal and ``stats.threshold_draws``
    (``reference`` = the plateau probe) finds ``m*`` again. The plateau probe also closes the
    bootstrap interval: a resample that fails at ``m`` passes there. ``(None, probes)`` when no
    plateau appears up to ``limit``."""
    probes: dict[int, Probe] = {}

    def outcomes(m: int) -> tuple[bool, ...]:
        if m not in probes:
            probes[m] = Probe(m, tuple(bool(o) for o in np.asarray(evaluate(m))))
        return probes[m].outcomes

    def rate(m: int) -> float:
        outcomes(m)
        return probes[m].rate

    def ordered() -> list[Probe]:
        return sorted(probes.values(), key=lambda p: p.size)

    m = start
    while True:
        doubled = min(2 * m, limit)
        if doubled == m:
            return None, ordered()
        if rate(doubled) >= PLATEAU_FLOOR and rate(m) >= target * rate(doubled):
            break
        m = doubled
    goal = target * rate(doubled) - 1e-12  # the tolerance of stats.threshold_draws
    m_star, _ = smallest_passing(outcomes, goal, start, limit)
    return m_star, ordered()


def run(config: Config) -> list[Record]:
    from ..train.one_step import run_one_step

    records = []
    for d in config.d_values:

        def evaluate(m: int, d: int = d) -> np.ndarray:
            step = OneStepConfig(
                d=d, m=m, seeds=config.seeds, seed=config.seed, device=config.device
            )
            return run_one_step(step).success

        records.append(search_record(evaluate, d, config))
    return records


def search_record(evaluate: Callable[[int], Outcomes], d: int, config: Config) -> Record:
    """The record of ``d``'s search (``search_width``) over the replicas ``evaluate`` judges;
    ``plateau`` is the rate at the largest probe (the plateau probe of a search that found one)."""
    m_star, probes = search_width(evaluate, config.target, config.m_start, config.m_limit)
    return {
        "d": d,
        "m_star": m_star,
        "params": None if m_star is None else 2 * m_star,
        "target": config.target,
        "seeds": config.seeds,
        "plateau": {"size": probes[-1].size, "rate": probes[-1].rate},
        "probes": [p.as_record() for p in probes],
    }


def lowest_consistent(sizes: list[int], draws: np.ndarray) -> np.ndarray:
    """The smallest threshold consistent with each bootstrap draw: one above the largest probe
    below it (every probe below a draw failed), ``inf`` -> one above the largest probe."""
    grid = np.array(sorted(sizes), dtype=float)
    below = np.searchsorted(grid, draws, side="left")
    return np.where(below > 0, grid[np.maximum(below - 1, 0)] + 1, draws)


def _alpha_floor(ds: np.ndarray, draws: np.ndarray, sizes: list[list[int]]) -> float:
    """The conservative bootstrap lower bound of ``alpha`` (see ``Config``): at a ``d`` above
    the mean ``ln d`` each draw becomes its lowest consistent value; below it an infinite draw
    sends the row's exponent to ``-inf``."""
    above = np.log(ds) >= np.log(ds).mean()
    lowest = np.column_stack([lowest_consistent(s, draws[:, i]) for i, s in enumerate(sizes)])
    floor = np.where(above, lowest, draws)
    return stats.one_sided_exponent(
        POWER, ds.tolist(), floor, np.isinf(floor), "low"
    )  # inf left only below the mean


def separating_d(
    ds: list[float], m: list[float], lows: list[float], highs: list[float]
) -> int | None:
    """The smallest ``d = 2^k`` beyond the largest of ``ds`` (ascending) at which the polylog law
    and the rival (``alpha >= 0.25``), both fitted on all sizes, differ by more than the relative
    interval width measured at the largest ``d``; ``None`` when undefined or beyond ``2^64``."""
    if len(ds) < 2 or not np.isfinite(m + highs).all():
        return None
    width = (highs[-1] - lows[-1]) / m[-1]
    paper, rival = POLYLOG.fit(ds, m), POWER.fit(ds, m, RIVAL_MIN_ALPHA)
    for k in range(int(math.log2(ds[-1])) + 1, 65):
        p, r = POLYLOG.predict(paper, [2.0**k])[0], POWER.predict(rival, [2.0**k])[0]
        if abs(p - r) > width * min(p, r):
            return 2**k
    return None


def analyse(records: list[Record], config: Config) -> dict[str, Any]:
    """Every number of the verdict and the figure: per ``d`` the plateau (successes, trials at
    the largest probe) and ``m*`` with its bootstrap interval, both exponents with intervals,
    the growth rules on the interpolated crossings (``xor_thresholds.growth_test``) and the
    separating ``d``."""
    from . import xor_thresholds as xt

    rows = sorted(records, key=lambda r: r["d"])
    ds = np.array([float(r["d"]) for r in rows])
    m, lows, highs, draws, probed, plateaus, crossings = [], [], [], [], [], [], []
    for r in rows:
        sizes, outcomes = probe_matrix(r["probes"])
        reference = outcomes[:, int(np.argmax(sizes))]
        plateaus.append((max(sizes), int(reference.sum()), len(reference)))
        unreached = np.full(stats.resample_count(), math.inf)
        point, boot, crossing = math.inf, unreached, (math.inf, unreached)
        if r["m_star"] is not None:  # else no plateau up to m_limit: not reached in any resample
            # each d is its own replica set: its own bootstrap stream
            point, boot = stats.threshold_draws(
                sizes, outcomes, config.target, reference=reference, seed=r["d"]
            )
            crossing = xt.crossing_draws(sizes, outcomes, config.target, reference, seed=r["d"])
        low, high = stats.interval(boot)
        m.append(point)
        lows.append(low)
        highs.append(math.inf if math.isinf(point) else high)
        draws.append(boot)
        probed.append(sizes)
        crossings.append(crossing)
    matrix = np.column_stack(draws)
    out: dict[str, Any] = {"d": ds.tolist(), "m": m, "low": lows, "high": highs}
    out.update(draws=matrix, plateaus=plateaus, crossing=np.array([c[0] for c in crossings]))
    out["alpha"] = out["p"] = (math.nan, math.nan, math.nan)
    if len(ds) >= 2:
        for name, law in (("alpha", POWER), ("p", POLYLOG)):
            low, high = stats.interval(stats.exponent_draws(law, ds.tolist(), matrix))
            out[name] = (law.fit(ds.tolist(), m)[1], low, high)
        alpha, _, high = out["alpha"]
        out["alpha"] = (alpha, _alpha_floor(ds, matrix, probed), high)
    moved = np.column_stack([c[1] for c in crossings])
    out["growth"] = xt.growth_test(ds.tolist(), out["crossing"], moved, RIVAL_MIN_ALPHA)
    out["separating_d"] = separating_d(ds.tolist(), m, lows, highs)
    return out


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    """``m*(d)`` with bootstrap bars and both laws fitted on the smaller half (the held-out
    test's): against ``d`` (log-log) and against ``ln d`` (log-log: polylog is a line)."""
    from .xor_thresholds import fmt_rule

    path = out / "polylog_width.png"
    a = analyse(records, config)
    ds, m, low = np.array(a["d"]), np.array(a["m"]), np.array(a["low"])
    found = np.isfinite(m)
    largest = np.array([size for size, _, _ in a["plateaus"]], dtype=float)
    high = np.where(np.isinf(a["high"]), 2.0 * largest, a["high"])  # open: drawn to 2x
    grid = np.geomspace(ds.min(), ds.max(), 64)
    x_forms: tuple[Callable[[np.ndarray], np.ndarray], ...] = (np.asarray, np.log)
    g = a["growth"]
    with plotting.figure(path, ncols=2) as (_, axes):
        for ax, x_of, xlabel in zip(axes, x_forms, ("d", "ln d"), strict=True):
            bars = plotting.bar_lengths(m[found], low[found], high[found])
            label = "measured m*, bootstrap 95%"
            ax.errorbar(x_of(ds[found]), m[found], yerr=bars, fmt="o", color="k", label=label)
            if (~found).any():
                ax.plot(x_of(ds[~found]), largest[~found], "^", color="k", label="no plateau")
            for side, law, style in (("paper", POLYLOG, "-"), ("rival", POWER, "--")):
                if "fits" in g:
                    fitted_on = f"d <= {int(max(g['held_out']['fitted_on']))}"
                    label = f"{law.formula} fitted on {fitted_on}"
                    ax.plot(x_of(grid), law.predict(g["fits"][side], grid), style, label=label)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log", base=2)
            ax.set_xlabel(xlabel)
            ax.set_ylabel(f"m* (success >= {config.target:g} x plateau)")
        axes[1].set_xticks(np.log(ds), [f"{v:.1f}" for v in np.log(ds)], minor=False)
        axes[1].minorticks_off()
        axes[0].legend(fontsize=7)
        axes[0].set_title(f"m* = c d^alpha: alpha = {stats.fmt_interval(*a['alpha'])}", fontsize=9)
        title = f"m* = a (ln d)^p: p = {stats.fmt_interval(*a['p'])}"
        if "curvature" in g:
            c = g["curvature"]
            title += f"\nlocal exponent {fmt_rule(c['smaller'])} -> {fmt_rule(c['larger'])}"
        axes[1].set_title(title, fontsize=9)
    return [path]


def _reason(a: dict[str, Any], verdict: str) -> str:
    """One sentence: why this verdict, and for ``inconclusive`` which sizes would decide."""
    from .xor_thresholds import growth_reason

    g, alpha_low = a["growth"], a["alpha"][1]
    if verdict == stats.NOT_REPRODUCED:
        return f"m* grows like a power of d: alpha's lower bound {alpha_low:.3g} >= 0.5"
    said = growth_reason(g, len(a["d"]), RIVAL_MIN_ALPHA)
    if verdict == stats.REPRODUCED:
        return said
    unreached = [int(d) for d, v in zip(a["d"], a["m"], strict=True) if math.isinf(v)]
    if unreached:
        said = f"no success plateau (so no m*) up to m_limit at d = {unreached}"
    elif g["decided"] == "paper":
        said += f", but alpha's lower bound {alpha_low:.3g} >= 0.5"
    where = a["separating_d"]
    return said + (
        f"; the two laws fitted on all sizes first differ by more than the measured interval "
        f"width at d = 2^{int(math.log2(where))}"
        if where
        else "; no d up to 2^64 separates the fitted laws by that width"
    )


def growth_summary(g: dict[str, Any], sizes: int) -> str:
    """``xor_thresholds.growth_reason`` in short (a claim's ``summary``): the rules' deciding
    numbers, the local exponent's ends to two digits as the reason gives them."""
    from ..metrics import growth
    from .xor_thresholds import SIDES

    if g["decided"] is None:
        return f"only {sizes} values of d; the growth rules need {growth.MIN_SIZES}"
    if g["decided"] == growth.UNREACHED:
        return "a threshold was not reached within the probes"
    c = g["curvature"]
    if g["decided"] == "paper":
        smaller, larger = (
            stats.fmt_number(c["smaller"]["value"], 2),
            stats.fmt_number(c["larger"]["value"], 2),
        )
        if c["change"]["high"] is not None and c["change"]["high"] < 0:
            return stats.fitting(
                f"local exponent falls {smaller} -> {larger}; polylog predicts better",
                f"exponent falls {smaller} -> {larger}; polylog predicts better",
            )
        high = stats.fmt_number(c["larger"]["high"], 2)
        return f"local exponent <= {high} < {RIVAL_MIN_ALPHA:g}; polylog predicts better"
    return f"curvature test: {SIDES[c['decided']]}; held-out test: {SIDES[g['side']]}"


def _summary(a: dict[str, Any], verdict: str) -> str:
    """``_reason`` in short (a claim's ``summary``)."""
    g, alpha_low = a["growth"], stats.fmt_number(a["alpha"][1])
    if verdict == stats.NOT_REPRODUCED:
        return (
            f"alpha's lower bound {alpha_low} >= {CONTRADICTING_ALPHA}: m* grows like a power of d"
        )
    unreached = [int(d) for d, v in zip(a["d"], a["m"], strict=True) if math.isinf(v)]
    if verdict == stats.INCONCLUSIVE and unreached:
        return stats.several(
            unreached,
            "no success plateau up to m_limit at d = {}",
            "no success plateau up to m_limit at {} d's",
        )
    if verdict == stats.INCONCLUSIVE and g["decided"] == "paper":
        return stats.fitting(
            f"polylog by both rules, but alpha's lower bound {alpha_low} >= {CONTRADICTING_ALPHA}",
            f"alpha's lower bound {alpha_low} >= {CONTRADICTING_ALPHA} despite the rules",
        )
    return growth_summary(g, len(a["d"]))


def verdict(records: list[Record], config: Config) -> dict:
    from .xor_thresholds import growth_text

    a = analyse(records, config)
    decided = a["growth"]["decided"]
    contradicts = a["alpha"][1] >= CONTRADICTING_ALPHA
    if decided == "paper" and not contradicts:
        outcome = stats.REPRODUCED
    elif contradicts and decided != "paper":
        outcome = stats.NOT_REPRODUCED
    else:
        outcome = stats.INCONCLUSIVE
    ms = list(zip(a["d"], a["m"], a["low"], a["high"], a["plateaus"], strict=True))
    estimates = [stats.estimate(f"m*(d={int(d)})", v, lo, hi) for d, v, lo, hi, _ in ms]
    estimates += [
        stats.rate_estimate(f"success plateau (d={int(d)}, m={size})", k, n)
        for d, *_, (size, k, n) in ms
    ]
    estimates += [
        stats.estimate("power exponent alpha (m* = c d^alpha)", *a["alpha"]),
        stats.estimate("polylog exponent p (m* = a (ln d)^p)", *a["p"]),
    ]
    g = a["growth"]
    if "curvature" in g:
        estimates += [g["curvature"]["larger"], g["curvature"]["change"]]
        estimates.append(g["held_out"]["difference"])
    measured = "; ".join(
        [
            f"m*(d={int(d)}) = {stats.fmt_interval(v, lo, hi)} (crossing {c:.3g}; success "
            f"plateau {k}/{n} at m={size})"
            for (d, v, lo, hi, (size, k, n)), c in zip(ms, a["crossing"], strict=True)
        ]
        + [f"alpha = {stats.fmt_interval(*a['alpha'])}", f"p = {stats.fmt_interval(*a['p'])}"]
        + ([growth_text(g)] if "curvature" in g else [])
    )
    return stats.claim(
        outcome,
        _reason(a, outcome),
        measured,
        CRITERION + f" (target {config.target:g} x plateau, {config.seeds} seeds per probe)",
        estimates,
        summary=_summary(a, outcome),
        decided=decided,
        separating_d=a["separating_d"],
    )


# --- error rates (SPEC Parts E, F) -------------------------------------------------------------


def hypotheses(records: list[Record], config: Config) -> calibration.Hypotheses:
    """The polylog law ``m* = a (ln d)^p`` and the rival ``c d^alpha`` (``alpha >= 0.25``),
    each simulating runs at ``config``'s sizes, seeds, target and search range (SPEC Parts E, F).
    Each run redraws every fitted parameter from the real run (``redraws_itself``): it refits its
    law to one bootstrap draw of the measured ``m*`` (``xor_thresholds.law_draws``), redraws the
    plateau binomially around the run's pooled plateau (``xor_thresholds.plateau_of``) and the
    log-spread from the probes with their replicas resampled (``xor_thresholds.
    resampled_spread``); per ``d``, latent per-replica thresholds (log-normal with that
    log-spread, the ``target`` quantile on the law) and failures at the plateau's rate, fresh at
    every probe, go through ``search_width``."""
    from . import xor_thresholds as xt

    a = analyse(records, config)
    ds, m, draws = a["d"], a["m"], a["draws"]
    paper = xt.law_draws(POLYLOG, ds, m, draws, None)
    rival = xt.law_draws(POWER, ds, m, draws, RIVAL_MIN_ALPHA)
    successes, trials = xt.plateau_of(records)
    probe_sets = [probe_matrix(r["probes"]) for r in records]
    spread = calibration.log_spread(probe_sets)

    def simulate(law: stats.Law, fits: list[tuple[float, ...]]) -> calibration.Simulate:
        def draw(cfg: Config, rng: np.random.Generator) -> list[Record]:
            params = fits[int(rng.integers(len(fits)))]
            plateau = rng.binomial(trials, successes / trials) / trials
            redrawn = xt.resampled_spread(probe_sets, rng)
            values = [calibration.fitted_value(law, params, d) for d in cfg.d_values]
            return [
                simulated_search(cfg, d, v, redrawn, plateau, rng)
                for d, v in zip(cfg.d_values, values, strict=True)
            ]

        return draw

    p0 = calibration.fit_or_flat(POLYLOG, ds, m)
    r0 = calibration.fit_or_flat(POWER, ds, m, RIVAL_MIN_ALPHA)
    return calibration.Hypotheses(
        paper=simulate(POLYLOG, paper),
        rival=simulate(POWER, rival),
        paper_law=f"m* = {math.exp(p0[0]):.3g} (ln d)^{p0[1]:.3g} (fitted to the measured m*; "
        "each simulated run refits it to a bootstrap draw)",
        rival_law=f"m* = {math.exp(r0[0]):.3g} d^{r0[1]:.3g} (alpha >= {RIVAL_MIN_ALPHA}, "
        "fitted to the same, redrawn alike)",
        noise=f"per-replica latent thresholds, log-normal: log-spread {spread:.3g}, read from the "
        "run's probes (redrawn per run from them, replicas resampled); success plateau "
        f"{successes}/{trials} = {successes / trials:.3g} (pooled over the d's, redrawn "
        "binomially per run), failures fresh at every probe",
        redraws_itself=True,
    )


def simulated_search(
    config: Config,
    d: int,
    value: float,
    spread: float,
    plateau: float,
    rng: np.random.Generator,
) -> Record:
    """The record ``run`` stores for ``d`` when the replicas' latent thresholds are log-normal
    with log-spread ``spread`` and ``target`` quantile ``value``, and each probe fails a replica
    afresh with probability ``1 - plateau`` (``xor_thresholds.plateau_failures``): the real
    ``search_width`` on them."""
    from .xor_thresholds import plateau_failures

    latent = calibration.replica_thresholds(value, spread, config.seeds, config.target, rng)
    return search_record(plateau_failures(latent, plateau, rng), d, config)


# --- cost (``attnsep reproduce --plan``): the work of one job ---------------------------------


def work(c: costs.Config) -> float:
    return sum(c["seeds"] * d * 3 * min(c["m_limit"], costs.ln(d) ** 2) for d in c["d_values"])


def peak(c: costs.Config) -> float:
    """The largest probe's one step (``OneStepConfig.peak_bytes``; probes run one after another).
    The probes are the doubling's widths up to ``(ln d)^2``, the law ``work`` counts (the
    plateau probe, twice the power of two past ``m*``, lies about there); the bisection's probes
    are smaller. Not monotone in ``m`` (a narrow step batches more replicas, a wide one streams
    ``V``), so every doubling width counts."""
    peaks = []
    for d in c["d_values"]:
        top, m = min(c["m_limit"], max(c["m_start"], costs.ln(d) ** 2)), c["m_start"]
        while m <= top:
            peaks.append(OneStepConfig(d=d, m=m, seeds=c["seeds"]).peak_bytes())
            m *= 2
    return max(peaks)


EXPERIMENT = register(
    Experiment(
        work=work,
        peak=peak,
        searches=True,
        name="polylog-width",
        claim="A7.2",
        title="Polylogarithmic trainable parameters",
        paper="The model achieves this with an embedding dimension m = O(polylog(d)). "
        "Consequently, the total number of trainable parameters is O(polylog(d)).",
        config_type=Config,
        run=run,
        figure=figure,
        verdict=verdict,
        split=split,
        version=3,  # 3: m* relative to the success plateau (search_width)
        hypotheses=hypotheses,
        criterion_version=3,
        tuned_on=(0, 1, 3),
        # Job-seconds (one thread; a probe costs about 1.5e-6 d m s at 64 seeds): quick ~5 s;
        # standard (64 seeds) ~120 s with m* <= 32 at every d, ~250 s with m* <= 64, ~900 s in
        # the worst case (m* near m_limit = 256 at d = 2^18); d = 2^20 would add 360 s to over
        # 3000 s. The standard preset runs 128 seeds: criterion 3's error rates simulated on the
        # exploratory seed-3 run missed the power goal at 64 (0.625) and met it at 128 (0.91,
        # false pass 0.00), before any confirmatory run.
        presets={
            "quick": {"d_values": [2**8, 2**10, 2**12, 2**14], "seeds": 32},
            "standard": {"d_values": [2**8, 2**10, 2**12, 2**14, 2**16, 2**18], "seeds": 128},
            "full": {
                "d_values": [2**6, 2**8, 2**10, 2**12, 2**14, 2**16, 2**18, 2**20],
                "seeds": 128,
                "device": "auto",
            },
        },
    )
)
