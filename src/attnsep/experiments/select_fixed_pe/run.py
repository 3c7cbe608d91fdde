"""B5.6's jobs and records: one PE mode and seed a job, trained at ``T`` and evaluated at every
``T'`` (``select_common.train_and_evaluate``), the in-distribution loss curve, and the cost of a
job (SPEC B5.3, Part G, item B5.6)."""

from __future__ import annotations

import numpy as np

from ...train.memory import selection_evaluation_peak, selection_peak
from .. import costs
from ..base import Record
from ..select_common import evaluation_loss, train_and_evaluate
from .config import Config


def split(config: Config) -> list[Config]:
    """One job per (PE mode, seed)."""
    return [
        config.model_copy(update={"pes": [pe], "seeds": [s]})
        for pe in config.pes
        for s in config.seeds
    ]


def checkpoint_steps(steps: int, count: int) -> list[int]:
    """``count`` log-spaced step counts from 1 to ``steps`` (fewer where they coincide)."""
    return sorted({max(1, round(steps ** (i / (count - 1)))) for i in range(count)})


def curve(losses: list[float], count: int) -> tuple[list[int], list[float]]:
    """The training curve at :func:`checkpoint_steps`: at ``s`` steps done, the mean of the
    per-step losses of the ``max(1, steps // 20)`` steps ending there."""
    steps = len(losses)
    window = max(1, steps // 20)
    at = checkpoint_steps(steps, count)
    return at, [float(np.mean(losses[max(0, s - window) : s])) for s in at]


def run(config: Config) -> list[Record]:
    """Per (mode, seed, ``T'``) one record; the ``T' = T`` record carries the loss curve."""
    lengths, records = config.lengths, []
    for pe in config.pes:
        for seed in config.replica_seeds:
            positions = max(lengths) if pe == "fixed" else None
            out = train_and_evaluate(
                config.training(config.pe_dim, seed, pe, positions), lengths, config.eval_size
            )
            steps, values = curve(out["losses"], config.checkpoints)
            for row in out["eval"]:
                loss, stderr, path = evaluation_loss(row)
                record: Record = {
                    "pe": pe,
                    "seed": seed,
                    "T": row["T"],
                    "train_T": config.T,
                    "loss": loss,
                    "stderr": stderr,
                    "path": path,
                    "uniform": row["uniform"],
                    "cos": out["cos"],
                }
                if row["T"] == config.T:
                    record.update(curve_steps=steps, curve=values)
                records.append(record)
    return records


# --- cost and memory of one job -----------------------------------------------------------


def work(c: costs.Config) -> float:
    """Training at ``T`` (explicit steps for a fixed table, law-drawn for stochastic PE) and the
    evaluation at every ``T'``, per seed."""
    m, lengths = c["pe_dim"], [c["T"] * f for f in c["factors"]]
    per_seed = 0.0
    for pe in c["pes"]:
        per_seed += costs.explicit_eval(c["eval_size"], lengths, m)
        if pe == "fixed":
            per_seed += costs.explicit_training(c, m, c["T"])
        else:
            per_seed += costs.law_training(c, m)
    return len(c["seeds"]) * per_seed


def peak(c: costs.Config) -> float:
    """One run's training and evaluation memory (``train.memory.selection_peak`` and
    ``selection_evaluation_peak``), its larger mode."""
    config = Config(**c)
    lengths = config.lengths
    return max(
        selection_peak(config.training(config.pe_dim, 0, pe, max(lengths)))
        + selection_evaluation_peak(
            config.training(config.pe_dim, 0, pe), lengths, config.eval_size
        )
        for pe in config.pes
    )
