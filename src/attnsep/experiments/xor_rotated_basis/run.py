"""A7.9's jobs and records: one ``(d, model)`` a job, both tasks on the same ``d``
(``train.gaussian_xor``, ``exact.gaussian_xor``), and the cost of a job (SPEC Part G, item 7)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import costs
from ..base import Record
from .config import MODELS, Config


def split(config: Config) -> list[Config]:
    """One job per ``(d, model)``."""
    return [
        config.model_copy(update={"d_values": [d], "models": [model]})
        for d in config.d_values
        for model in config.models
    ]


def job_seed(config: Config, d: int, *keys: str) -> int:
    """The streams of size ``d`` (and ``keys``): independent of how the jobs are split."""
    from ...core.rng import stream_seed

    return stream_seed(config.seed, "rotated-basis", d, *keys)


def _floats(values: Any) -> list[float]:
    return [float(x) for x in np.asarray(values, dtype=float).ravel()]


def run_transformer(config: Config, d: int) -> list[Record]:
    """Both tasks on the same embeddings and inits; the rotated one with its ceiling."""
    import math

    from ...exact.gaussian_xor import simplex_floor_bound
    from ...train import gaussian_xor as gx

    seed, out = job_seed(config, d), []
    eta, gd_eta = (s * d * d * math.log(d) for s in (config.eta_scale, config.gd_eta_scale))
    for task in gx.TASKS:
        u, v = gx.task_pairs(seed, d, config.seeds, task)
        runs = gx.transformer_descent(seed, config.m, u, v, eta, gd_eta, config.budget)
        record: Record = {"model": "transformer", "task": task, "d": d, "m": config.m}
        record.update({key: _floats(values) for key, values in runs.items()})
        if task == "rotated":
            floor = gx.simplex_floor(u, v, config.floor_restarts, config.floor_steps, seed)
            record["floor_found"] = _floats(floor)
            record["floor_bound"] = _floats(simplex_floor_bound(u, v).numpy())
        out.append(record)
    return out


def run_mlp(config: Config, d: int) -> list[Record]:
    """Both tasks, each on its own streams (independent arms)."""
    from ...train import gaussian_xor as gx

    out = []
    for task in gx.TASKS:
        seed = job_seed(config, d, "mlp", task)
        u, v = gx.task_pairs(seed, d, config.mlp_seeds, task)
        cfg = gx.GaussianMLPConfig(
            d=d,
            width=config.mlp_width,
            seeds=config.mlp_seeds,
            seed=seed,
            steps=config.mlp_steps,
            batch=config.mlp_batch,
            lr=config.mlp_lr,
            test_samples=config.test_samples,
        )
        loss = gx.train_mlp(cfg, u, v)["test_loss"]
        out.append(
            {
                "model": "mlp",
                "task": task,
                "d": d,
                "width": config.mlp_width,
                "steps": config.mlp_steps,
                "test_loss": _floats(loss),
            }
        )
    return out


def run(config: Config) -> list[Record]:
    out: list[Record] = []
    for d in config.d_values:
        for model in config.models:
            out += (run_transformer if model == "transformer" else run_mlp)(config, d)
    return out


# --- cost (``attnsep reproduce --plan``) and memory of one job ------------------------------


def work(c: costs.Config) -> costs.Parts:
    """Transformer: both tasks' ``budget + 2`` evaluations of ``2 d m`` products per replica,
    and the ceiling's ``restarts x steps`` loss evaluations of ``d``; MLP: both tasks' fresh
    inputs (``DRAW`` each) and ``3 width`` multiply-adds per input coordinate."""
    models = c.get("models", list(MODELS))
    transformer = mlp = 0.0
    for d in c["d_values"]:
        if "transformer" in models:
            descent = (c["budget"] + 2) * 4 * d * c["m"]
            ceiling = c["floor_restarts"] * (c["floor_steps"] + 1) * 20 * d
            transformer += 2 * c["seeds"] * descent + c["seeds"] * ceiling
        if "mlp" in models:
            inputs = c["mlp_steps"] * c["mlp_batch"] + c["test_samples"]
            mlp += 2 * c["mlp_seeds"] * inputs * d * (costs.DRAW + 3 * c["mlp_width"])
    return {"transformer": transformer, "mlp": mlp}


def peak(c: costs.Config) -> float:
    """Bytes (float64): the transformer's embeddings and the ceiling's logits with Adam's
    moments; the MLP's weights with gradients and a test chunk of 1024 inputs."""
    d = max(c["d_values"])
    transformer = c["seeds"] * d * (4 * c["m"] + 16 * c["floor_restarts"] + 16)
    rows = max(c["mlp_batch"], 1024)
    mlp = c["mlp_seeds"] * (4 * d * c["mlp_width"] + rows * (d + 3 * c["mlp_width"]))
    return 8.0 * 2 * (transformer + mlp)
