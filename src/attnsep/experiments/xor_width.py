"""A7.2 — polylog parameters: the smallest width ``m*(d)`` whose one-step success reaches a
target, and its growth law decided against a power-law rival (SPEC A7.2, Parts D and E).

For each ``d`` a threshold search (``search.smallest_passing``) finds ``m*``; every probe keeps
each replica's certified outcome (SPEC A6), so the bootstrap over replicas re-runs the search on
the stored probes (``stats.threshold_draws``). The paper's law ``m* = a (ln d)^p`` and
the rival ``m* = c d^alpha`` are fitted on the smaller half of the ``d``'s and judged on the
larger half; the criterion's error rates come from simulated runs (``hypotheses``, Part E).
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
"""The rival of the held-out test: a power law ``c d^alpha`` with ``alpha >= 0.25``."""
CONTRADICTING_ALPHA = 0.5
"""``not reproduced`` when the power exponent's bootstrap lower bound reaches this."""
GRID = "integer"
"""``m`` is an integer knob: held-out predictions meet the measured interval widened by ``± 1``
(SPEC Part E)."""


class Config(ExperimentConfig):
    """``m*(d)``: the smallest embedding width whose certified one-step success rate (SPEC A6,
    one population step) is ``>= target``, searched by doubling from ``m_start`` then bisection
    to a step of 1, up to ``m_limit``; the same ``seeds`` replicas (same ``seed``) at every probe,
    plus one guard probe at twice the largest (see ``search_width``).

    Criterion (SPEC A7.2, Part E; criterion version 2, written after the seed-0 standard data
    were seen, so its confirmatory run is on another master seed): each ``m*`` carries a
    bootstrap 95% interval over replicas (an ``m*`` beyond the probes is open upwards, ``inf``;
    no size is dropped). The polylog law ``a (ln d)^p`` and the power law ``c d^alpha`` with
    ``alpha >= 0.25`` are fitted on the smaller half of the ``d``'s and predict the larger half;
    a prediction counts as inside when its band (the law refitted to bootstrap draws of the
    smaller half, each ``m*`` moved within its integer cell: ``stats.held_out``) meets the
    measured interval widened by ``± 1`` (``m`` is an integer knob, so an interval such as
    ``[19, 19]`` has zero width while the law is continuous). **reproduced**: only the polylog
    law's predictions lie inside the widened
    intervals (and the power exponent's lower bound is below 0.5). **not reproduced**: the power
    exponent ``alpha``, fitted on all ``d``'s, has a bootstrap lower bound ``>= 0.5`` (and the
    held-out test does not favour polylog). **inconclusive**: otherwise — both or neither law
    predicts, fewer than 3 ``d``'s, or the two rules disagree; the reason names the smallest
    ``d`` at which the two laws fitted on all sizes differ by more than the measured relative
    interval width.

    The bootstrap lower bound of ``alpha`` is conservative: a resampled ``m*`` counts as its
    smallest value consistent with the probes (one above the largest failing probe below it) at a
    ``d`` above the mean ``ln d``, and as itself below it (both can only lower the slope); one
    beyond every probe below the mean ``ln d`` makes that draw's slope ``-inf``.

    Error rates (``hypotheses``): the paper's side is ``m* = a (ln d)^p`` fitted to the measured
    ``m*``, the rival ``c d^alpha`` (``alpha >= 0.25``) fitted to the same; per ``d``, latent
    per-replica thresholds (log-normal with the run's log-spread, ``target`` quantile on the
    law) go through ``search_width``, so the simulated probes sit on the real grid.

    The standard preset starts at ``d = 2^8``: at small ``d`` about one replica in five collapses
    under the anti-symmetric init (SPEC A6), so a 0.9 target may be unreachable at ``d = 2^6``.
    """

    d_values: list[InputLength] = Field(
        default=[2**8, 2**10, 2**12, 2**14], min_length=1, description="Input lengths d."
    )
    seeds: int = Field(default=32, ge=1, description="Replicas, the same at every probe.")
    target: float = Field(default=0.9, gt=0, le=1, description="Success rate m* must reach.")
    m_start: int = Field(default=2, ge=1, description="First width the doubling probes.")
    m_limit: int = Field(default=256, ge=1, description="Largest width probed.")
    device: Device = Field(default="cpu", description="cpu, cuda, or auto (cuda if present).")


CRITERION = (
    "m*(d) with a bootstrap 95% interval per d; the polylog law a(ln d)^p and the power law "
    f"c d^alpha (alpha >= {RIVAL_MIN_ALPHA}) fitted on the smaller half of the d's predict the "
    "larger half: reproduced when only the polylog prediction lies inside the measured intervals "
    "widened by ±1 (m is an integer knob), each prediction with its refit band; "
    f"not reproduced when alpha (all d's) has a bootstrap lower bound >= {CONTRADICTING_ALPHA}; "
    "inconclusive otherwise (or when the two rules disagree)"
)


def split(config: Config) -> list[Config]:
    return [config.model_copy(update={"d_values": [d]}) for d in config.d_values]


def search_width(
    evaluate: Callable[[int], Outcomes], target: float, start: int, limit: int
) -> tuple[int | None, list[Probe]]:
    """``search.smallest_passing``, plus a guard probe at twice the largest probe (at most
    ``limit``): the next size the search would try on a bootstrap resample that fails there, so
    the interval's upper end stays finite where the data allow (``m*`` itself is unchanged)."""
    m_star, probes = smallest_passing(evaluate, target, start, limit)
    guard = min(2 * probes[-1].size, limit)
    if m_star is not None and guard > probes[-1].size:
        probes.append(Probe(guard, tuple(bool(o) for o in np.asarray(evaluate(guard)))))
    return m_star, probes


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
    """The record of ``d``'s search (``search_width``) over the replicas ``evaluate`` judges."""
    m_star, probes = search_width(evaluate, config.target, config.m_start, config.m_limit)
    return {
        "d": d,
        "m_star": m_star,
        "params": None if m_star is None else 2 * m_star,
        "target": config.target,
        "seeds": config.seeds,
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
    """Every number of the verdict and the figure: ``m*`` per ``d`` with its bootstrap interval,
    both exponents with intervals, the held-out comparison and the separating ``d``."""
    rows = sorted(records, key=lambda r: r["d"])
    ds = np.array([float(r["d"]) for r in rows])
    m, lows, highs, draws, probed = [], [], [], [], []
    for r in rows:
        sizes, outcomes = probe_matrix(r["probes"])
        # each d is its own replica set: its own bootstrap stream, draws paired row-wise
        point, boot = stats.threshold_draws(sizes, outcomes, config.target, seed=r["d"])
        low, high = stats.interval(boot)
        m.append(point)
        lows.append(low)
        highs.append(math.inf if math.isinf(point) else high)
        draws.append(boot)
        probed.append(sizes)
    matrix = np.column_stack(draws)
    out: dict[str, Any] = {"d": ds.tolist(), "m": m, "low": lows, "high": highs}
    out["alpha"] = out["p"] = (math.nan, math.nan, math.nan)
    if len(ds) >= 2:
        for name, law in (("alpha", POWER), ("p", POLYLOG)):
            low, high = stats.interval(stats.exponent_draws(law, ds.tolist(), matrix))
            out[name] = (law.fit(ds.tolist(), m)[1], low, high)
        alpha, _, high = out["alpha"]
        out["alpha"] = (alpha, _alpha_floor(ds, matrix, probed), high)
    out["comparison"] = (
        stats.compare_laws(
            POLYLOG, POWER, ds.tolist(), m, lows, highs, RIVAL_MIN_ALPHA, GRID, matrix
        )
        if len(ds) >= 3
        else None
    )
    out["separating_d"] = separating_d(ds.tolist(), m, lows, highs)
    return out


def _law_curves(ax, a: dict[str, Any], x_of, grid: np.ndarray) -> None:
    """Both laws fitted on the smaller half, drawn over ``grid``, held-out predictions marked."""
    for side, style in (("paper", "-"), ("rival", "--")):
        fit = a["comparison"][side]
        if None in fit["params"]:
            continue
        law = POLYLOG if side == "paper" else POWER
        label = f"{law.formula} fitted on d <= {int(max(fit['fitted_on']))}"
        (line,) = ax.plot(x_of(grid), law.predict(fit["params"], grid), style, label=label)
        ax.plot(
            x_of(np.array(fit["predicted_at"])),
            fit["predicted"],
            "x",
            ms=9,
            color=line.get_color(),
            label=f"{law.name} prediction (held out)",
        )


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    """``m*(d)`` with bootstrap bars, both laws fitted on the smaller half and their held-out
    predictions: against ``d`` (log-log) and against ``ln d`` (log-log: polylog is a line)."""
    path = out / "polylog_width.png"
    a = analyse(records, config)
    ds, m, low = np.array(a["d"]), np.array(a["m"]), np.array(a["low"])
    found = np.isfinite(m)
    largest = np.array(
        [max(p["size"] for p in r["probes"]) for r in sorted(records, key=lambda r: r["d"])]
    )
    high = np.where(np.isinf(a["high"]), 2.0 * largest, a["high"])  # open: drawn to 2x
    grid = np.geomspace(ds.min(), ds.max(), 64)
    x_forms: tuple[Callable[[np.ndarray], np.ndarray], ...] = (np.asarray, np.log)
    with plotting.figure(path, ncols=2) as (_, axes):
        for ax, x_of, xlabel in zip(axes, x_forms, ("d", "ln d"), strict=True):
            ax.errorbar(
                x_of(ds[found]),
                m[found],
                yerr=plotting.bar_lengths(m[found], low[found], high[found]),
                fmt="o",
                color="k",
                capsize=3,
                label="measured m*, bootstrap 95% (open: to 2x the largest probe)",
            )
            if (~found).any():
                ax.plot(
                    x_of(ds[~found]), largest[~found], "^", color="k", label="m* > largest probe"
                )
            if a["comparison"] is not None:
                _law_curves(ax, a, x_of, grid)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log", base=2)
            ax.set_xlabel(xlabel)
            ax.set_ylabel(f"m* (success >= {config.target:g})")
        axes[1].set_xticks(np.log(ds), [f"{v:.1f}" for v in np.log(ds)], minor=False)
        axes[1].minorticks_off()
        axes[0].legend(fontsize=7)
        axes[0].set_title(f"m* = c d^alpha: alpha = {stats.fmt_interval(*a['alpha'])}", fontsize=9)
        axes[1].set_title(f"m* = a (ln d)^p: p = {stats.fmt_interval(*a['p'])}", fontsize=9)
    return [path]


def _reason(a: dict[str, Any], verdict: str) -> str:
    """One sentence: why this verdict, and for ``inconclusive`` which sizes would decide."""
    cmp, alpha_low = a["comparison"], a["alpha"][1]
    unreached = [int(d) for d, v in zip(a["d"], a["m"], strict=True) if math.isinf(v)]
    where = a["separating_d"]
    beyond = (
        f"; the two laws fitted on all sizes first differ by more than the measured interval "
        f"width at d = 2^{int(math.log2(where))}"
        if where
        else ""
    )
    if verdict == stats.REPRODUCED:
        return (
            "the polylog law fitted on the smaller d's predicts m* at the larger d's within their "
            f"intervals (± 1) and the power law with alpha >= {RIVAL_MIN_ALPHA} does not"
        )
    if verdict == stats.NOT_REPRODUCED:
        return f"m* grows like a power of d: alpha's lower bound {alpha_low:.3g} >= 0.5"
    if cmp is None:
        return f"the held-out test needs at least 3 values of d, got {len(a['d'])}{beyond}"
    if unreached:
        return (
            f"m* was not reached at d = {unreached} within the probes (raise m_limit or the "
            f"seeds there){beyond}"
        )
    if cmp["decided"] == "paper":
        return (
            f"the held-out test favours polylog but alpha's lower bound {alpha_low:.3g} >= 0.5: "
            f"the two rules disagree{beyond}"
        )
    said = {
        "both": "both laws predict the held-out d's within their intervals",
        "neither": "neither law predicts the held-out d's within their intervals",
        "rival": f"only the power law predicts the held-out d's but alpha's lower bound "
        f"{alpha_low:.3g} < 0.5",
    }[cmp["decided"]]
    return said + (beyond or "; no d up to 2^64 separates the fitted laws by that width")


def verdict(records: list[Record], config: Config) -> dict:
    a = analyse(records, config)
    cmp = a["comparison"]
    favours_paper = cmp is not None and cmp["decided"] == "paper"
    contradicts = a["alpha"][1] >= CONTRADICTING_ALPHA
    if favours_paper and not contradicts:
        outcome = stats.REPRODUCED
    elif contradicts and not favours_paper:
        outcome = stats.NOT_REPRODUCED
    else:
        outcome = stats.INCONCLUSIVE
    ms = list(zip(a["d"], a["m"], a["low"], a["high"], strict=True))
    estimates = [stats.estimate(f"m*(d={int(d)})", v, lo, hi) for d, v, lo, hi in ms]
    exponents = [
        stats.estimate("power exponent alpha (m* = c d^alpha)", *a["alpha"]),
        stats.estimate("polylog exponent p (m* = a (ln d)^p)", *a["p"]),
    ]
    measured = "; ".join(
        [f"m*(d={int(d)}) = {stats.fmt_interval(v, lo, hi)}" for d, v, lo, hi in ms]
        + [f"alpha = {stats.fmt_interval(*a['alpha'])}", f"p = {stats.fmt_interval(*a['p'])}"]
    )
    if cmp is not None:
        held = ", ".join(f"{int(d)}" for d in cmp["paper"]["predicted_at"])
        measured += (
            f"; held-out test (fit d <= {int(max(cmp['paper']['fitted_on']))}, predict d = {held}):"
            f" polylog {_predictions(cmp['paper'])}, power (alpha >= {RIVAL_MIN_ALPHA}) "
            f"{_predictions(cmp['rival'])} -> {cmp['decided']}"
        )
    return stats.claim(
        outcome,
        _reason(a, outcome),
        measured,
        CRITERION + f" (target {config.target:g}, {config.seeds} seeds per probe)",
        estimates + exponents,
        decided=None if cmp is None else cmp["decided"],
        separating_d=a["separating_d"],
    )


def _predictions(fit: dict[str, Any]) -> str:
    shown = ", ".join("n/a" if p is None else f"{p:.3g}" for p in fit["predicted"])
    return f"[{shown}] ({'inside' if fit['inside'] else 'outside'} the intervals ± 1)"


def hypotheses(records: list[Record], config: Config) -> calibration.Hypotheses:
    """The polylog law ``m* = a (ln d)^p`` and the rival ``c d^alpha`` (``alpha >= 0.25``),
    both fitted to the run's finite ``m*``, each simulating a run at ``config``'s sizes, seeds,
    target and search range (SPEC Part E): per ``d``, latent per-replica thresholds
    (``calibration.replica_thresholds``, log-normal with the run's log-spread, the ``target``
    quantile on the law) go through ``search_width``, guard probe included."""
    rows = sorted(records, key=lambda r: r["d"])
    ds = [float(r["d"]) for r in rows]
    m = [math.inf if r["m_star"] is None else float(r["m_star"]) for r in rows]
    paper = calibration.fit_or_flat(POLYLOG, ds, m)
    rival = calibration.fit_or_flat(POWER, ds, m, RIVAL_MIN_ALPHA)
    spread = calibration.log_spread([probe_matrix(r["probes"]) for r in rows])

    def simulate(law: stats.Law, params: tuple[float, ...]) -> calibration.Simulate:
        def draw(cfg: Config, rng: np.random.Generator) -> list[Record]:
            return [
                simulated_search(cfg, d, calibration.fitted_value(law, params, d), spread, rng)
                for d in cfg.d_values
            ]

        return draw

    return calibration.Hypotheses(
        paper=simulate(POLYLOG, paper),
        rival=simulate(POWER, rival),
        paper_law=f"m* = {math.exp(paper[0]):.3g} (ln d)^{paper[1]:.3g} (fitted to the measured "
        "m*)",
        rival_law=f"m* = {math.exp(rival[0]):.3g} d^{rival[1]:.3g} (alpha >= {RIVAL_MIN_ALPHA}, "
        "fitted to the same)",
        noise=f"per-replica latent thresholds, log-normal: log-spread {spread:.3g}, read from the "
        "run's probes",
    )


def simulated_search(
    config: Config, d: int, value: float, spread: float, rng: np.random.Generator
) -> Record:
    """The record ``run`` stores for ``d`` when the replicas' latent thresholds are log-normal
    with log-spread ``spread`` and ``target`` quantile ``value``: the real ``search_width`` on
    them (replica ``r`` passes every probe ``m >= t_r``)."""
    latent = calibration.replica_thresholds(value, spread, config.seeds, config.target, rng)
    return search_record(lambda m: latent <= m, d, config)


# --- cost (``attnsep reproduce --plan``): the work of one job ---------------------------------


def work(c: costs.Config) -> float:
    return sum(c["seeds"] * d * 3 * min(c["m_limit"], costs.ln(d) ** 2) for d in c["d_values"])


EXPERIMENT = register(
    Experiment(
        work=work,
        searches=True,
        name="polylog-width",
        claim="A7.2",
        title="Polylogarithmic trainable parameters",
        paper="The embedding width, hence the number of trainable parameters (2m), needs to grow "
        "only like polylog(d) for one-step learning, against Omega(d) for FFNNs.",
        config_type=Config,
        run=run,
        figure=figure,
        verdict=verdict,
        split=split,
        version=2,
        hypotheses=hypotheses,
        criterion_version=2,
        # Job-seconds (one thread; a probe costs about 1.5e-6 d m s at 64 seeds): quick ~5 s;
        # standard ~120 s with m* <= 32 at every d, ~250 s with m* <= 64, ~900 s in the worst
        # case (m* near m_limit = 256 at d = 2^18); d = 2^20 would add 360 s to over 3000 s.
        presets={
            "quick": {"d_values": [2**8, 2**10, 2**12, 2**14], "seeds": 32},
            "standard": {"d_values": [2**8, 2**10, 2**12, 2**14, 2**16, 2**18], "seeds": 64},
            "full": {
                "d_values": [2**6, 2**8, 2**10, 2**12, 2**14, 2**16, 2**18, 2**20],
                "seeds": 128,
                "device": "auto",
            },
        },
    )
)
