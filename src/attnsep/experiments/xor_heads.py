"""A7.4 — the heads specialize after one step: weight on the target bits, initialization, and
the step's alignment with the support positions (SPEC A7.4, Parts D and E).

Two series of one population step each: the width held at ``m`` (``d_values``, Part D's
specialization) and the width on A7.1's polylog schedule ``m(d) = ceil(c (ln d)^2)``
(``schedule_d_values``, Part E's alignment). The alignment measure is ``metrics.alignment``'s.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import numpy as np
from pydantic import Field, model_validator

from ..configs import INITS, Device, Init, OneStepConfig, inherit
from ..core.validate import require
from ..metrics import calibration, stats
from . import costs, xor_one_step
from . import xor_heads_figures as figures
from .base import Experiment, ExperimentConfig, Positive, Record, register
from .xor_one_step import (
    Series,
    falling_line,
    interpolated,
    outcome_record,
    schedule_m,
    seeds_to_decide,
)

if TYPE_CHECKING:
    import torch

    from ..models.query_heads import QueryHeads
    from ..train.one_step import OneStepResult

MASS = 0.9
"""A head is on its bit when its weight there is at least this (the paper's "nearly 1.0")."""
RATE, LOWER = 0.9, 0.8
SMALLEST_D = 256
ALIGNED_FROM_D = 2**10
RATIO_BAR = 1.2
"""The alignment ratio's lower bound must reach this at every schedule ``d`` from
``ALIGNED_FROM_D`` (criterion (c)): "significantly larger" than ambient, not merely larger."""
MAX_MAP_D = 1024
"""Heat maps are stored only up to this ``d``: wider rows are not readable as pixels."""
CHUNK_ELEMENTS = 1 << 22
"""Replicas of ``V`` regenerated at once for the alignment: ``count x d x m`` under this."""
RIVAL_RATE = LOWER
"""The rival's on-target rate at the largest fixed-width ``d`` (``hypotheses``)."""
PAPER_RATIO, RIVAL_RATIO = 1.3, RATIO_BAR
"""The least median alignment ratio of the paper's side, and the rival's median at the largest
schedule ``d`` (``hypotheses``)."""


class Config(ExperimentConfig):
    """Per-head weight on its support bit after one population step, for the anti-symmetric and
    the independent initialization, and the step's alignment with the support (SPEC A7.4).

    Outcome per replica: both heads put >= 0.9 of their weight on distinct support bits
    (specialized, and the smaller of the two heads' weights on their assigned bits >= 0.9).

    Alignment (SPEC Part E, A7.4; ``metrics.alignment``), per replica, from the step actually
    taken, ``Delta s_h = V (theta_h' - theta_h) = -eta V g_h`` (``E x H x d``):

    * *each head's own bit* is fixed before the step: the one-to-one assignment of the heads to
      ``{i*, j*}`` with the largest sum of their initial scores (equivalently the largest
      product of their initial weights). Under the paper's anti-symmetric init ``s_2 = -s_1``,
      so it is the support bit each head's initial score favours: the asymmetry the paper says
      the step amplifies. It does not look at the outcome (the bit a head ends on would select
      the larger of two changes and bias the ratio up); how often the heads end on their own
      bits is reported beside it (``own_kept``);
    * the *signed* change ``Delta s_h`` at the own bit (negative when the step lowers it);
    * the *largest ambient change* ``max_{a not in S} |Delta s_h,a|``: the paper compares the
      size of the gradient's alignment with relevant and with ambient positions, and it bounds
      the ambient ones in absolute value (near-orthogonal embeddings); it is also the stricter
      choice (a large negative change at an ambient position counts against the ratio although
      it does not compete for the weight);
    * the replica's ratio is the smaller of its two heads' ``own change / ambient`` (a replica
      is aligned when both heads are; one number per replica keeps the replicas independent),
      summarized by its median with the distribution-free 95% interval of ``median_ranks``
      (binomial order statistics). ``eta`` cancels in the ratio.

    Criterion (criterion version 4, SPEC Parts E and F; written after master seeds 0, 1 and 3
    were seen, so their runs are exploratory). The paper: the anti-symmetric init "ensures
    maximal initial separation, encouraging the two heads to specialize", and the step amplifies
    it, "ensuring that one head attends to i* and the other to j*". "Ensures" asks that, under
    the anti-symmetric init, specialization be the rule at every size, and, since the init is
    credited for it, that the anti-symmetric init do no worse than the independent one; the
    paper says nothing of how often the independent init specializes, so its rate has no bound.
    Three conditions, (a) and (b) on the fixed-width series at every ``d >= 256``:

    (a) *specialization*, anti-symmetric init: the on-target rate is >= 0.9 with
        Wilson lower bound >= 0.8;
    (b) *the init comparison*: the difference of on-target rates, anti-symmetric
        minus independent, has a 95% interval (Newcombe's hybrid score interval, from the two
        Wilson intervals) whose upper end is >= 0, i.e. the anti-symmetric rate is not
        interval-separated below the independent one; both rates, their intervals and the
        difference are reported;
    (c) *alignment*, anti-symmetric init, on the schedule series: the median ratio's 95% lower
        bound (``ratio_median``) is >= 1.2 at every ``d >= 2^10``.

    *Reproduced* when (a), (b) and (c) hold; *not reproduced* when at the largest fixed-width
    ``d`` the anti-symmetric rate's Wilson upper bound is < 0.9, or at the largest schedule ``d``
    the median ratio's upper bound is <= 1.2; *inconclusive* otherwise (the reason says which
    condition, at which sizes, and how many seeds would decide; an anti-symmetric rate
    interval-separated below the independent one is named there). The schedule's on-target
    rates and the fixed width's ratios are reported, not judged.
    """

    d_values: list[Annotated[int, Field(ge=3)]] = Field(default=[64, 256])
    m: int = inherit(OneStepConfig, "m")
    schedule_d_values: list[Annotated[int, Field(ge=3)]] = Field(default=[256, 1024])
    schedule_scale: float = inherit(xor_one_step.Config, "schedule_scale")
    inits: list[Init] = Field(default=["antisymmetric", "independent"], min_length=1)
    seeds: Positive = 64
    seeds_schedule: Positive = 64
    shown: Positive = 4
    eta_scale: float = inherit(OneStepConfig, "eta_scale")
    device: Device = "cpu"

    @model_validator(mode="after")
    def _some_size(self) -> Config:
        require(
            bool(self.d_values or self.schedule_d_values),
            "d_values and schedule_d_values may not both be empty",
        )
        return self


def points(config: Config) -> list[tuple[Series, int, int, int]]:
    """``(series, d, m, seeds)`` of every one-step run, before the inits."""
    fixed: list[tuple[Series, int, int, int]] = [
        ("fixed", d, config.m, config.seeds) for d in config.d_values
    ]
    return fixed + [
        ("schedule", d, schedule_m(d, config.schedule_scale), config.seeds_schedule)
        for d in config.schedule_d_values
    ]


def split(config: Config) -> list[Config]:
    """One job per series, ``d`` and init."""
    return [
        config.model_copy(
            update={
                "d_values": [d] if series == "fixed" else [],
                "schedule_d_values": [d] if series == "schedule" else [],
                "inits": [init],
            }
        )
        for series, d, _, _ in points(config)
        for init in config.inits
    ]


def initial_state(
    step: OneStepConfig, first: int, count: int
) -> tuple[QueryHeads, torch.Tensor, torch.Tensor]:
    """Model, ``theta`` and supports of replicas ``first .. first + count - 1``: the same draws
    as ``run_one_step`` (every replica has its own streams)."""
    from ..core.device import resolve_device
    from ..embeddings import sphere_embeddings
    from ..models.query_heads import QueryHeads, initial_queries
    from ..tasks.parity import SparseParity

    device = resolve_device(step.device)
    V = sphere_embeddings(step.seed, count, step.d, step.m, first_replica=first, device=device)
    support = SparseParity.of(step).supports(step.seed, count, first_replica=first)
    theta = initial_queries(step.seed, count, step.k, step.m, step.init, first)
    return QueryHeads(V), theta.to(V.device), support.to(V.device)


def alignment(step: OneStepConfig, result: OneStepResult) -> tuple[np.ndarray, np.ndarray]:
    """Per replica (SPEC A7.4, the config's docstring): the step's signed alignment ratio, the
    smaller of the two heads', and whether every head's top position after the step is its own
    bit. ``V`` is regenerated in chunks of replicas (``CHUNK_ELEMENTS``)."""
    import torch

    from ..metrics.alignment import own_bits, signed_ratio

    batch = max(1, CHUNK_ELEMENTS // (step.d * step.m))
    ratios, kept = [], []
    for first in range(0, step.seeds, batch):
        count = min(batch, step.seeds - first)
        model, theta, support = initial_state(step, first, count)
        after = torch.from_numpy(result.theta_after[first : first + count]).to(theta)
        before = model.scores(theta)
        change = model.scores(after - theta)
        own = own_bits(before, support)
        ratios.append(signed_ratio(change, support, own).min(dim=1).values.cpu().numpy())
        kept.append(((before + change).argmax(dim=2) == own).all(dim=1).cpu().numpy())
    ratio = np.concatenate(ratios)
    require(bool(np.isfinite(ratio).all()), f"an alignment ratio is not finite (d={step.d})")
    return ratio, np.concatenate(kept)


def run(config: Config) -> list[Record]:
    from ..train.one_step import run_one_step

    records = []
    for series, d, m, seeds in points(config):
        for init in config.inits:
            step = OneStepConfig(
                d=d,
                m=m,
                seeds=seeds,
                seed=config.seed,
                init=init,
                eta_scale=config.eta_scale,
                device=config.device,
            )
            result = run_one_step(step)
            on_target = result.specialized & (result.mass_after.min(axis=1) >= MASS)
            hits = int(on_target.sum())
            low, high = stats.wilson(hits, step.seeds)
            ratio, kept = alignment(step, result)
            records.append(
                {
                    "kind": "summary",
                    "series": series,
                    "init": init,
                    **outcome_record(step, result),
                    "on_target": hits,
                    "on_target_rate": hits / step.seeds,
                    "on_target_low": low,
                    "on_target_high": high,
                    "mass": result.mass_after.tolist(),
                    "ratio": ratio.tolist(),
                    "own_kept": int(kept.sum()),
                }
            )
            if series == "fixed" and d <= MAX_MAP_D:
                records += _maps(step, result, min(config.shown, step.seeds))
    return records


def _maps(step: OneStepConfig, result: OneStepResult, shown: int) -> list[Record]:
    import torch

    model, theta, _ = initial_state(step, 0, shown)
    before = model.weights(theta).cpu().numpy()
    after = model.weights(torch.from_numpy(result.theta_after[:shown]).to(theta)).cpu().numpy()
    return [
        {
            "kind": "map",
            "d": step.d,
            "init": step.init,
            "replica": e,
            "support": result.support[e].tolist(),
            "before": before[e].tolist(),
            "after": after[e].tolist(),
            "hit": bool(result.specialized[e] and result.mass_after[e].min() >= MASS),
        }
        for e in range(shown)
    ]


def _summaries(records: list[Record], init: str, series: Series) -> list[Record]:
    rows = (r for r in records if r["kind"] == "summary" and r["init"] == init)
    return sorted((r for r in rows if r["series"] == series), key=lambda r: r["d"])


@lru_cache(maxsize=64)
def median_ranks(n: int, level: float = stats.LEVEL) -> tuple[int, int]:
    """0-based ranks ``(lo, hi)`` of the sorted values that bound the median of ``n`` replicas
    with probability at least ``level`` (binomial order statistics, distribution-free); the
    smallest and largest values when ``n`` is too small for ``level``."""
    k = np.arange(n + 1)
    log_pmf = np.array(
        [math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1) for j in k]
    )
    cdf = np.cumsum(np.exp(log_pmf - n * math.log(2)))
    below = int(np.searchsorted(cdf, (1 - level) / 2 + 1e-15, side="right"))
    lo = max(below, 1) - 1
    return lo, n - 1 - lo


def ratio_median(r: Record) -> tuple[float, float, float]:
    """Median alignment ratio over replicas and its distribution-free 95% interval (the order
    statistics of ``median_ranks``: one sort, where a bootstrap of the median costs a partition
    per resample; at 1024 replicas the two intervals agree to an order statistic or two)."""
    ratios = np.sort(np.asarray(r["ratio"], dtype=float))
    lo, hi = median_ranks(len(ratios))
    return float(np.median(ratios)), float(ratios[lo]), float(ratios[hi])


def _where(r: Record) -> str:
    return f"d={r['d']} ({'schedule ' if r['series'] == 'schedule' else ''}m={r['m']})"


CRITERION = (
    "criterion version 4 (SPEC Parts E-F), fixed-width series at every d >= "
    f"{SMALLEST_D}: (a) under the anti-symmetric init both heads put >= {MASS} on distinct "
    f"support bits in >= {RATE} of replicas with Wilson lower bound >= {LOWER}; (b) the "
    "anti-symmetric rate is not interval-separated below the independent init's (the "
    "difference anti-symmetric - independent has a Newcombe 95% upper end >= 0; the paper's "
    '"ensures" credits the anti-symmetric init, and bounds no independent rate); (c) on the '
    "schedule series m(d) = ceil(c (ln d)^2), per replica the smaller over the two heads of the "
    "signed score change V(theta' - theta) at the head's own support bit (the one-to-one "
    "assignment its initial scores favour) over the largest |change| at a non-support position, "
    f"the median's distribution-free 95% lower bound >= {RATIO_BAR} at every d >= "
    f"{ALIGNED_FROM_D}; reproduced when (a), (b) and (c) hold; not reproduced when at the "
    f"largest fixed-width d the anti-symmetric rate's Wilson upper bound is < {RATE}, or at the "
    f"largest schedule d the median ratio's upper bound is <= {RATIO_BAR}; inconclusive otherwise"
)


def verdict(records: list[Record], config: Config) -> dict:
    """SPEC A7.4, Parts D-F: (a) and (c) on the anti-symmetric init, (b) the two inits compared
    (the config's docstring); the rest are estimates."""
    estimates, parts = [], []
    for series in ("fixed", "schedule"):
        for init in INITS:
            rows = _summaries(records, init, series)
            for r in rows:
                name = f"{init}, {_where(r)}"
                ratio = stats.estimate(f"{name}: alignment ratio median", *ratio_median(r))
                estimates += [
                    stats.rate_estimate(f"{name}: on target", r["on_target"], r["seeds"]),
                    stats.rate_estimate(f"{name}: collapse", r["collapses"], r["seeds"]),
                    ratio,
                ]
            if rows:
                parts.append(f"{series} {init}: " + "; ".join(_point(r) for r in rows))
    pairs = _paired(records)
    estimates += [
        stats.estimate(f"{_where(a)}: on-target rate, anti-symmetric - independent", *diff)
        for a, _, diff in pairs
    ]
    if pairs:
        parts.append("on-target difference anti-symmetric - independent: " + _differences(pairs))
    measured = f"fixed m={config.m}, schedule m = ceil({config.schedule_scale:g} (ln d)^2) | "
    measured += " | ".join(parts)
    outcomes = [_specialization(records), _comparison(records), _alignment(records)]
    verdicts = [v for v, _, _ in outcomes]
    if stats.NOT_REPRODUCED in verdicts:
        verdict_ = stats.NOT_REPRODUCED
        deciding = [(why, short) for v, why, short in outcomes if v == stats.NOT_REPRODUCED]
    elif all(v == stats.REPRODUCED for v in verdicts):
        verdict_ = stats.REPRODUCED
        deciding = [(why, short) for _, why, short in outcomes]
    else:
        verdict_ = stats.INCONCLUSIVE
        deciding = [(why, short) for v, why, short in outcomes if v != stats.REPRODUCED]
    reason = "; ".join(why for why, _ in deciding)
    # the first condition that decides; when all three hold, (a) and (c) carry the numbers
    summary = (
        f"{outcomes[0][2]}; {outcomes[2][2]}" if verdict_ == stats.REPRODUCED else deciding[0][1]
    )
    return stats.claim(verdict_, reason, measured, CRITERION, estimates, summary=summary)


def rate_difference(a: Record, b: Record) -> tuple[float, float, float]:
    """``a``'s on-target rate minus ``b``'s with Newcombe's hybrid score 95% interval, built
    from the two Wilson intervals (independent replicas)."""
    keys = ("on_target_rate", "on_target_low", "on_target_high")
    return stats.rate_difference(tuple(a[k] for k in keys), tuple(b[k] for k in keys))


Pair = tuple[Record, Record, tuple[float, float, float]]
"""``(anti-symmetric, independent, their rate_difference)`` at one fixed-width ``d``."""


def _paired(records: list[Record]) -> list[Pair]:
    """The fixed-width sizes run with both inits."""
    indep = {r["d"]: r for r in _summaries(records, "independent", "fixed")}
    anti = [r for r in _summaries(records, "antisymmetric", "fixed") if r["d"] in indep]
    return [(a, indep[a["d"]], rate_difference(a, indep[a["d"]])) for a in anti]


def _differences(pairs: list[Pair]) -> str:
    return ", ".join(f"d={a['d']}: {stats.fmt_interval(*diff)}" for a, _, diff in pairs)


def _point(r: Record) -> str:
    rate = stats.fmt_interval(r["on_target_rate"], r["on_target_low"], r["on_target_high"])
    return (
        f"{_where(r)}: on target {r['on_target']}/{r['seeds']} = {rate}, collapse "
        f"{r['collapse_rate']:.2f}, ratio median {stats.fmt_interval(*ratio_median(r))}, "
        f"heads end on their own bits {r['own_kept']}/{r['seeds']}"
    )


def _specialization(records: list[Record]) -> tuple[str, str, str]:
    """Condition (a), Part D's specialization test, on the fixed-width anti-symmetric series:
    the outcome, its reason and its summary."""
    rows = [r for r in _summaries(records, "antisymmetric", "fixed") if r["d"] >= SMALLEST_D]
    if not rows:
        return (
            stats.INCONCLUSIVE,
            f"specialization: no fixed-width d >= {SMALLEST_D} was run with the anti-symmetric "
            "init; run d = 256 .. 4096",
            f"(a) no anti-symmetric fixed-width d >= {SMALLEST_D} run",
        )
    last = rows[-1]
    if last["on_target_high"] < RATE:
        return (
            stats.NOT_REPRODUCED,
            f"specialization: at the largest d={last['d']} the Wilson upper bound "
            f"{last['on_target_high']:.3f} of the on-target rate is below {RATE}",
            f"(a) on-target upper bound {last['on_target_high']:.3f} < {RATE} at d={last['d']}",
        )
    failing = [r for r in rows if not _passes(r)]
    if failing:
        return (
            stats.INCONCLUSIVE,
            "; ".join(_undecided(r, r is last) for r in failing),
            _undecided_summary(failing[0], failing[0] is last),
        )
    return (
        stats.REPRODUCED,
        f"specialization: at every d >= {SMALLEST_D} ({', '.join(str(r['d']) for r in rows)}) "
        f"the on-target rate is >= {RATE} with Wilson lower bound >= {LOWER}",
        f"(a) rate >= {RATE} (low >= {LOWER})",
    )


def _passes(r: Record) -> bool:
    return r["on_target_rate"] >= RATE and r["on_target_low"] >= LOWER


def _undecided_summary(r: Record, largest: bool) -> str:
    """``_undecided`` in short: the bound that misses at the first failing ``d``."""
    rate = r["on_target_rate"]
    if rate >= RATE:
        return f"(a) lower bound {r['on_target_low']:.3f} < {LOWER} at d={r['d']}"
    if largest:
        return f"(a) rate {rate:.3f} < {RATE} at the largest d={r['d']}"
    return f"(a) rate {rate:.3f} < {RATE} at d={r['d']} but not at the largest d"


def _undecided(r: Record, largest: bool) -> str:
    rate, seeds = r["on_target_rate"], r["seeds"]
    if rate >= RATE:
        n = seeds_to_decide(rate, LOWER, "low")
        return (
            f"specialization d={r['d']}: rate {rate:.3f} but lower bound "
            f"{r['on_target_low']:.3f} < {LOWER}, about {n} seeds (now {seeds}) would lift it "
            f"to {LOWER}"
        )
    if largest:
        n = seeds_to_decide(rate, RATE, "high")
        return (
            f"specialization d={r['d']} (largest): rate {rate:.3f} < {RATE} with upper bound "
            f"{r['on_target_high']:.3f}, about {n} seeds (now {seeds}) would put it below {RATE}"
        )
    return (
        f"specialization d={r['d']}: rate {rate:.3f} < {RATE} while the largest d does not fail, "
        "so the rule decides neither way: a larger d or more seeds at the largest d would"
    )


def _comparison(records: list[Record]) -> tuple[str, str, str]:
    """Condition (b): the anti-symmetric on-target rate is not interval-separated below the
    independent one at any fixed-width ``d >= SMALLEST_D``; never a failure on its own."""
    anti = [r["d"] for r in _summaries(records, "antisymmetric", "fixed") if r["d"] >= SMALLEST_D]
    pairs = [p for p in _paired(records) if p[0]["d"] >= SMALLEST_D]
    missing = sorted(set(anti) - {a["d"] for a, _, _ in pairs})
    if not anti:
        return (
            stats.INCONCLUSIVE,
            f"init comparison: no fixed-width d >= {SMALLEST_D} was run with both inits",
            f"(b) no fixed-width d >= {SMALLEST_D} run with both inits",
        )
    if missing:
        return (
            stats.INCONCLUSIVE,
            "init comparison: the independent init was not run at fixed-width d="
            f"{', '.join(map(str, missing))}; run both inits at every d",
            f"(b) the independent init not run at d={missing[0]}",
        )
    below = [p for p in pairs if p[2][2] < 0]
    if below:
        a, _, diff = below[0]
        return (
            stats.INCONCLUSIVE,
            "init comparison: the anti-symmetric on-target rate is interval-separated below the "
            f"independent init's at {_differences(below)} (anti-symmetric - independent), "
            'against the paper\'s "ensures"; the rule does not count it as a failure',
            f"(b) anti-symmetric below independent at d={a['d']}: {diff[0]:.3g}",
        )
    return (
        stats.REPRODUCED,
        "init comparison: the anti-symmetric on-target rate is not interval-separated below the "
        f"independent init's at any d >= {SMALLEST_D} (anti-symmetric - independent: "
        f"{_differences(pairs)})",
        "(b) anti-symmetric not below independent",
    )


def _alignment(records: list[Record]) -> tuple[str, str, str]:
    """Condition (c), Part E's alignment test with a bar of ``RATIO_BAR``, on the schedule
    series, anti-symmetric init: the outcome, its reason and its summary."""
    rows = _summaries(records, "antisymmetric", "schedule")
    if not rows:
        return (
            stats.INCONCLUSIVE,
            "alignment: the schedule series was not run with the anti-symmetric init; run "
            "d = 2^8 .. 2^16",
            "(c) no anti-symmetric schedule series run",
        )
    last = rows[-1]
    value, low, high = ratio_median(last)
    if high <= RATIO_BAR:
        return (
            stats.NOT_REPRODUCED,
            f"alignment: at the largest d={last['d']} (m={last['m']}) the median ratio "
            f"{value:.3f} has upper bound {high:.3f} <= {RATIO_BAR}",
            f"(c) ratio upper bound {high:.3f} <= {RATIO_BAR} at d={last['d']}",
        )
    judged = [r for r in rows if r["d"] >= ALIGNED_FROM_D]
    if not judged:
        return (
            stats.INCONCLUSIVE,
            f"alignment: no schedule d >= {ALIGNED_FROM_D} was run; run d = 2^10 .. 2^16",
            f"(c) no schedule d >= {ALIGNED_FROM_D} run",
        )
    lows = {r["d"]: ratio_median(r)[1] for r in judged}
    failing = [r for r in judged if lows[r["d"]] < RATIO_BAR]
    if failing:
        return (
            stats.INCONCLUSIVE,
            "; ".join(_ratio_undecided(r) for r in failing),
            _ratio_summary(failing[0]),
        )
    listed = ", ".join(f"{d}: {low:.3f}" for d, low in lows.items())
    return (
        stats.REPRODUCED,
        f"alignment: the median ratio's lower bound is >= {RATIO_BAR} at every schedule d >= "
        f"{ALIGNED_FROM_D} ({listed})",
        f"(c) ratio low {min(lows.values()):.3f} >= {RATIO_BAR}",
    )


def _ratio_summary(r: Record) -> str:
    """``_ratio_undecided`` in short: the median at or below the bar, or its lower bound."""
    value, low, _ = ratio_median(r)
    if value <= RATIO_BAR:
        return f"(c) median ratio {value:.3f} <= {RATIO_BAR} at d={r['d']}"
    return f"(c) ratio lower bound {low:.3f} < {RATIO_BAR} at d={r['d']}"


def _ratio_undecided(r: Record) -> str:
    value, low, _ = ratio_median(r)
    where = (
        f"alignment d={r['d']} (m={r['m']}): median ratio {value:.3f} with lower bound {low:.3f}"
    )
    if value <= RATIO_BAR:
        return (
            f"{where}, the median itself is <= {RATIO_BAR}: no number of seeds lifts the bound "
            f"to {RATIO_BAR}"
        )
    more = math.ceil(r["seeds"] * ((value - low) / (value - RATIO_BAR)) ** 2)  # ~ 1/sqrt(seeds)
    return (
        f"{where} < {RATIO_BAR}: about {more} seeds (now {r['seeds']}) would lift it to {RATIO_BAR}"
    )


# --- the criterion's error rates (SPEC Part E) ------------------------------------------------

Key = tuple[Series, str]
"""``(series, init)``."""


def summary_record(
    series: Series,
    init: str,
    d: int,
    m: int,
    hits: int,
    collapses: int,
    ratios: np.ndarray,
    own_kept: int,
) -> Record:
    """The summary fields a verdict reads, for ``len(ratios)`` replicas of which ``hits`` are on
    target and ``collapses`` collapsed (a simulated run's record)."""
    seeds = len(ratios)
    low, high = stats.wilson(hits, seeds)
    return {
        "kind": "summary",
        "series": series,
        "init": init,
        "d": d,
        "m": m,
        "seeds": seeds,
        "on_target": hits,
        "on_target_rate": hits / seeds,
        "on_target_low": low,
        "on_target_high": high,
        "collapses": collapses,
        "collapse_rate": collapses / seeds,
        "ratio": np.asarray(ratios, dtype=float).tolist(),
        "own_kept": own_kept,
    }


def simulated_run(
    config: Config,
    rng: np.random.Generator,
    rates: dict[Key, Callable[[int], float]],
    medians: dict[Key, Callable[[int], float]],
    measured: dict[Key, list[Record]],
) -> list[Record]:
    """One simulated run at ``config``'s sizes, seeds and inits, for every measured ``(series,
    init)``: binomial on-target counts at ``rates[key](d)``, collapses a binomial share of the
    misses (as measured at the ``d`` nearest in ``ln d``), and per-replica alignment ratios
    resampled from that ``d``'s measured ones, shifted so that their median is
    ``medians[key](d)`` (the measured spread)."""
    records = []
    for series, d, m, seeds in points(config):
        for init in (i for i in config.inits if (series, i) in measured):
            key = (series, init)
            near = min(measured[key], key=lambda r: abs(math.log(r["d"] / d)))
            hits = int(rng.binomial(seeds, min(1.0, max(0.0, rates[key](d)))))
            misses = near["seeds"] - near["on_target"]
            share = near["collapses"] / misses if misses else 0.0
            collapses = int(rng.binomial(seeds - hits, min(1.0, share)))
            spread = np.asarray(near["ratio"]) - ratio_median(near)[0]
            ratios = rng.choice(spread, seeds) + medians[key](d)
            kept = int(round(near["own_kept"] / near["seeds"] * seeds))
            records.append(summary_record(series, init, d, m, hits, collapses, ratios, kept))
    return records


def hypotheses(records: list[Record], config: Config) -> calibration.Hypotheses:
    """SPEC Part E, for criterion version 4. The paper's side: every series' on-target rates
    (both inits, so condition (b) compares them as measured) and median alignment ratios as
    measured (linear in ``ln d`` between the measured sizes, flat beyond), the anti-symmetric
    schedule's median ratio at least ``PAPER_RATIO`` = 1.3 (a run that measured less is lifted
    to it, so that the paper's side clears the bar of 1.2). The rival changes the anti-symmetric
    init only: its fixed-width on-target rate falls linearly in ``ln d`` from the measured rate
    at the smallest ``d`` to ``RIVAL_RATE`` = 0.8 at the largest (below the 0.9 of the paper's
    "nearly 1.0", and below the independent init's measured rate when that is above 0.8), and
    its schedule median ratio falls linearly in ``ln d`` from the paper's at the smallest
    schedule ``d`` to ``RIVAL_RATIO`` = 1.2 at the largest (relevant not "significantly larger"
    than ambient). Counts are binomial with the config's seeds; ratios keep the measured
    spread."""
    measured: dict[Key, list[Record]] = {}
    for series in ("fixed", "schedule"):
        for init in INITS:
            if rows := _summaries(records, init, series):
                measured[(series, init)] = rows
    require(
        ("fixed", "antisymmetric") in measured,
        "the A7.4 records hold no anti-symmetric fixed-width summaries",
    )

    def as_measured(field: Callable[[Record], float]) -> dict[Key, Callable[[int], float]]:
        return {
            key: interpolated([r["d"] for r in rows], [field(r) for r in rows])
            for key, rows in measured.items()
        }

    rates = as_measured(lambda r: r["on_target_rate"])
    medians = as_measured(lambda r: ratio_median(r)[0])
    aligned: Key = ("schedule", "antisymmetric")
    fixed: Key = ("fixed", "antisymmetric")
    if aligned in medians:
        measured_median = medians[aligned]
        medians[aligned] = lambda d: max(measured_median(d), PAPER_RATIO)

    def paper(cfg: Config, rng: np.random.Generator) -> list[Record]:
        return simulated_run(cfg, rng, rates, medians, measured)

    def rival(cfg: Config, rng: np.random.Generator) -> list[Record]:
        worse, weaker = dict(rates), dict(medians)
        if cfg.d_values:
            start = rates[fixed](min(cfg.d_values))
            worse[fixed] = falling_line(start, RIVAL_RATE, cfg.d_values)
        if aligned in medians and cfg.schedule_d_values:
            top = medians[aligned](min(cfg.schedule_d_values))
            weaker[aligned] = falling_line(top, RIVAL_RATIO, cfg.schedule_d_values)
        return simulated_run(cfg, rng, worse, weaker, measured)

    def listed(key: Key, value: Callable[[Record], float]) -> str:
        return ", ".join(f"d={r['d']}: {value(r):.3f}" for r in measured.get(key, []))

    return calibration.Hypotheses(
        paper=paper,
        rival=rival,
        paper_law="anti-symmetric on-target rate (fixed width) as measured "
        f"({listed(fixed, lambda r: r['on_target_rate'])}), independent as measured "
        f"({listed(('fixed', 'independent'), lambda r: r['on_target_rate'])}), and median "
        f"alignment ratio (schedule) as measured, at least {PAPER_RATIO} "
        f"({listed(aligned, lambda r: ratio_median(r)[0])}); linear in ln d between the sizes, "
        "flat beyond",
        rival_law="anti-symmetric on-target rate falling linearly in ln d from the measured rate "
        f"at the smallest d to {RIVAL_RATE} at the largest d (independent as measured), and "
        "median alignment ratio falling linearly in ln d from the paper's at the smallest "
        f"schedule d to {RIVAL_RATIO} at the largest",
        noise="binomial on-target counts with the config's seeds at each d, series and init; "
        "collapses a binomial share of the misses; alignment ratios resampled from the nearest "
        "measured d, shifted to the law's median",
    )


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    """Weights on the support bits, attention maps (fixed width, smallest ``d``), the on-target
    rate and the median alignment ratio of every series and init (``xor_heads_figures``)."""
    ratios: list[figures.Curve] = []
    rates: list[figures.Curve] = []
    for series in ("schedule", "fixed"):
        for init in INITS:
            if rows := _summaries(records, init, series):
                width = "m(d) schedule" if series == "schedule" else f"m = {config.m}"
                ds = [r["d"] for r in rows]
                ratios.append((f"{init}, {width}", ds, [ratio_median(r) for r in rows]))
                on_target = [
                    (r["on_target_rate"], r["on_target_low"], r["on_target_high"]) for r in rows
                ]
                rates.append((f"{init}, {width}", ds, on_target))
    summaries = [r for r in records if r["kind"] == "summary"]
    maps = [r for r in records if r["kind"] == "map"]
    return [
        figures.mass(summaries, MASS, out),
        *figures.maps(maps, out),
        figures.rates(rates, RATE, LOWER, out),
        figures.ratio(ratios, RATIO_BAR, out),
    ]


# --- cost (``attnsep reproduce --plan``): the work of one job ---------------------------------


def work(c: costs.Config) -> float:
    from .xor_one_step import schedule_m

    fixed = sum(c["seeds"] * d * c["m"] for d in c["d_values"])
    schedule = sum(  # absent from the configs of version 2 (published timings)
        c["seeds_schedule"] * d * schedule_m(d, c["schedule_scale"])
        for d in c.get("schedule_d_values", [])
    )
    return len(c["inits"]) * (fixed + schedule)


def peak(c: costs.Config) -> float:
    """The largest one-step run (``OneStepConfig.peak_bytes``): the alignment after it draws
    ``V`` again in chunks of at most ``CHUNK_ELEMENTS``, under the step's batch."""
    from .xor_one_step import schedule_m

    sizes = [(d, c["m"], c["seeds"]) for d in c["d_values"]]
    sizes += [
        (d, schedule_m(d, c["schedule_scale"]), c["seeds_schedule"])
        for d in c.get("schedule_d_values", [])
    ]
    return max(OneStepConfig(d=d, m=m, seeds=n).peak_bytes() for d, m, n in sizes)


EXPERIMENT = register(
    Experiment(
        work=work,
        peak=peak,
        name="head-specialization",
        claim="A7.4",
        title="The two heads specialize",
        paper="This anti-symmetric initialization ensures maximal initial separation, "
        "encouraging the two heads to specialize in different target positions. [...] The "
        "gradient alignment with relevant positions is significantly larger than with ambient "
        "positions, driving attention scores on the target bits to nearly 1.0. [...] The "
        "anti-symmetric initialization is amplified by the gradient update, ensuring that one "
        "head attends to i* and the other to j*.",
        config_type=Config,
        run=run,
        figure=figure,
        verdict=verdict,
        split=split,
        version=3,
        hypotheses=hypotheses,
        criterion_version=4,
        tuned_on=(0, 1, 3),
        presets={
            "quick": {"d_values": [64, 256], "schedule_d_values": [2**8, 2**10], "seeds": 64},
            "standard": {
                "d_values": [256, 1024, 4096],
                "seeds": 1024,
                # 2 inits x 256 replicas: 4-7 min on 2 cores, two thirds of it at d = 2^16
                # (m = 62; step and alignment 0.5-0.65 s a replica, measured on a loaded machine)
                "schedule_d_values": [2**8, 2**10, 2**12, 2**14, 2**16],
                "seeds_schedule": 256,
            },
            "full": {
                "d_values": [256, 1024, 4096, 16384, 65536],
                "seeds": 1024,
                "schedule_d_values": [2**k for k in range(8, 17)],
                "seeds_schedule": 1024,
                "device": "auto",
            },
        },
    )
)
