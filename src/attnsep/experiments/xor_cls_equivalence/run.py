"""A3's jobs and records: one ``(d, m)`` and loss a job, the CLS block and the query-vector model
trained side by side (``train.cls_descent``), and the cost of a job (SPEC A3)."""

from __future__ import annotations

import math

import numpy as np

from .. import costs
from ..base import Record
from .config import CUBE_D_MAX, Config, jobs_of
from .verdict import CONDITIONED


def split(config: Config) -> list[Config]:
    return [
        config.model_copy(update={"sizes": [(d, m)], "losses": [loss]})
        for d, m, loss in jobs_of(config)
    ]


def eta(d: int, scale: float) -> float:
    return scale * d * d * math.log(d)


def run(config: Config) -> list[Record]:
    from ...core.rng import stream_seed
    from ...train.cls_descent import side_by_side

    out = []
    for d, m, loss in jobs_of(config):
        step = eta(d, config.eta_scale)
        seed = stream_seed(config.seed, d, m)
        r = side_by_side(seed, config.seeds, d, m, config.steps, step, loss)
        dev = np.maximum(r.loss_dev, r.attn_dev)
        control = np.maximum(r.control_loss_dev, r.control_attn_dev)
        cond = r.twin_dev.max(axis=0) <= CONDITIONED
        shown = cond if cond.any() else np.ones_like(cond)
        out.append(
            {
                "d": d,
                "m": m,
                "loss": loss,
                "seeds": config.seeds,
                "steps": config.steps,
                "eta": step,
                "dev": dev.max(axis=0).tolist(),
                "loss_dev": r.loss_dev.max(axis=0).tolist(),
                "attn_dev": r.attn_dev.max(axis=0).tolist(),
                "twin": r.twin_dev.max(axis=0).tolist(),
                "control": control.max(axis=0).tolist(),
                "final_loss": r.loss[-1].tolist(),
                "curve_dev": dev[:, shown].max(axis=1).tolist(),
                "curve_twin": r.twin_dev[:, shown].max(axis=1).tolist(),
                "curve_control": np.median(control, axis=1).tolist(),
                "curve_loss": np.median(r.loss, axis=1).tolist(),
            }
        )
    return out


def _job_sizes(c: costs.Config) -> list[float]:
    """Per job of a stored config: inputs x heads x (d+1) x (d+m+3), a score array's size."""
    return [
        (2**d if loss == "cube" else 1) * 2 * (d + 1) * (d + m + 3)
        for d, m in c["sizes"]
        for loss in c["losses"]
        if loss == "population" or d <= CUBE_D_MAX
    ]


def work(c: costs.Config) -> float:
    """Per step, four trajectories, each a ``(d+1) x (d+1)`` attention per head and input."""
    return sum(4.0 * c["steps"] * c["seeds"] * n for n in _job_sizes(c))


def peak(c: costs.Config) -> float:
    """About ten float64 arrays of the scores' size (tokens, Q, K, scores, their grads):
    measured, a population job's resident memory grew by 0.75 GB at ``d = 256`` and 2.6 GB
    at ``d = 512`` (64 seeds, beyond a tiny job's 0.2 GB), against 0.75 and 2.85 GB here."""
    return max(80.0 * c["seeds"] * n for n in _job_sizes(c))
