"""A7.1's error rates (SPEC Part E): the paper's side as measured along the schedule, against a
failure rate rising with ``d``, as simulated runs of the schedule series."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from ...core.validate import require
from ...metrics import calibration, stats
from ..base import Record
from .config import Config, schedule_m
from .verdict import TARGET, fixed_widths, series_rows

RIVAL_END = 0.85
"""The rival's success rate at the largest ``d`` (``hypotheses``): below 0.9, failure rising."""


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
    rows = series_rows(records, "schedule")
    source = "schedule"
    if not rows and fixed_widths(records):
        m = fixed_widths(records)[0]
        rows, source = series_rows(records, "fixed", m), f"fixed m = {m} (no schedule series run)"
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
