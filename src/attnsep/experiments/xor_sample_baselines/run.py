"""A7.5c's jobs and records: one method and ``d`` a job, each replica's sample count by
Gaussian elimination, pair search or the online-SGD MLP, and the cost of a job (SPEC Part G,
item 2b)."""

from __future__ import annotations

import math

import numpy as np

from ...core.rng import stream_seed
from ...exact import gf2
from .. import costs
from ..base import Record
from .config import Config


def split(config: Config) -> list[Config]:
    """One job per method and ``d``; the MLP's largest first."""
    jobs = [{"methods": ["mlp"], "d_values": [d]} for d in sorted(config.d_values)[::-1]]
    jobs = [j for j in jobs if "mlp" in config.methods]
    exact = [m for m in config.methods if m != "mlp"]
    jobs += [{"methods": exact, "d_values": [d]} for d in config.d_values] if exact else []
    return [config.model_copy(update=j) for j in jobs]


def _support(seed: int, d: int, replica: int) -> tuple[int, int]:
    rng = np.random.default_rng(stream_seed(seed, "gf2-support", d, replica))
    i, j = sorted(rng.choice(d, size=2, replace=False).tolist())
    return i, j


def exact_record(config: Config, d: int, method: str) -> Record:
    """``seeds`` replicas of ``method`` at ``d``, replica ``r`` from stream ``(seed, method, d,
    r)``."""
    counts, recovered = [], 0
    for r in range(config.seeds):
        rng = np.random.default_rng(stream_seed(config.seed, method, d, r))
        support = _support(config.seed, d, r)
        if method == "elimination":
            n, ok = gf2.elimination_samples(rng, d, support)
            recovered += ok
        else:
            n, ok = gf2.pair_samples(rng, d, support), True
            recovered += ok
        counts.append(int(n))
    return {"method": method, "d": d, "samples": counts, "recovered": recovered}


def mlp_record(config: Config, d: int) -> Record:
    from ...train.fcn_online import OnlineSetup, samples_to_success

    setup = OnlineSetup(
        d=d,
        width=config.width,
        replicas=config.mlp_seeds,
        seed=config.seed,
        batch=config.batch,
        lr=min(config.lr, config.lr_scale * config.batch / d),
        max_steps=config.max_samples // config.batch,
        checks_per_octave=config.checks_per_octave,
        check_samples=config.check_samples,
    )
    result = samples_to_success(setup)
    return {
        "method": "mlp",
        "d": d,
        "samples": [int(n) if math.isfinite(n) else None for n in result.samples],
        "budget": result.budget,
        "test_error": [float(e) for e in result.test_error],
        "check_error": [float(e) for e in result.check_error],
    }


def run(config: Config) -> list[Record]:
    out = []
    for d in config.d_values:
        for method in config.methods:
            out.append(
                mlp_record(config, d) if method == "mlp" else exact_record(config, d, method)
            )
    return out


def work(c: costs.Config) -> float:
    """Elimination: ``seeds x d^2`` bit operations a ``d``; pair search ``seeds x d^2 log d``;
    the MLP ``mlp_seeds x`` about ``30 d`` samples a replica (the measured ``n*``), each ``d x
    width`` multiply-adds, plus its checks."""
    total = 0.0
    for d in c["d_values"]:
        if "elimination" in c["methods"]:
            total += c["seeds"] * d * d * 20
        if "pairs" in c["methods"]:
            total += c["seeds"] * d * d * costs.ln(d) * 20
        if "mlp" in c["methods"]:
            total += c["mlp_seeds"] * (30 * d * d * c["width"] + 100 * c["check_samples"] * d)
    return float(total)


def peak(c: costs.Config) -> float:
    """The MLP's held-out and test inputs (float64) of every replica, or pair search's
    consistency table, at the largest ``d``."""
    d = max(c["d_values"])
    mlp = 8.0 * c["mlp_seeds"] * (c["check_samples"] + 8192 + 4 * c["batch"]) * d
    pairs = 4.0 * (gf2.information_floor(d) + 9) * d * d
    return max(mlp, pairs) + 8.0 * c["mlp_seeds"] * 4 * d * c["width"]
