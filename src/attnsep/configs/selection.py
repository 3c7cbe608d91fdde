"""The selector's training and the ``m_p*`` search's constants (SPEC B3, B5.2, C)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from ..core.validate import require
from .base import Count, DType, LibraryConfig, PEKind, PEMode, Seed, Trainable


def _subset_fits(q: int, T: int) -> None:
    require(q <= T, f"q must be <= T (q={q}, T={T})")


POSITION_LR_PER_DIM = 6 / 128
"""Learning rate per PE dimension when training the position block alone: the scale of
``W = alpha I`` grows like ``lr / m_p``, so ``lr = POSITION_LR_PER_DIM * m_p`` keeps the pace
(measured: converged in 300 population steps for ``T <= 80``, ``m_p <= 256``)."""


class SelectionTrainConfig(LibraryConfig):
    """Training the selector (``train.selection``, SPEC B3), with measured defaults (the
    optimizer and rate are discussed in that module's docstring)."""

    d: Count = Field(10, description="Token dimension.")
    T: Count = Field(20, description="Training sequence length.")
    q: Count = Field(3, description="Subset size.")
    pe: PEMode = Field("stochastic", description="Positional encoding.")
    pe_dim: Count = Field(128, description="Positional encoding width m_p.")
    pe_kind: PEKind = Field("sphere", description="Law of an encoding.")
    fixed_positions: int | None = Field(
        None, ge=1, description="Rows of a fixed PE table (None: T)."
    )
    trainable: Trainable = Field("full", description="Trained block of W.")
    objective: Literal["sgd", "population"] = Field(
        "sgd", description="sgd: sampled loss; population: exact over the tokens."
    )
    pe_draws: Literal["law", "explicit"] = Field(
        "law",
        description="Stochastic PE: draw only what a step depends on (law, exact in "
        "distribution) or every encoding (explicit).",
    )
    products: DType = Field(
        "float64",
        description="Precision of a law-drawn step's two products (W and its updates stay "
        "float64).",
    )
    steps: Count = Field(1500, description="Training steps.")
    batch: Count = Field(256, description="Fresh sequences per step.")
    lr: float = Field(3.0, gt=0, description="SGD rate, decays linearly to 0.")
    seeds: Count = Field(1, description="Replicas E, trained at once.")
    seed: Seed = 0

    @model_validator(mode="after")
    def _fits(self) -> SelectionTrainConfig:
        _subset_fits(self.q, self.T)
        require(
            self.products == "float64" or (self.pe == "stochastic" and self.pe_draws == "law"),
            "products 'float32' needs pe 'stochastic' with pe_draws 'law' (the steps it speeds "
            f"up), got pe {self.pe!r}, pe_draws {self.pe_draws!r}",
        )
        if self.fixed_positions is not None:
            require(
                self.fixed_positions >= self.T,
                f"fixed_positions must be an integer >= {self.T}, got {self.fixed_positions!r}",
            )
        require(
            self.objective == "sgd" or self.trainable == "position",
            "objective 'population' needs trainable 'position' (a trainable content block "
            "makes the logits depend on the tokens)",
        )
        return self


FAMILY_SAMPLES = 4096
"""Sequences per draw of the ``W = αI`` family's loss (``exact.family``): the best loss's
standard error is then about 1.5% of the loss."""
SELECTION_TARGET = 0.2
"""``m_p*`` success (``selection_threshold``): loss at most this fraction of the
uniform-attention loss ``d (T − q) / (q T)``."""
SELECTION_RIVAL_MIN_ALPHA = 0.3
"""The rival of the ``m_p*`` held-out test (``selection_threshold``): ``c T^alpha`` with
``alpha >= 0.3``."""
