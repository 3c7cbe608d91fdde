"""A7.1's jobs and records: one job per ``(d, width)``, SPEC A6's one-step outcome per point
(``train.one_step``), and the cost of a job (SPEC A7.1)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...configs import OneStepConfig
from ...metrics import stats
from ...train.memory import one_step_peak
from .. import costs
from ..base import Record
from .config import Config, Series, schedule_m

if TYPE_CHECKING:
    from ...train.one_step import OneStepResult


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
    from ...train.one_step import run_one_step

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
    return sum(costs.one_step_work(d, m, seeds) for d, m, seeds in _sizes(c))


def peak(c: costs.Config) -> float:
    """The largest step's memory (``train.memory.one_step_peak``)."""
    return max(one_step_peak(OneStepConfig(d=d, m=m, seeds=n)) for d, m, n in _sizes(c))
