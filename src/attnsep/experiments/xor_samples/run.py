"""A7.5's jobs and records: one ``d`` a job, per width the population step and one ``n*`` search
per success definition (``search``), then the multi-step searches (``multistep``), and the cost
of a job (SPEC A7.5, Part E, F)."""

from __future__ import annotations

import numpy as np

from ...configs import OneStepConfig
from ...train.memory import one_step_batch, one_step_peak, xor_train_peak
from .. import costs
from ..base import Record
from ..xor_one_step.config import schedule_m
from . import multistep
from .config import Config
from .search import bound, edge, search_record

JUDGED = ("fixed", "certified")
"""The searches A7.5a judges (width, success definition): their guard sits on ``d^4 (ln d)^2``,
the others' on ``d^4``."""


def split(config: Config) -> list[Config]:
    """One job per ``d`` of the one-step searches, and one per ``d`` of the multi-step ones."""
    return [
        config.model_copy(update={"d_values": [d], "multistep_d_values": []})
        for d in config.d_values
    ] + [
        config.model_copy(update={"d_values": [], "multistep_d_values": [d]})
        for d in config.multistep_d_values
    ]


def width_m(config: Config, width: str, d: int) -> int:
    """The width ``m`` of a ``width`` series at ``d``."""
    return config.m if width == "fixed" else schedule_m(d, config.schedule_scale)


def run(config: Config) -> list[Record]:
    """Per ``d`` and width: the population step and one search per success definition, their
    probes shared (each ``n`` stepped once), the guard on ``d^4 (ln d)^2`` for A7.5a's
    (``JUDGED``) and on ``d^4`` for the others; then the multi-step searches
    (``multistep.run``)."""
    from ...train.sample_steps import SampleSteps

    records = []
    for d in config.d_values:
        surrogate = config.surrogated(d)
        for width in config.widths:
            one = OneStepConfig(
                d=d,
                m=width_m(config, width, d),
                seeds=config.seeds,
                seed=config.seed,
                gradient="surrogate" if surrogate else "exact-samples",
                device=config.device,
            )
            steps = SampleSteps(one, config.test_samples, config.test_accuracy)
            seen: dict[int | None, dict[str, np.ndarray]] = {}

            def at(n: int | None, steps=steps, seen=seen) -> dict[str, np.ndarray]:
                if n not in seen:
                    seen[n] = steps.outcomes(n)
                return seen[n]

            record: Record = {"d": d, "m": one.m, "width": width, "gradient": one.gradient}
            for outcome in ("certified", "test"):

                def evaluate(n: int, o: str = outcome, at=at) -> np.ndarray:
                    return at(n)[o]

                line = edge if (width, outcome) == JUDGED else bound
                record[outcome] = search_record(evaluate, at(None)[outcome], d, config, line)
            records.append(record)
    return records + multistep.run(config)


def work(c: costs.Config) -> costs.Parts:
    """Per ``d`` and width, where samples are drawn (``samples``): the search's probes (about
    ``3 n*``) and its guard probes up to ``min(n_max, d^4 (ln d)^2)`` at the fixed width
    (``min(n_max, d^4)`` at the schedule's), which a few stuck replicas make it climb to (counted
    once; ``search.search_samples``), ``n d`` each. Where the surrogate
    steps (``surrogate``): the covariance once (``d m`` times its ~400 partitions) and each of
    about 20 probes' fresh test inputs (``test_samples d / 8`` byte lookups). The multi-step
    searches (``multistep``): ``multistep.work``."""

    def n_star(d: int) -> float:
        return min(c["n_max"], c["n_start_per_d"] * d * costs.ln(d) ** 2)

    def guard(d: int, width: str) -> float:
        return min(c["n_max"], edge(d) if width == JUDGED[0] else bound(d))

    parts: costs.Parts = {}
    for d in c["d_values"]:
        for width in c["widths"]:
            m = c["m"] if width == "fixed" else schedule_m(d, c["schedule_scale"])
            if c["surrogate_from"] is not None and d >= c["surrogate_from"]:
                units = c["seeds"] * d * (400 * m + 20 * c["test_samples"] / 8)
                parts["surrogate"] = parts.get("surrogate", 0.0) + units
            else:
                units = c["seeds"] * d * (3 * n_star(d) + guard(d, width) + m)
                parts["samples"] = parts.get("samples", 0.0) + units
    if c.get("multistep_d_values"):
        parts["multistep"] = multistep.work(c, n_star)
    return parts


def peak(c: costs.Config) -> float:
    """The larger of the one-step and multi-step searches' memory. One step: every replica's
    ``V`` is held across the probes and the next width's is drawn beside it, about what
    ``train.memory.one_step_peak(keep_embeddings=True)`` counts at the wider width (the samples are
    streamed in blocks of ``SAMPLE_ELEMENTS``); where the surrogate steps, its covariance's
    Jacobian (``train.surrogate.query_jacobians``: primal, tangent and the double backward's
    intermediates) adds about seven ``batch x 2 x m x d`` arrays (measured at ``d = 4096``).
    Multi-step: one replica at a time on its held set of the largest ``n`` its search may reach
    (``Search.n_limit``), a fixed-set training (``train.memory.xor_train_peak``)."""
    from ...configs import MAX_DATA_ELEMENTS, XorTrainConfig

    peaks = [0.0]
    for d in c["d_values"]:
        scheduled = schedule_m(d, c["schedule_scale"])
        m = max(c["m"] if w == "fixed" else scheduled for w in c["widths"])
        step = OneStepConfig(d=d, m=m, seeds=c["seeds"])
        surrogate = c["surrogate_from"] is not None and d >= c["surrogate_from"]
        jacobian = 8.0 * 7 * one_step_batch(step) * 2 * m * d if surrogate else 0.0
        peaks.append(one_step_peak(step, keep_embeddings=True) + jacobian)
    for d in c.get("multistep_d_values", []):
        n = max(1, min(c["multistep_n_max"], MAX_DATA_ELEMENTS // d))
        steps = c["multistep_steps"]
        fixed = XorTrainConfig(d=d, m=c["m"], seeds=1, steps=steps, gradient="fixed", samples=n)
        peaks.append(xor_train_peak(fixed))
    return max(peaks)
