"""The query-vector model on sparse parity: the one step, its training and the authors' earlier
model, with the automatic step sizes (SPEC A2, A5, A6)."""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from ..core.validate import distinct_indices, positive_finite, require
from .base import (
    MAX_CUBE_D,
    MAX_DATA_ELEMENTS,
    MAX_EXACT_HEADS,
    AttentionName,
    Count,
    Device,
    DType,
    Init,
    LibraryConfig,
    Seed,
    Word,
)

ETA_SCALE = 16.0
"""Default constant of the automatic step size of one step (``default_eta``)."""


def default_eta(d: int, scale: float = ETA_SCALE) -> float:
    """``eta = scale * d^2 * ln d`` (SPEC A5): the initial gradient is of order ``1/d^2``."""
    return positive_finite("eta scale", scale) * d**2 * math.log(d)


def default_train_eta(d: int, k: int, scale: float) -> float:
    """``scale * d^k * ln d``: SPEC A5's step size for ``k = 2``; the gradient of the scores at a
    near-uniform start is of order ``d^-k`` (the cross term is a product of ``k`` weights)."""
    return default_eta(d, scale) * float(d) ** (k - 2)


class QueryHeadsConfig(LibraryConfig):
    """The k-head query-vector model on k-sparse parity: what the one step and training share
    (SPEC A1, A2, A6)."""

    d: int = Field(ge=2, description="Input length (number of positions).")
    m: Count = Field(32, description="Embedding width; trainable parameters = heads * m.")
    k: Count = Field(2, description="Support size = number of heads (2 = XOR).")
    seeds: Count = Field(64, description="Number of independent replicas.")
    seed: Seed = 0
    attention: AttentionName = Field("softmax", description="Attention map.")
    eta: float | None = Field(None, gt=0, description="Step size (None: automatic).")
    eta_scale: float = Field(
        ETA_SCALE, gt=0, title="eta scale", description="Constant of the automatic step size."
    )
    init: Init = Field("antisymmetric", description="Initialization of the query vectors.")
    sign: Literal[-1, 1] = Field(-1, description="Label sign: y = sign * prod_{i in I} x_i.")
    noise: float = Field(0.0, ge=0, lt=0.5, description="Label-flip probability in [0, 0.5).")
    success_tol: float = Field(
        0.1, gt=0, title="success tolerance", description="Success: certified error <= this."
    )
    dtype: DType = Field("float64", description="Floating-point precision.")
    device: Device = Field("auto", description="Where to compute (auto: CUDA when available).")

    @model_validator(mode="after")
    def _heads_fit(self) -> QueryHeadsConfig:
        require(self.k <= self.d, f"k must be <= d={self.d}, got {self.k}")
        require(
            self.k <= MAX_EXACT_HEADS,
            f"k must be <= {MAX_EXACT_HEADS} (exact population loss), got {self.k}",
        )
        return self


class OneStepConfig(QueryHeadsConfig):
    """One population (or empirical) gradient step for ``seeds`` replicas (SPEC A5)."""

    eta: Annotated[float | None, Word("auto")] = Field(
        None, gt=0, description="Step size; None: eta_scale * d^2 * ln d."
    )
    samples: Annotated[int | None, Word("population")] = Field(
        None, ge=1, description="None: the exact population gradient; N: empirical, N samples."
    )
    gradient: Literal["exact-samples", "surrogate"] = Field(
        "exact-samples",
        description="With samples N: draw the N inputs, or the Gaussian surrogate (sparse XOR).",
    )
    support: tuple[int, ...] | None = Field(
        None, description="Fixed support (default: uniform per replica)."
    )
    replica_batch: int | None = Field(
        None, ge=1, title="replica batch", description="Replicas per batch (None: automatic)."
    )

    @field_validator("support", mode="before")
    @classmethod
    def _support_tuple(cls, value: Any) -> Any:
        return tuple(value) if isinstance(value, list) else value

    @model_validator(mode="after")
    def _support_fits(self) -> OneStepConfig:
        if self.support is not None:
            distinct_indices("support", self.support, self.d, self.k)
        return self

    def step_size(self) -> float:
        return self.eta if self.eta is not None else default_eta(self.d, self.eta_scale)


ADAM_LR = 0.05
"""Adam's default step (*choice*): the query vectors have unit norm at initialization."""
DEFAULT_ETA_SCALE = 2.0**-4
"""gd's default ``eta = eta_scale * d^k * ln d`` (*choice*, measured): the best step size of the
``kparity-steps`` standard grid (``2^j``, ``j = -6, -4, ..., 4``) at ``k = 3`` for six of the seven
``d = 16 ... 1024`` (median 2-3 steps to success; ``2^-2`` at ``d = 32``)."""


class XorTrainConfig(QueryHeadsConfig):
    """Training of ``seeds`` replicas for ``steps`` steps (``train.xor_train``, SPEC A6)."""

    seeds: Count = Field(16, description="Number of independent replicas.")
    steps: Count = Field(200, description="Training steps.")
    gradient: Literal["population", "fresh", "fixed"] = Field(
        "population",
        description="population: the exact gradient; fresh: samples new inputs a step; fixed: "
        "one training set.",
    )
    samples: int | None = Field(
        None, ge=1, description="fresh: inputs per step; fixed: training-set size."
    )
    cube_fraction: float | None = Field(
        None,
        gt=0,
        lt=1,
        title="cube fraction",
        description="Train (fixed) on this share of all 2^d inputs and test on the rest.",
    )
    batch: int | None = Field(
        None, ge=1, description="fixed: mini-batch rows per step (default: the whole set)."
    )
    optimizer: Literal["gd", "adam"] = Field("gd", description="Update rule.")
    eta: Annotated[float | None, Word("auto")] = Field(
        None, gt=0, description=f"Step size; None: gd eta_scale * d^k * ln d, adam {ADAM_LR}."
    )
    eta_scale: float = Field(
        DEFAULT_ETA_SCALE,
        gt=0,
        title="eta scale",
        description="Constant of the automatic gd step size.",
    )
    adam_eps: float = Field(1e-8, gt=0, title="adam eps", description="Adam's epsilon.")
    stop_at_success: bool = Field(False, description="Stop once every replica has succeeded.")

    @model_validator(mode="after")
    def _data_fits(self) -> XorTrainConfig:
        if self.cube_fraction is not None:
            require(
                self.gradient != "fresh",
                "a cube fraction needs gradient 'fixed' (train on it) or 'population' (test only)",
            )
            require(self.d <= MAX_CUBE_D, f"a cube split needs d <= {MAX_CUBE_D}, got d={self.d}")
            require(self.samples is None, "give either samples or a cube fraction, not both")
            require(self.noise == 0, "a cube split uses clean labels: noise must be 0")
            require(0 < _train_rows(self) < 2**self.d, "the cube split leaves an empty side")
        elif self.gradient != "population":
            require(
                self.samples is not None,
                f"gradient {self.gradient!r} needs samples (or, for 'fixed', a cube fraction)",
            )
        else:
            require(self.samples is None, "the population gradient takes no samples")
        rows = _train_rows(self) if self.gradient == "fixed" else (self.samples or 0)
        require(
            self.seeds * rows * self.d <= MAX_DATA_ELEMENTS,
            f"seeds * samples * d must be <= {MAX_DATA_ELEMENTS} (the data is held at once), got "
            f"{self.seeds * rows * self.d}; use fewer seeds or samples",
        )
        require(
            self.batch is None or self.gradient == "fixed", "batch applies to gradient 'fixed' only"
        )
        return self

    def step_size(self) -> float:
        if self.eta is not None:
            return self.eta
        if self.optimizer == "adam":
            return ADAM_LR
        return default_train_eta(self.d, self.k, self.eta_scale)


def _train_rows(config: XorTrainConfig) -> int:
    """Rows of the fixed training set (``0`` for the other gradients)."""
    if config.cube_fraction is not None:
        return round(config.cube_fraction * 2**config.d)
    return config.samples if config.samples is not None else 0


class V1Config(LibraryConfig):
    """The authors' earlier k-parity model (``train.kparity_v1``), with their published
    defaults: ``n = 16``, ``k = 3``, 2000 epochs, 80% of the cube to train."""

    n: int = Field(16, ge=2, description="Input length n (the whole cube of 2^n inputs is used).")
    k: Count = Field(3, description="Support size = number of heads.")
    seeds: Count = Field(4, description="Number of independent replicas.")
    seed: Seed = Field(0, description="Base seed (same split and support as xor train).")
    epochs: Count = Field(2000, description="Full-batch Adam epochs.")
    lr: float = Field(0.01, gt=0, description="Adam's step size.")
    train_fraction: float = Field(
        0.8,
        gt=0,
        lt=1,
        title="train fraction",
        description="Share of the 2^n inputs to train on; the rest is tested.",
    )
    target: float | None = Field(
        None, gt=0, le=1, description="Stop once every replica's test accuracy reaches this."
    )

    @model_validator(mode="after")
    def _cube_fits(self) -> V1Config:
        require(self.k <= self.n, f"k must be <= n={self.n}, got {self.k}")
        require(self.n <= MAX_CUBE_D, f"n must be <= {MAX_CUBE_D} (the whole cube), got {self.n}")
        return self
