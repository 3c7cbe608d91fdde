"""SPEC Part G, item 1 — linear classifiers on fixed embeddings need a dimension exponential in
``k`` (claim A7.7; the paper, seed 000: "linear classifiers with fixed embeddings fail to learn
this task unless their embedding dimension scales exponentially with k").

The model: a linear readout on ``N`` frozen random features ``phi_j(x) = relu(w_j . x / sqrt(d) +
b_j)``, ``w_j ~ N(0, I_d)``, ``b_j ~ N(0, 1)`` (``features="step"``: ``1{w_j . x / sqrt(d) + b_j >
0}``), fitted by exact least squares over the whole cube ``{-1,+1}^d`` (the population optimum of
a linear readout, ``d <= 16``), so a failure is the embedding's, not the training's
(``exact.fixed_features``). The target: the ``k``-sparse parity ``y = prod_{a in S} x_a``, ``S``
uniform per replica. Success: A7.6's one definition, sign error ``<= 1%``, evaluated exactly
over the cube. Per replica ``N_r`` is the smallest ``N`` (features nested: the first ``N`` of one
draw) whose readout succeeds, all ``N`` at once from one incremental QR (features that are zero
or affine on the whole cube add nothing, so ``N_r`` may exceed ``2^d`` at small ``d``).
``N*(d, k)``: the smallest ``N``
reached by ``>= 90%`` of replicas. The number of Walsh functions of degree ``<= k``, ``sum_{j <=
k} C(d, j) ~ d^k / k!``, is drawn beside it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from ..exact import fixed_features as ff
from . import costs, plotting
from .base import Experiment, ExperimentConfig, InputLength, Positive, Record, register
from .xor_fixed_embeddings_verdict import CRITERION, analyse, hypotheses, verdict

MAX_D = 16
"""The largest ``d`` whose cube is enumerated."""
MAX_K = 8
MAX_ELEMENTS = 1 << 27
"""The most entries (float64, 1 GiB) of one job's orthonormal columns: ``2^d x min(2^d,
n_limit)``."""

__all__ = ["CRITERION", "Config", "EXPERIMENT", "figure", "run", "split", "verdict"]


class Config(ExperimentConfig):
    """Per ``(d, k)``: every replica's ``N_r`` (the fewest nested random features whose exact
    least-squares readout has sign error ``<= target_error`` over the cube) and ``N*(d, k)``, the
    smallest ``N`` reached by ``>= target_rate`` of the replicas.

    Criterion (a claim, SPEC Part G, item 1; criterion version 1). Per ``k``, the exponent
    ``alpha_k`` of ``N* = c d^alpha_k`` (log-log least squares over the ``d``'s, at least 3),
    with a bootstrap 95% interval (replicas resampled in every ``(d, k)``, ``N*`` and the fits
    recomputed). The paper ("exponentially with k": ``N* ~ (c d)^k``, the ``d``-exponent grows
    like ``k``): **reproduced** when the lower bound of ``alpha_kmax - alpha_kmin`` is ``>= 0.5
    (kmax - kmin)`` (half the ``d^k`` law's growth) and the point estimates of ``alpha``
    increase with ``k``. The rival (polynomial in ``k``: ``N* = c d^alpha k^beta``, one
    ``alpha`` for every ``k``): **not reproduced** when its upper bound is ``< 0.25 (kmax -
    kmin)``. Otherwise **inconclusive**, also with fewer than 2 ``k``'s, fewer than 3 ``d``'s
    per ``k``, fewer than 10 replicas per ``(d, k)`` (the 90% quantile of fewer is their
    largest ``N_r``, whose bootstrap cannot exceed it), or an ``N*`` (or its upper bound) beyond
    the cap ``n_limit``. Reported,
    not decided on: ``ln N*`` against ``k`` at the largest ``d`` and its slope per unit ``k``
    (the paper's law: about ``ln d``), and ``N*`` over the Walsh functions of degree ``<= k``.
    """

    d_values: list[InputLength] = Field(
        default=[6, 8, 10], min_length=1, max_length=16, description="Input lengths d (<= 16)."
    )
    k_values: list[Positive] = Field(
        default=[1, 2, 3], min_length=1, max_length=MAX_K, description="Support sizes k (<= d)."
    )
    seeds: int = Field(default=16, ge=2, le=4096, description="Replicas per (d, k).")
    n_limit: int = Field(
        default=8192, ge=1, le=1 << 16, description="Most features tried (beyond: unreached)."
    )
    features: Literal["relu", "step"] = Field(
        default="relu", description="relu(w.x/sqrt(d) + b), or the step 1{w.x/sqrt(d) + b > 0}."
    )
    target_error: float = Field(
        default=0.01, ge=0.0, lt=0.5, description="Success: sign error over the cube <= this."
    )
    target_rate: float = Field(
        default=0.9, gt=0.0, le=1.0, description="N*: reached by at least this share of replicas."
    )

    @model_validator(mode="after")
    def _sizes(self):  # noqa: ANN202
        for name in ("d_values", "k_values"):
            values = getattr(self, name)
            if len(set(values)) != len(values):
                raise ValueError(f"{name} must be distinct, got {values}")
        if max(self.d_values) > MAX_D:
            raise ValueError(f"d_values must be <= {MAX_D} (the cube), got {max(self.d_values)}")
        if max(self.k_values) > min(self.d_values):
            raise ValueError(
                f"k_values must be <= every d, got k={max(self.k_values)} and "
                f"d={min(self.d_values)}"
            )
        d = max(self.d_values)
        if 2**d * min(2**d, self.n_limit) > MAX_ELEMENTS:
            raise ValueError(
                f"n_limit must be <= {MAX_ELEMENTS >> d} at d={d} (2^d x n_limit <= 2^27 "
                f"entries), got {self.n_limit}"
            )
        return self


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


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    """Left: ``N*(d)`` per ``k`` (bootstrap 95%) with the fitted ``c d^alpha_k`` and the Walsh
    functions of degree ``<= k`` (dashed). Right: ``N*`` against ``k`` at every ``d`` (log
    scale: a straight line is exponential in ``k``)."""
    path = out / "fixed_embeddings.png"
    series = analyse(records, config)
    with plotting.figure(path, ncols=2) as (_, (left, right)):
        for i, (k, s) in enumerate(series.items()):
            color = f"C{i}"
            lows, highs = zip(*(s.interval(j) for j in range(len(s.d))), strict=True)
            _bars(left, s.d, s.n, lows, highs, color, f"k={k}, alpha={s.alpha:.2f}")
            grid = np.geomspace(s.d.min(), s.d.max(), 32)
            if math.isfinite(s.alpha):
                fitted = np.polyfit(np.log(s.d), np.log(s.n), 1)
                left.plot(grid, np.exp(np.polyval(fitted, np.log(grid))), "-", color=color, lw=0.8)
            walsh = [ff.walsh_count(int(d), k) for d in s.d]
            left.plot(s.d, walsh, "--", color=color, lw=0.8)
        left.set_xscale("log", base=2)
        left.set_yscale("log", base=2)
        ds = sorted({int(d) for s in series.values() for d in s.d})
        left.set_xticks(ds, [str(d) for d in ds], minor=False)
        left.minorticks_off()
        left.set_xlabel("d (dashed: Walsh functions of degree <= k)")
        left.set_ylabel(f"N* (>= {config.target_rate:g} of replicas), bootstrap 95%")
        left.legend(fontsize=7)
        _by_k(right, series)
    return [path]


def _bars(ax, xs, values, lows, highs, color: str, label: str) -> None:
    v = np.asarray(values, dtype=float)
    shown = np.isfinite(v)
    hi = np.where(np.isfinite(highs), highs, 2 * v)
    ax.errorbar(
        np.asarray(xs, dtype=float)[shown],
        v[shown],
        yerr=plotting.bar_lengths(v[shown], np.asarray(lows)[shown], hi[shown]),
        fmt="o",
        capsize=2,
        color=color,
        label=label,
    )


def _by_k(ax, series) -> None:
    ds = sorted({float(d) for s in series.values() for d in s.d})
    ks = list(series)
    for i, d in enumerate(ds):
        rows = [(k, s, int(np.nonzero(s.d == d)[0][0])) for k, s in series.items() if d in s.d]
        values = [s.n[j] for _, s, j in rows]
        lows, highs = zip(*(s.interval(j) for _, s, j in rows), strict=True)
        _bars(ax, [k for k, _, _ in rows], values, lows, highs, f"C{i}", f"d={int(d)}")
        ax.plot([k for k, _, _ in rows], values, "-", color=f"C{i}", lw=0.8)
    if ds:
        ax.plot(ks, [ff.walsh_count(int(ds[-1]), k) for k in ks], "k--", lw=0.8, label="Walsh")
    ax.set_yscale("log")
    ax.set_xticks(ks)
    ax.set_xlabel("k (dashed: Walsh functions of degree <= k at the largest d)")
    ax.set_ylabel("N*, bootstrap 95%")
    ax.legend(fontsize=7)


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


EXPERIMENT = register(
    Experiment(
        name="fixed-embeddings",
        claim="A7.7",
        title="Fixed embeddings need a dimension exponential in k",
        paper="In contrast, linear classifiers with fixed embeddings fail to learn this task "
        "unless their embedding dimension scales exponentially with k.",
        config_type=Config,
        run=run,
        figure=figure,
        verdict=verdict,
        split=split,
        hypotheses=hypotheses,
        tuned_on=(0, 3),
        work=work,
        searches=True,
        peak=peak,
        presets={
            "quick": {"d_values": [6, 8, 10], "k_values": [1, 2, 3], "seeds": 12},
            "standard": {"d_values": [8, 9, 10, 11, 12, 13], "k_values": [1, 2, 3], "seeds": 16},
            "full": {
                "d_values": [8, 9, 10, 11, 12, 13],
                "k_values": [1, 2, 3, 4],
                "seeds": 24,
            },
        },
    )
)
