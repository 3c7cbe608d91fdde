"""A7.7's config: the sizes, the replicas, the feature kind and the success bound (SPEC Part G,
item 1), and its presets."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from ..base import ExperimentConfig, InputLength, Positive

MAX_D = 16
"""The largest ``d`` whose cube is enumerated."""
MAX_K = 8
MAX_ELEMENTS = 1 << 27
"""The most entries (float64, 1 GiB) of one job's orthonormal columns: ``2^d x min(2^d,
n_limit)``."""


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


PRESETS = {
    "quick": {"d_values": [6, 8, 10], "k_values": [1, 2, 3], "seeds": 12},
    "standard": {"d_values": [8, 9, 10, 11, 12, 13], "k_values": [1, 2, 3], "seeds": 16},
    "full": {
        "d_values": [8, 9, 10, 11, 12, 13],
        "k_values": [1, 2, 3, 4],
        "seeds": 24,
    },
}
