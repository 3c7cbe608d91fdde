"""A7.7's jobs and records: one ``(d, k)`` a job, each replica's threshold ``N_r`` from one
incremental QR (``exact.fixed_features``), and the cost of a job (SPEC Part G, item 1)."""

from __future__ import annotations

import math

from ...exact import fixed_features as ff
from .. import costs
from ..base import Record
from .config import Config


def split(config: Config) -> list[Config]:
    """One job per ``(d, k)``: each replica's draws are named by ``(seed, d, k, replica)``."""
    return [
        config.model_copy(update={"d_values": [d], "k_values": [k]})
        for k in config.k_values
        for d in config.d_values
    ]


def run(config: Config) -> list[Record]:
    """Per ``(d, k)`` the replicas' ``N_r`` (``None``: not reached by the cap), the sign error
    and mean squared error of the readout there, and the supports."""
    out = []
    for k in config.k_values:
        for d in config.d_values:
            cap = config.n_limit
            found = [
                ff.replica_threshold(
                    ff.Replica(config.seed, d, k, r), cap, config.features, config.target_error
                )
                for r in range(config.seeds)
            ]
            out.append(
                {
                    "d": d,
                    "k": k,
                    "features": config.features,
                    "seeds": config.seeds,
                    "n_cap": cap,
                    "walsh": ff.walsh_count(d, k),
                    "thresholds": [t.n for t, _ in found],
                    "sign_error": [t.error for t, _ in found],
                    "mse": [t.mse for t, _ in found],
                    "supports": [s.tolist() for _, s in found],
                }
            )
    return out


# --- cost (``attnsep reproduce --plan``): the work of one job ---------------------------------


def work(c: costs.Config) -> float:
    """Per replica the incremental QR up to ``N_r`` (``~ 4 * 2^d * N^2``), the features
    (``2^d * d * N``) and each block's fixed part (its QR, prefix sums and sign errors: about
    ``14 * BLOCK^2`` a point, measured), ``N`` taken as 3 times the Walsh functions of degree
    ``<= k`` (the paper's law), within the cap."""
    total = 0.0
    for d in c["d_values"]:
        for k in c["k_values"]:
            n = min(c["n_limit"], 3 * ff.walsh_count(d, k))
            rank = min(2**d, n) + ff.BLOCK
            blocks = math.ceil(n / ff.BLOCK)
            per_point = 4.0 * rank * rank + d * n + 14 * ff.BLOCK**2 * blocks
            total += c["seeds"] * 2**d * per_point
    return total


def peak(c: costs.Config) -> float:
    """Bytes of one job: its orthonormal columns (``2^d x cap``), a few feature blocks and the
    cube (float64)."""
    d = max(c["d_values"])
    return 8.0 * 2**d * (min(2**d, c["n_limit"]) + 8 * ff.BLOCK + d) + (1 << 24)
