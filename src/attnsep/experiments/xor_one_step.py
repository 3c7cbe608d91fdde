"""A7.1 — one population gradient step suffices, at a fixed width and at a polylog schedule.

For every ``d`` two series are run (SPEC A7.1, Parts D and E): the width held at each of
``m_values`` and the width growing as ``m(d) = ceil(schedule_scale * (ln d)^2)``. Success is
the certified one-step success of SPEC A6; every rate carries its Wilson 95% interval, and the
failure rate ``1 - rate`` along the schedule carries a trend test in ``ln d`` (SPEC Part E).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import Field

from ..configs import AttentionName, Device, OneStepConfig, default, inherit
from ..core.validate import require
from ..metrics import calibration, stats
from . import costs, plotting
from .base import Experiment, ExperimentConfig, InputLength, Positive, Record, register

if TYPE_CHECKING:
    from ..train.one_step import OneStepResult

Series = Literal["fixed", "schedule"]
SERIES: tuple[Series, ...] = ("schedule", "fixed")
TARGET = 0.9
TREND_Z = 1.959963984540054
"""The failure rate rises when the one-sided trend test's z exceeds this (level 2.5%): the lower
end of the slope's 95% interval is then above 0."""
RIVAL_END = 0.85
"""The rival's success rate at the largest ``d`` (``hypotheses``): below 0.9, failure rising."""


class Config(ExperimentConfig):
    """One-step success vs ``d`` for a fixed width and a polylog width schedule (SPEC A7.1).

    Criterion (criterion version 2, SPEC Part E; written after the seed-0 standard data were
    seen, so its confirmatory run is on another master seed), on the schedule series:
    *not reproduced* (as Part D) when the rate falls with ``d`` with separated intervals (some
    ``d1 < d2`` with Wilson high(d2) < Wilson low(d1)) or when the Wilson upper bound at the
    largest ``d`` is below 0.9; *reproduced* when the Wilson lower bound at the largest ``d`` is
    >= 0.9, no such drop exists, and the failure rate ``1 - rate`` does not rise with ``d``;
    *inconclusive* otherwise, saying how many seeds at the largest ``d`` would decide at the
    observed rate, or that the failure rate rises.

    "Does not rise" (Part E's "``1 - rate`` does not rise with ``d``") is the one-sided
    Cochran-Armitage trend test of the failure counts in ``ln d`` over all the schedule's sizes:
    the failure rate's weighted least-squares slope in ``ln d`` (weights: seeds), over its
    standard error under a constant failure rate (the pooled one), is ``z``; the failure rate
    *rises* when ``z > 1.96`` (the slope's 95% interval lies above 0; a constant failure rate
    is taken for a rise 2.5% of the time). Fewer than two sizes cannot show a trend
    (inconclusive). The fixed-width series is reported beside it (one curve per ``m_values``
    entry), with its own drop test, as information.

    ``seeds_by_d`` replaces ``seeds`` at the listed ``d`` (both series), so the most expensive
    sizes can run fewer replicas rather than be dropped.
    """

    d_values: list[InputLength] = Field(
        default=[64, 256, 1024], min_length=1, description="Input lengths d; a job per d and m."
    )
    m_values: list[Positive] = Field(
        default=[default(OneStepConfig, "m")],
        min_length=1,
        description="Widths m of the fixed series, a curve each.",
    )
    attention: AttentionName = inherit(OneStepConfig, "attention")
    schedule_scale: float = Field(
        default=0.5, gt=0, le=1e6, description="c of the schedule m(d) = ceil(c (ln d)^2)."
    )
    series: list[Series] = Field(
        default=list(SERIES),
        min_length=1,
        description="fixed: each m_values width; schedule: m(d), the one judged.",
    )
    seeds: Positive = Field(default=32, description="Replicas per (d, m).")
    seeds_by_d: dict[InputLength, Positive] = Field(
        default_factory=dict, description="Replicas at the listed d instead of seeds."
    )
    eta_scale: float = inherit(OneStepConfig, "eta_scale")
    success_tol: float = inherit(OneStepConfig, "success_tol")
    device: Device = Field(default="cpu", description="cpu, cuda, or auto (cuda if present).")


def schedule_m(d: int, scale: float) -> int:
    """The polylog width schedule ``m(d) = ceil(scale * (ln d)^2)`` (at least 1)."""
    return max(1, math.ceil(scale * math.log(d) ** 2))


def widths(config: Config, series: Series, d: int) -> list[int]:
    return config.m_values if series == "fixed" else [schedule_m(d, config.schedule_scale)]


def split(config: Config) -> list[Config]:
    """One job per ``(d, width)``; the job's ``seeds`` is already the one for its ``d``."""
    return [
        config.model_copy(
            update={
                "d_values": [d],
                "series": [s],
                "m_values": [m] if s == "fixed" else config.m_values,
                "seeds": config.seeds_by_d.get(d, config.seeds),
                "seeds_by_d": {},
            }
        )
        for d in config.d_values
        for s in config.series
        for m in (config.m_values if s == "fixed" else [None])
    ]


def outcome_record(config: OneStepConfig, result: OneStepResult) -> Record:
    """The per-point record shared by the one-step experiments (SPEC A6 rates, Wilson 95%)."""
    successes, trials = int(result.success.sum()), config.seeds
    low, high = stats.wilson(successes, trials)
    return {
        "d": config.d,
        "m": config.m,
        "seeds": trials,
        "successes": successes,
        "rate": successes / trials,
        "low": low,
        "high": high,
        "specialization_rate": float(result.specialized.mean()),
        "collapses": int(result.collapsed.sum()),
        "collapse_rate": float(result.collapsed.mean()),
        "loss_after_median": stats.median(result.loss_after),
        "certified_error_median": stats.median(result.certified_error),
        "trainable_params": result.trainable_params,
    }


def run(config: Config) -> list[Record]:
    from ..train.one_step import run_one_step

    records = []
    for d in config.d_values:
        for series in config.series:
            for m in widths(config, series, d):
                step = OneStepConfig(
                    d=d,
                    m=m,
                    seeds=config.seeds_by_d.get(d, config.seeds),
                    seed=config.seed,
                    attention=config.attention,
                    eta_scale=config.eta_scale,
                    success_tol=config.success_tol,
                    device=config.device,
                )
                records.append({"series": series, **outcome_record(step, run_one_step(step))})
    return records


def _series(records: list[Record], series: Series, m: int | None = None) -> list[Record]:
    rows = (r for r in records if r.get("series") == series and m in (None, r["m"]))
    return sorted(rows, key=lambda r: r["d"])


def _fixed_widths(records: list[Record]) -> list[int]:
    return sorted({r["m"] for r in records if r.get("series") == "fixed"})


def interval_drop(rows: list[Record]) -> tuple[Record, Record] | None:
    """The most separated pair ``d1 < d2`` with Wilson high(d2) < Wilson low(d1), if any."""
    pairs = [(a, b) for i, a in enumerate(rows) for b in rows[i + 1 :] if b["high"] < a["low"]]
    return max(pairs, key=lambda p: p[0]["low"] - p[1]["high"], default=None)


def seeds_to_decide(rate: float, target: float, side: Literal["low", "high"]) -> int | None:
    """The fewest replicas at which, at the observed ``rate``, the Wilson 95% lower bound
    reaches ``target`` (``side="low"``) or the upper bound falls below it (``side="high"``);
    ``None`` when the rate itself is on the wrong side of ``target``."""
    if (side == "low" and rate <= target) or (side == "high" and rate >= target):
        return None

    def decided(n: int) -> bool:
        low, high = stats.wilson(rate * n, n)  # the Wilson formula at a fractional count
        return low >= target if side == "low" else high < target

    above = 1
    while not decided(above):
        above *= 2
    below = above // 2  # not decided (or 0)
    while above - below > 1:
        mid = (above + below) // 2
        above, below = (mid, below) if decided(mid) else (above, mid)
    return above


def _points(rows: list[Record]) -> str:
    return "; ".join(
        f"d={r['d']} (m={r['m']}): {r['successes']}/{r['seeds']} = "
        f"{stats.fmt_interval(r['rate'], r['low'], r['high'])}, collapse {r['collapse_rate']:.2f}"
        for r in rows
    )


def _drop_text(drop: tuple[Record, Record] | None) -> str:
    if drop is None:
        return "no interval-separated drop"
    a, b = drop
    return f"drop from d={a['d']} (low {a['low']:.3f}) to d={b['d']} (high {b['high']:.3f})"


def failure_trend(rows: list[Record]) -> dict[str, Any]:
    """The one-sided Cochran-Armitage trend test of the failure counts in ``ln d`` (SPEC Part E,
    the config's criterion): the failure rate's slope per unit of ``ln d`` (least squares
    weighted by the seeds), its standard error under the pooled failure rate, ``z`` and the
    slope's 95% interval. ``rises`` when ``z > TREND_Z``. Needs two sizes."""
    x = np.log([r["d"] for r in rows])
    n = np.array([r["seeds"] for r in rows], dtype=float)
    failures = n - np.array([r["successes"] for r in rows], dtype=float)
    pooled = failures.sum() / n.sum()
    centred = x - (n * x).sum() / n.sum()
    sxx = float((n * centred**2).sum())
    slope = float((centred * failures).sum()) / sxx if sxx > 0 else 0.0
    se = math.sqrt(pooled * (1 - pooled) / sxx) if sxx > 0 else 0.0
    z = slope / se if se > 0 else 0.0
    return {
        "slope": slope,
        "se": se,
        "z": z,
        "low": slope - TREND_Z * se,
        "high": slope + TREND_Z * se,
        "rises": z > TREND_Z,
    }


def _trend_text(trend: dict[str, Any]) -> str:
    return (
        f"failure rate 1 - rate vs ln d: slope {trend['slope']:.4f} "
        f"[{trend['low']:.4f}, {trend['high']:.4f}] per unit of ln d, trend z = {trend['z']:.2f}"
    )


CRITERION = (
    "criterion version 2 (SPEC Part E), on the schedule series m(d) = ceil(c (ln d)^2): "
    "reproduced when the Wilson 95% lower bound of the one-step success rate at the largest d is "
    ">= 0.9, no d1 < d2 has Wilson high(d2) < Wilson low(d1), and the failure rate 1 - rate does "
    "not rise with d (one-sided Cochran-Armitage trend test in ln d over the schedule's sizes: "
    "rises when z > 1.96, i.e. the slope's 95% interval is above 0); not reproduced when such a "
    "drop exists or the upper bound at the largest d is < 0.9; inconclusive otherwise (fixed-m "
    "series reported as information)"
)


def verdict(records: list[Record], config: Config) -> dict:
    """SPEC A7.1 and Part D: the schedule series decides; the fixed width is information."""
    schedule = _series(records, "schedule")
    fixed = {m: _series(records, "fixed", m) for m in _fixed_widths(records)}
    labelled = [("schedule", schedule)] + [(f"fixed m={m}", rows) for m, rows in fixed.items()]
    estimates = [
        stats.rate_estimate(f"{name} {what}, d={r['d']} (m={r['m']})", r[count], r["seeds"])
        for what, count in (("success", "successes"), ("collapse", "collapses"))
        for name, rows in labelled
        for r in rows
    ]
    estimates += [
        stats.estimate(f"schedule failure 1 - rate, d={r['d']} (m={r['m']})", *_failure(r))
        for r in schedule
    ]
    fixed_drops = {m: _drop_text(interval_drop(rows)) for m, rows in fixed.items()}
    trend = failure_trend(schedule) if len(schedule) >= 2 else None
    parts = []
    if schedule:
        parts.append(f"schedule m = ceil({config.schedule_scale:g} (ln d)^2): " + _points(schedule))
    if trend is not None:
        parts[-1] += f" ({_trend_text(trend)})"
        estimates.append(
            stats.estimate(
                "schedule failure-rate slope per unit of ln d (95%, under a constant rate)",
                trend["slope"],
                trend["low"],
                trend["high"],
            )
        )
    parts += [f"fixed m = {m}: {_points(rows)} ({fixed_drops[m]})" for m, rows in fixed.items()]
    measured = " | ".join(parts)
    extra = {"fixed_drop": fixed_drops, "failure_trend": trend}
    verdict_, reason, summary = _decide(schedule, trend)
    return stats.claim(verdict_, reason, measured, CRITERION, estimates, summary=summary, **extra)


def _failure(r: Record) -> tuple[float, float, float]:
    """The failure rate ``1 - rate`` with its Wilson interval."""
    return 1 - r["rate"], 1 - r["high"], 1 - r["low"]


def _decide(schedule: list[Record], trend: dict[str, Any] | None) -> tuple[str, str, str]:
    """The verdict, its reason and its summary from the schedule series (the config's
    criterion)."""
    if not schedule:
        return (
            stats.INCONCLUSIVE,
            "the schedule series was not run, and it is the one that decides",
            "the schedule series, the one that decides, was not run",
        )
    drop, last = interval_drop(schedule), schedule[-1]
    where = f"at the largest d={last['d']} (m={last['m']})"
    at = f"at d={last['d']} (m={last['m']})"
    if drop is not None:
        a, b = drop
        return (
            stats.NOT_REPRODUCED,
            f"the schedule series falls with d: {_drop_text(drop)}",
            f"falls: d={a['d']} low {a['low']:.3f} > d={b['d']} high {b['high']:.3f}",
        )
    if last["high"] < TARGET:
        return (
            stats.NOT_REPRODUCED,
            f"{where} the Wilson upper bound {last['high']:.3f} is below {TARGET}",
            f"upper bound {last['high']:.3f} < {TARGET} {at}",
        )
    if last["low"] < TARGET:
        return stats.INCONCLUSIVE, _undecided(last, where), _undecided_summary(last, at)
    bound = f"{where} the Wilson lower bound {last['low']:.3f} is >= {TARGET} with no drop"
    holds = f"lower bound {last['low']:.3f} >= {TARGET}"
    if trend is None:
        return (
            stats.INCONCLUSIVE,
            f"{bound}, but one size cannot show how 1 - rate moves with d",
            f"{holds}, but one size shows no trend in d",
        )
    if trend["rises"]:
        return (
            stats.INCONCLUSIVE,
            f"{bound}, but the failure rate rises with ln d (slope {trend['slope']:.4f}, "
            f"95% interval above 0, z = {trend['z']:.2f})",
            f"failure rate rises with ln d (z = {trend['z']:.2f} > {TREND_Z:.2f})",
        )
    return (
        stats.REPRODUCED,
        f"{bound}, and the failure rate shows no rise with ln d (trend z = {trend['z']:.2f} "
        f"<= {TREND_Z:.2f})",
        f"{holds} {at}, no rise",
    )


def _undecided(last: Record, where: str) -> str:
    rate, seeds = last["rate"], last["seeds"]
    up = seeds_to_decide(rate, TARGET, "low")
    if up is not None:
        return (
            f"{where} the rate {rate:.3f} has lower bound {last['low']:.3f} < {TARGET}: about "
            f"{up} seeds (now {seeds}) would lift it to {TARGET} at this rate"
        )
    down = seeds_to_decide(rate, TARGET, "high")
    tail = "" if down is None else f"; about {down} seeds would put the upper bound below it"
    return (
        f"{where} the rate {rate:.3f} is not above {TARGET}, so no number of seeds lifts the lower "
        f"bound to {TARGET} at this rate (now {seeds} seeds{tail})"
    )


def _undecided_summary(last: Record, at: str) -> str:
    """``_undecided`` in short: the bound that misses, or the rate that cannot lift it."""
    if seeds_to_decide(last["rate"], TARGET, "low") is not None:
        return f"lower bound {last['low']:.3f} < {TARGET} {at}"
    return f"rate {last['rate']:.3f} not above {TARGET} {at}"


# --- the criterion's error rates (SPEC Part E) ------------------------------------------------


def interpolated(ds: Sequence[int], rates: Sequence[float]) -> Callable[[int], float]:
    """Rates as measured at ``ds``: linear in ``ln d`` between them, flat beyond them."""
    order = np.argsort(ds)
    x = np.log(np.asarray(ds, dtype=float))[order]
    y = np.asarray(rates, dtype=float)[order]
    return lambda d: float(np.interp(math.log(d), x, y))


def falling_line(start: float, end: float, ds: Sequence[int]) -> Callable[[int], float]:
    """A rate linear in ``ln d``: ``start`` at the smallest of ``ds``, ``end`` at the largest."""
    lo, hi = math.log(min(ds)), math.log(max(ds))
    if hi == lo:
        return lambda d: end
    return lambda d: start + (end - start) * (math.log(d) - lo) / (hi - lo)


def simulated_schedule(
    config: Config, rng: np.random.Generator, rate_at: Callable[[int], float], collapse_share: float
) -> list[Record]:
    """One simulated run of the schedule series at ``config``'s sizes and seeds: binomial
    successes at ``rate_at(d)``, collapses a binomial share of the failures."""
    records = []
    for d in config.d_values:
        seeds = config.seeds_by_d.get(d, config.seeds)
        successes = int(rng.binomial(seeds, min(1.0, max(0.0, rate_at(d)))))
        collapses = int(rng.binomial(seeds - successes, collapse_share))
        low, high = stats.wilson(successes, seeds)
        records.append(
            {
                "series": "schedule",
                "d": d,
                "m": schedule_m(d, config.schedule_scale),
                "seeds": seeds,
                "successes": successes,
                "rate": successes / seeds,
                "low": low,
                "high": high,
                "collapses": collapses,
                "collapse_rate": collapses / seeds,
            }
        )
    return records


def hypotheses(records: list[Record], config: Config) -> calibration.Hypotheses:
    """SPEC Part E: the paper's side is the schedule's success rates as measured (linear in
    ``ln d`` between the measured sizes, flat beyond); the rival is a failure rate rising with
    ``d``: the success rate falls linearly in ``ln d`` from the highest measured rate (at least
    0.9) at the smallest ``d`` to ``RIVAL_END`` = 0.85 at the largest. Both draw binomial
    successes with the config's seeds at each ``d``. (The smallest ``d``'s own rate is not the
    rival's start: at a small width it can lie below 0.9 already, and a line falling from it
    would not be an alternative to a rate that rises.)"""
    rows = _series(records, "schedule")
    source = "schedule"
    if not rows and _fixed_widths(records):
        m = _fixed_widths(records)[0]
        rows, source = _series(records, "fixed", m), f"fixed m = {m} (no schedule series run)"
    require(bool(rows), "the one-step records hold no series to fit the hypotheses to")
    ds, rates = [r["d"] for r in rows], [r["rate"] for r in rows]
    failures = sum(r["seeds"] - r["successes"] for r in rows)
    share = sum(r["collapses"] for r in rows) / failures if failures else 0.0
    start = max(max(rates), TARGET)
    listed = ", ".join(f"d={d}: {p:.3f}" for d, p in zip(ds, rates, strict=True))

    def paper(cfg: Config, rng: np.random.Generator) -> list[Record]:
        return simulated_schedule(cfg, rng, interpolated(ds, rates), share)

    def rival(cfg: Config, rng: np.random.Generator) -> list[Record]:
        return simulated_schedule(cfg, rng, falling_line(start, RIVAL_END, cfg.d_values), share)

    return calibration.Hypotheses(
        paper=paper,
        rival=rival,
        paper_law=f"success rate as measured on the {source} ({listed}; linear in ln d between "
        "the sizes, flat beyond)",
        rival_law=f"failure rate rising with d: success falls linearly in ln d from {start:.3f} "
        f"at the smallest d to {RIVAL_END} at the largest d",
        noise="binomial successes with the config's seeds at each d (collapses a binomial "
        f"share {share:.2f} of the failures, as measured)",
    )


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    path = out / "one_step_success.png"
    with plotting.figure(path) as (_, (ax,)):
        curves = [(f"m = ceil({config.schedule_scale:g} (ln d)^2)", _series(records, "schedule"))]
        curves += [(f"m = {m} fixed", _series(records, "fixed", m)) for m in _fixed_widths(records)]
        for label, rows in curves:
            if rows:
                plotting.rate_band(ax, [r["d"] for r in rows], rows, label=label)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("input length d")
        ax.set_ylabel("certified success rate after one step")
        ax.set_ylim(-0.02, 1.02)
        ax.axhline(TARGET, color="grey", lw=0.8, ls="--")
        ax.legend()
        ax.set_title(f"One population gradient step ({config.attention}, 95% Wilson bands)")
    return [path]


# --- cost (``attnsep reproduce --plan``): the work of one job ---------------------------------


def _sizes(c: costs.Config) -> list[tuple[int, int, int]]:
    """``(d, m, seeds)`` of each step of a job (its stored config; JSON keys are text)."""
    seeds: dict[int, int] = {int(d): int(n) for d, n in c.get("seeds_by_d", {}).items()}
    return [
        (int(d), int(m), seeds.get(d, int(c["seeds"])))
        for d in c["d_values"]
        for s in c["series"]
        for m in (c["m_values"] if s == "fixed" else [schedule_m(d, c["schedule_scale"])])
    ]


def work(c: costs.Config) -> float:
    return sum(seeds * d * m for d, m, seeds in _sizes(c))


def peak(c: costs.Config) -> float:
    """The largest step's memory (``OneStepConfig.peak_bytes``)."""
    from ..configs import OneStepConfig

    return max(OneStepConfig(d=d, m=m, seeds=n).peak_bytes() for d, m, n in _sizes(c))


EXPERIMENT = register(
    Experiment(
        work=work,
        peak=peak,
        name="one-step",
        claim="A7.1",
        title="One gradient step suffices",
        paper="A two-head softmax-attention layer learns sparse XOR in a single population "
        "gradient step with high probability, with m = O(polylog d) (Theorem 2).",
        config_type=Config,
        run=run,
        figure=figure,
        verdict=verdict,
        split=split,
        version=2,
        hypotheses=hypotheses,
        criterion_version=2,
        presets={
            "quick": {"d_values": [64, 256, 1024], "seeds": 32},
            "standard": {
                "d_values": [2**6, 2**8, 2**10, 2**12, 2**14, 2**17, 2**20],
                "seeds": 128,
                "seeds_by_d": {2**20: 64},  # 64 x ~5 s: the one-step at d = 2^20, m = 97
            },
            "full": {
                "d_values": [2**6, 2**8, 2**10, 2**12, 2**14, 2**16, 2**18, 2**20],
                "seeds": 512,
                "device": "auto",
            },
        },
    )
)
