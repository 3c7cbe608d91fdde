"""B5.3d's jobs and records: one (PE mode, seed) a job, trained on mixed lengths and evaluated
at every test length, and the cost of a job (SPEC B5.3; Part G, item B5.3d)."""

from __future__ import annotations

import numpy as np

from ...configs import PEMode
from ...train.memory import selection_evaluation_peak, selection_peak
from .. import costs
from ..base import Record
from .config import Config


def split(config: Config) -> list[Config]:
    """One job per (PE mode, seed)."""
    return [
        config.model_copy(update={"pes": [pe], "seeds": [s]})
        for pe in config.pes
        for s in config.seeds
    ]


def _one_run(config: Config, pe: PEMode, seed: int) -> list[Record]:
    from ...exact.selection_bounds import uniform_attention_loss
    from ...metrics.selection import cos_to_ground_truth, evaluate_lengths
    from ...tasks.selection import TokenSelection
    from ...train.selection_lengths import train_mixed_lengths
    from ..select_common import family_loss_at

    m, d, q = config.pe_dim, config.d, config.q
    training = config.training(m, seed, pe, config.positions if pe == "fixed" else None)
    result, lengths = train_mixed_lengths(training, config.first)
    rows = evaluate_lengths(
        result.W,
        TokenSelection.of(training),
        result.encodings,
        config.eval_lengths,
        seed,
        config.eval_size,
    )
    alpha = float(result.W[0, d:, d:].diagonal().mean())
    base = {
        "pe": pe,
        "seed": seed,
        "train_lengths": [config.first, config.T],
        "mean_train_length": float(np.mean(lengths)),
        "alpha": alpha,
        "cos": float(cos_to_ground_truth(result.W, d)[0]),
        "train_loss": float(result.train_loss[0]),
    }
    out = []
    for row in rows:
        exact = row.exact is not None
        loss = row.exact if row.exact is not None else row.loss
        stderr = row.exact_stderr if row.exact_stderr is not None else row.stderr
        record = {
            **base,
            "T": row.length,
            "loss": float(loss[0]),
            "stderr": float(stderr[0]),
            "path": "exact" if exact else "sampled",
            "uniform": float(uniform_attention_loss(row.length, q, d)),
        }
        if pe == "stochastic":
            record["family"] = family_loss_at(
                alpha, row.length, q, m, d, config.family_samples, seed
            )[0]
        out.append(record)
    return out


def run(config: Config) -> list[Record]:
    """Per (mode, seed, test length) one record."""
    return [r for pe in config.pes for s in config.replica_seeds for r in _one_run(config, pe, s)]


def work(c: costs.Config) -> float:
    """Training (explicit steps at the mean length for a fixed table, law-drawn for stochastic
    PE), the evaluation at every test length, and the family at each for stochastic PE."""
    m, lengths = c["pe_dim"], c["eval_lengths"]
    shortest = c["shortest"] if c.get("shortest") is not None else c["q"] + 1
    per_seed = 0.0
    for pe in c["pes"]:
        per_seed += costs.explicit_eval(c["eval_size"], lengths, m)
        if pe == "fixed":
            per_seed += costs.explicit_training(c, m, (shortest + c["T"]) // 2)
        else:
            per_seed += costs.law_training(c, m)
            per_seed += costs.family_best(c["family_samples"], m, [], lengths)
    return len(c["seeds"]) * per_seed


def peak(c: costs.Config) -> float:
    """One run's training and evaluation memory, its larger mode (``train.memory``)."""
    config = Config(**c)
    return max(
        selection_peak(config.training(config.pe_dim, 0, pe, config.positions))
        + selection_evaluation_peak(
            config.training(config.pe_dim, 0, pe), config.eval_lengths, config.eval_size
        )
        for pe in config.pes
    )
