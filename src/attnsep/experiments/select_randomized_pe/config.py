"""B5.3d's config: the training lengths, test lengths, PE width and steps (SPEC B5.3; Part G,
item B5.3d), and its presets."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from ...configs import FAMILY_SAMPLES, POSITION_LR_PER_DIM, PEMode, Seed
from ..select_common import ScaledTraining

Length = Annotated[int, Field(ge=2, le=65_536)]
PES: tuple[PEMode, ...] = ("stochastic", "fixed")


class Config(ScaledTraining):
    """Per PE mode and seed: train on lengths uniform in ``[shortest, T]`` (``T`` the longest,
    40 as in the protocol), evaluate at every ``eval_lengths`` on the fixed set of ``eval_size``
    sequences per length (exact over the tokens).

    Reported (a finding, SPEC Part G, item B5.3d; no verdict): per mode and test length the mean
    over seeds of the loss relative to uniform attention, ``d (T' − q) / (q T')``, with the
    interval ``mean ± 2 s.e.``; the ``W = αI`` family at the trained ``α`` relative to uniform
    and stochastic PE over it (``± 2 s.e.`` of the per-seed ratios); fixed / stochastic per
    test length; the trained ``α`` and ``cos(W, W*)`` of stochastic PE.
    """

    d: int = Field(default=10, ge=1, le=1024)
    T: int = Field(default=40, ge=2, le=4096)
    """The longest training length (40 in the protocol)."""
    q: int = Field(default=3, ge=1, le=1024)
    shortest: int | None = Field(default=None, ge=1, le=4096)
    """The shortest training length; ``None``: ``q + 1``."""
    seeds: list[Seed] = Field(default=[0, 1, 2, 3], min_length=1, max_length=256)
    steps: int = Field(default=600, ge=1, le=100_000)
    batch_per_dim: float = Field(default=4.0, gt=0, le=64)
    lr_per_dim: float = Field(default=3 * POSITION_LR_PER_DIM, gt=0, le=100)
    pe_dim: int = Field(default=64, ge=1, le=4096)
    """Positional-encoding width ``m_p`` of both modes."""
    eval_lengths: list[Length] = Field(default=[40, 60, 100, 200, 500], min_length=1)
    """Test lengths; a fixed table holds ``max(eval_lengths)`` positions (at least ``T``)."""
    pes: list[Literal["stochastic", "fixed"]] = Field(default=list(PES), min_length=1)
    eval_size: int = Field(default=128, ge=2, le=8192)
    family_samples: int = Field(default=FAMILY_SAMPLES, ge=2, le=1_000_000)

    @model_validator(mode="after")
    def _lengths(self):  # noqa: ANN202
        shortest = self.first
        if not self.q <= shortest <= self.T:
            raise ValueError(f"shortest must be in [q, T] = [{self.q}, {self.T}], got {shortest}")
        short = [t for t in self.eval_lengths if t < self.q]
        if short:
            raise ValueError(f"eval_lengths must be >= q = {self.q}, got {short}")
        return self

    @property
    def first(self) -> int:
        """The shortest training length."""
        return self.q + 1 if self.shortest is None else self.shortest

    @property
    def positions(self) -> int:
        """Rows of a fixed PE table."""
        return max(self.T, *self.eval_lengths)


PRESETS: dict[str, dict[str, Any]] = {
    "quick": {
        "d": 4,
        "q": 2,
        "pe_dim": 32,
        "steps": 200,
        "eval_size": 32,
        "family_samples": 256,
    },
    "standard": {"pe_dim": 128, "steps": 600, "seeds": [0, 1, 2, 3, 4, 5, 6, 7]},
    "full": {
        "pe_dim": 256,
        "steps": 1200,
        "eval_lengths": [40, 60, 100, 200, 500, 1000],
        "seeds": list(range(16)),
    },
}
