"""B5.5's jobs: one ``(d, q)`` full-``W`` search a job (``train.selection_full``), and the cost
and memory of a job (SPEC Part G, item B5.5)."""

from __future__ import annotations

from .. import costs
from ..base import Record
from .config import Config


def split(config: Config) -> list[Config]:
    return [
        config.model_copy(update={"q_values": [q], "d_values": [d]})
        for q in config.q_values
        for d in config.d_values
    ]


def run(config: Config) -> list[Record]:
    from ...train.selection_full import full_threshold

    training = config.training()
    return [
        full_threshold(
            config.T,
            q,
            d,
            config.seeds,
            config.seed,
            training,
            config.target,
            config.m_limit,
            config.family_start,
        )
        for q in config.q_values
        for d in config.d_values
    ]


# --- cost and memory of one job ---------------------------------------------------------------


def _width(c: costs.Config, q: int) -> float:
    """The threshold the cost takes: ``3 q ln T`` (the paper's ``q log T``)."""
    return 3.0 * q * costs.ln(c["T"])


def work(c: costs.Config) -> float:
    """Per ``(d, q)``: the probes near ``m_p*`` times ``seeds x max_steps x batch`` sequences,
    each drawing ``T d`` tokens and ``(q + 1) m`` encodings and multiplying ``2 (d + m) m``."""
    total = 0.0
    for q in c["q_values"]:
        m = _width(c, q)
        for d in c["d_values"]:
            sequence = costs.DRAW * (c["T"] * d + (q + 1) * m) + 2 * (d + m) * m
            sequence += costs.STEP_TOKEN * c["T"]
            total += costs.probes(m) * c["seeds"] * c["max_steps"] * c["batch"] * sequence
    return total


def peak(c: costs.Config) -> float:
    """Bytes: the eval draw's tokens and encodings (float64, a few copies) and ``W``."""
    d, q, m = max(c["d_values"]), max(c["q_values"]), c["m_limit"]
    rows = c["seeds"] * max(c["eval_size"], c["monitor"], c["batch"])
    return 8.0 * (6 * rows * (c["T"] * (d + 4) + (q + 2) * m) + 3 * c["seeds"] * (d + m) * m)
