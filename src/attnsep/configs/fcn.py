"""The fully-connected baselines: what they share and each task's config (SPEC A7.6, B5.4)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from ..core.validate import require
from .base import Count, Device, DType, LibraryConfig, Seed
from .selection import _subset_fits

SGD_LR, SGD_LR_TIMES_WIDTH, FCN_ADAM_LR = 0.1, 25.0, 1e-2
"""XOR defaults: SGD at ``min(SGD_LR, SGD_LR_TIMES_WIDTH / width)``, Adam at ``FCN_ADAM_LR``
(``train.fcn.xor``'s module docstring)."""
Optimizer = Annotated[Literal["adam", "sgd"], Field(description="Optimizer.")]


def default_xor_lr(optimizer: str, width: int) -> float:
    """The FCN's XOR learning rate when none is given."""
    return FCN_ADAM_LR if optimizer == "adam" else min(SGD_LR, SGD_LR_TIMES_WIDTH / width)


class FCNConfig(LibraryConfig):
    """What the fully-connected baselines share (``train.fcn``, SPEC A7.6, B5.4); a task's
    config adds its own fields, the defaults that differ, ``task`` and ``rate``."""

    width: Count = Field(description="Hidden width.")
    depth: Count = Field(1, description="Hidden layers.")
    seeds: Count = Field(description="Independent replicas.")
    first_replica: int = Field(0, ge=0, description="Index of the first replica.")
    seed: Seed = 0
    steps: Count = Field(description="Training steps.")
    batch: Count = Field(256, description="Samples per step.")
    optimizer: Optimizer
    samples: int | None = Field(
        None, ge=1, description="None: fresh samples every step; n: one fixed set of n."
    )
    dtype: DType = Field("float64", description="Floating-point precision.")
    device: Device = Field("cpu", description="Where to compute (auto: CUDA when available).")

    @property
    def rate(self) -> float:
        """The learning rate used; each task's config says how it is chosen."""
        raise NotImplementedError

    @property
    def inputs(self) -> int:
        """The length of a net's input; each task's config says what it is."""
        raise NotImplementedError

    @property
    def evaluation_rows(self) -> int:
        """Inputs per replica of the evaluation after training."""
        raise NotImplementedError


class XorFCNConfig(FCNConfig):
    """A two-layer ReLU net (``depth`` hidden layers) on k-sparse parity (SPEC A1, A7.6)."""

    d: int = Field(64, ge=2, description="Input length.")
    width: Count = Field(32, description="Hidden width; parameters = width*(d+2)+1.")
    k: Count = Field(2, description="Support size.")
    noise: float = Field(0.0, ge=0, lt=0.5, description="Label-flip probability in [0, 0.5).")
    seeds: Count = Field(8, description="Independent replicas.")
    steps: Count = Field(
        2000, description="Most steps (a replica stops once perfect on validation)."
    )
    lr: float | None = Field(
        None,
        gt=0,
        description=f"Learning rate [default: sgd min({SGD_LR:g}, {SGD_LR_TIMES_WIDTH:g}/width), "
        f"adam {FCN_ADAM_LR:g}].",
    )
    optimizer: Optimizer = "sgd"
    loss: Literal["mse", "hinge"] = Field("mse", description="Training loss on the labels.")
    early_stop: bool = Field(True, description="Stop a replica once perfect on validation.")
    test_samples: Count = Field(8192, description="Fresh test samples per replica.")
    success_tol: float = Field(0.01, ge=0, le=1, description="Success: test sign error <= this.")

    @model_validator(mode="after")
    def _support_fits(self) -> XorFCNConfig:
        require(self.k <= self.d, f"k must be <= d={self.d}, got {self.k}")
        return self

    @property
    def rate(self) -> float:
        """The learning rate used: ``lr``, or the default for the optimizer and width."""
        return default_xor_lr(self.optimizer, self.width) if self.lr is None else self.lr

    @property
    def inputs(self) -> int:
        return self.d

    @property
    def evaluation_rows(self) -> int:
        return self.test_samples


class SelectionFCNConfig(FCNConfig):
    """An MLP on ``[vec X ; 1_y]`` (length ``T·d + T``) with output in ``R^d`` (SPEC B5.4)."""

    d: Count = Field(4, description="Token dimension.")
    T: Count = Field(8, description="Sequence length.")
    q: Count = Field(2, description="Subset size.")
    width: Count = Field(64, description="First-layer width.")
    seeds: Count = Field(4, description="Replicas.")
    steps: Count = Field(3000, description="Training steps.")
    lr: float = Field(3e-3, gt=0, description="Adam learning rate.")
    optimizer: Optimizer = "adam"
    eval_samples: int = Field(4096, ge=2, description="Sequences of the evaluation set.")

    @model_validator(mode="after")
    def _subset_fits(self) -> SelectionFCNConfig:
        _subset_fits(self.q, self.T)
        return self

    @property
    def rate(self) -> float:
        return self.lr

    @property
    def inputs(self) -> int:
        """``vec X`` and the subset's indicator: ``T·d + T``."""
        return self.T * self.d + self.T

    @property
    def evaluation_rows(self) -> int:
        return self.eval_samples
