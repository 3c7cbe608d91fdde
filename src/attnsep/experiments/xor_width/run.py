"""A7.2's jobs and records: one ``d`` a job, the search for ``m*`` relative to the success
plateau (``search_width``) and the cost of a job (SPEC A7.2, Part F)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...configs import OneStepConfig
from ...train.memory import one_step_peak
from ...train.search import Outcomes, Probe, smallest_passing
from .. import costs
from ..base import Record
from .config import Config

PLATEAU_FLOOR = 0.5
"""A doubling's rate is taken as the plateau only when at least this (``search_width``)."""


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
    from ...train.one_step import run_one_step

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


# --- cost (``attnsep reproduce --plan``): the work of one job ---------------------------------


def work(c: costs.Config) -> float:
    return sum(c["seeds"] * d * 3 * min(c["m_limit"], costs.ln(d) ** 2) for d in c["d_values"])


def peak(c: costs.Config) -> float:
    """The largest probe's one step (``train.memory.one_step_peak``; probes run one after another).
    The probes are the doubling's widths up to ``(ln d)^2``, the law ``work`` counts (the
    plateau probe, twice the power of two past ``m*``, lies about there); the bisection's probes
    are smaller. Not monotone in ``m`` (a narrow step batches more replicas, a wide one streams
    ``V``), so every doubling width counts."""
    peaks = []
    for d in c["d_values"]:
        top, m = min(c["m_limit"], max(c["m_start"], costs.ln(d) ** 2)), c["m_start"]
        while m <= top:
            peaks.append(one_step_peak(OneStepConfig(d=d, m=m, seeds=c["seeds"])))
            m *= 2
    return max(peaks)
