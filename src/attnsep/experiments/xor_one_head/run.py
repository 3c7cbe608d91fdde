"""A7.10's jobs and records: one ``d`` a job, the three models on A7.1's replicas
(``train.tied_heads``), and the cost of a job (SPEC A7.10)."""

from __future__ import annotations

import math

from .. import costs
from ..base import Record
from ..xor_one_step.config import schedule_m
from .config import Config


def split(config: Config) -> list[Config]:
    return [config.model_copy(update={"d_values": [d]}) for d in config.d_values]


def run(config: Config) -> list[Record]:
    from ...train.tied_heads import run_arms

    out = []
    for d in config.d_values:
        m = schedule_m(d, config.schedule_scale)
        eta = config.eta_scale * d * d * math.log(d)
        arms = run_arms(config.seed, config.seeds, d, m, eta, config.budget, config.cap)
        record: Record = {"d": d, "m": m, "seeds": config.seeds, "eta": eta, "arms": {}}
        for arm, a in arms.items():
            record["arms"][arm] = {
                "loss0": a.loss0.tolist(),
                "loss1": a.loss1.tolist(),
                "loss_final": a.loss_final.tolist(),
                "success1": (a.bound1 <= config.success_tol).tolist(),
                "success_final": (a.bound_final <= config.success_tol).tolist(),
                "on_support1": a.on_support1.tolist(),
            }
        out.append(record)
    return out


def work(c: costs.Config) -> float:
    """Three models, ``budget + 1`` loss and gradient evaluations of ``seeds x d x m``."""
    return sum(
        3 * 4 * (c["budget"] + 1) * c["seeds"] * d * schedule_m(d, c["schedule_scale"])
        for d in c["d_values"]
    )


def peak(c: costs.Config) -> float:
    """Embeddings and a few score-sized arrays of the largest ``d`` (float64)."""
    return max(
        8.0 * 12 * c["seeds"] * d * (schedule_m(d, c["schedule_scale"]) + 4) for d in c["d_values"]
    )
