"""Counting a job's work for the plan (``attnsep reproduce --plan``): shared helpers of the
``work`` functions each experiment registers (``Experiment(work=...)``).

A ``work(config)`` counts the dominant loop of one job (multiply-adds up to a constant per
experiment), read off the algorithm, not fitted: e.g. the one step draws and multiplies
``seeds x d x m`` embeddings. A threshold search costs what its probes near the threshold
cost, and the threshold is the result; its work takes the threshold from the law the paper
claims (``m* ~ (ln d)^2``, ``n* ~ d (ln d)^2``, ``m_p* ~ q ln T``, FCN width ``~ d`` or
``~ T d``), so those estimates are only as good as that law (``Experiment(searches=True)``;
the plan says so). The engine fits seconds per unit of work to timed jobs
(``engine.cost_model``).
"""

from __future__ import annotations

import math
from typing import Any

Config = dict[str, Any]
"""A job's config as stored (``model_dump``)."""
Parts = dict[str, float]
"""An experiment whose jobs run different models counts each model's work apart."""

SGD_TOKEN_OVERHEAD = 5000
"""Work units per token of a law-drawn SGD step beyond its products (draws and bookkeeping)."""


def ln(x: float) -> float:
    return math.log(max(x, 2.0))


def probes(limit: float) -> float:
    """Probes of a doubling-then-bisection search from 1 up to ``limit``."""
    return 2.0 * max(1.0, math.log2(max(limit, 2.0)))


def selector_training(c: Config, m_p: float, T: int) -> float:
    """SGD on the position block: ``steps x batch x T x m_p^2`` with ``batch ∝ m_p``."""
    return c["steps"] * c["batch_per_dim"] * m_p * T * m_p**2


def family_search(samples: int, lengths: list[int], m_p: float) -> float:
    """One search of the ``W = alpha I`` family's best loss over ``lengths``."""
    from ..exact.family import GOLDEN_ROUNDS, GRID_POINTS

    return (GRID_POINTS + GOLDEN_ROUNDS) * samples * sum(lengths) * m_p**2
