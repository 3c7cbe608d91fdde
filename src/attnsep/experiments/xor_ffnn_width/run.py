"""A7.8's jobs and records: one ``d`` a job, the search for ``w*`` (``search_record``) and the
cost of a job (SPEC Part G, item 2a)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...configs import XorFCNConfig
from ...metrics import stats
from ...train.memory import fcn_peak
from .. import costs
from ..base import Record
from .config import Config


def split(config: Config) -> list[Config]:
    """One job per ``d``, the largest (costliest) first."""
    return [config.model_copy(update={"d_values": [d]}) for d in sorted(config.d_values)[::-1]]


def fcn_search(d: int, config: Config) -> dict[str, Any]:
    """``w*`` at ``d`` (A7.6's search, ``xor_thresholds.fcn_xor``) plus probes at ``2 w*`` and
    ``4 w*`` (``xor_thresholds.confirm``): a bootstrap draw failing at ``w*`` then finds its
    threshold above instead of reading "not reached"."""
    from ...train.fcn import train_xor
    from .. import xor_thresholds as xt

    def evaluate(width: int) -> np.ndarray:
        fcn = XorFCNConfig(
            d=d,
            width=width,
            seeds=config.seeds,
            seed=config.seed,
            steps=config.steps,
            dtype=config.dtype,
            test_samples=xt.TEST_SAMPLES,
            success_tol=xt.SIGN_TOL,
        )
        return train_xor(fcn).success.numpy()

    return search_record(d, evaluate, config.width_limit)


def run(config: Config) -> list[Record]:
    return [
        {"seed": config.seed, "steps": config.steps, **fcn_search(d, config)}
        for d in config.d_values
    ]


def search_record(d: int, evaluate: Callable[[int], np.ndarray], limit: int) -> Record:
    """The search for ``w*`` at ``d`` with ``evaluate(width)`` (each replica's success):
    doubling from 2, then bisection (``search.smallest_passing``), plus probes at ``2 w*`` and
    ``4 w*`` (``xor_thresholds.confirm``) so that a bootstrap draw failing at ``w*`` finds its
    threshold above instead of reading "not reached"; the record ``run`` stores."""
    from ...models.mlp import count
    from ...train.search import smallest_passing
    from ..xor_thresholds import TARGET, confirm

    star, probes = smallest_passing(evaluate, TARGET, 2, limit)
    probes = confirm(evaluate, star, probes, limit)
    at = next((p for p in probes if p.size == star), None)
    low, high = (None, None) if at is None else stats.wilson(at.successes, at.trials)
    return {
        "model": "fcn",
        "d": d,
        "width_star": star,
        "params": None if star is None else count(d, star),
        "success_rate": None if at is None else at.rate,
        "success_low": low,
        "success_high": high,
        "probes": [p.as_record() for p in probes],
    }


# --- cost and memory -------------------------------------------------------------------------


WIDTH_GUESS = 3
"""The width the search probes around under the paper's law (three probes: 2, 4, 3)."""


def work(c: costs.Config) -> float:
    """Three probes per ``d`` of at most ``steps`` minibatch steps on ``seeds`` nets (each
    ``seeds x d x width`` plus a step's fixed cost, ``separation_xor.run.FCN_STEP``)."""
    from ..separation_xor.run import FCN_STEP

    per_step = sum(c["seeds"] * d * WIDTH_GUESS + FCN_STEP for d in c["d_values"])
    return float(3 * c["steps"] * per_step)


def peak(c: costs.Config) -> float:
    """The widest probe's training (``train.memory.fcn_peak`` at ``width_limit``) at the
    largest ``d``."""
    fcn = XorFCNConfig(
        d=max(c["d_values"]), width=c["width_limit"], seeds=c["seeds"], dtype=c["dtype"]
    )
    return fcn_peak(fcn)
