"""Positional encodings for sparse token selection, stochastic and fixed (SPEC B2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from .configs import PE_KINDS
from .core.random_rows import gaussian_rows
from .core.rng import generator
from .core.validate import int_at_least, one_of, require


def _encode(rows: torch.Tensor, kind: str) -> torch.Tensor:
    """Gaussian rows -> ``sphere`` (normalized) or ``gaussian`` (``N(0, I/m_p)``) encodings.

    A row drawn exactly zero has no direction: it becomes ``e_1``. A float32 normal is exactly
    0 about once in 1.5e7 draws (13 in 2e8 measured), so at ``m_p = 1`` a 4-million-token
    evaluation set meets one about a quarter of the time, where the division gave NaN; at
    ``m_p >= 2`` every coordinate of a row would have to be."""
    if kind != "sphere":
        return rows / rows.shape[-1] ** 0.5
    norms = rows.norm(dim=-1, keepdim=True)
    unit = rows / norms
    zero = norms[..., 0] == 0
    if bool(zero.any()):
        unit[zero] = 0.0
        unit[..., 0][zero] = 1.0
    return unit


@dataclass(frozen=True)
class StochasticPE:
    """Encodings drawn afresh for every sequence, at any length (SPEC B2, *stochastic*).

    Replica ``e`` draws the encodings of batch ``key`` from stream ``(seed, e, "pe", *key)``
    as one ``batch x length x width`` block, so they depend on ``(seed, e, key, batch,
    length)`` only. ``kind``: ``sphere`` (uniform on ``S^{width-1}``, default) or
    ``gaussian`` (``N(0, I/width)``). The normals are drawn in float32 (about 5x faster on
    the CPU, and the draw dominates a training step) and scaled in float64, so ``sphere``
    rows are unit-norm to float64 precision.
    """

    seed: int
    replicas: int
    width: int
    kind: str = "sphere"
    first_replica: int = 0

    def __post_init__(self) -> None:
        int_at_least("replicas", self.replicas, 1)
        int_at_least("pe width", self.width, 1)
        one_of("pe kind", self.kind, PE_KINDS)

    def draw(self, key: tuple[int | str, ...], batch: int, length: int) -> torch.Tensor:
        """``E x batch x length x width`` encodings (float64, CPU)."""
        blocks = [
            torch.randn(
                batch, length, self.width, generator=generator(self.seed, e, "pe", *key)
            ).double()
            for e in range(self.first_replica, self.first_replica + self.replicas)
        ]
        return _encode(torch.stack(blocks), self.kind)


@dataclass(frozen=True)
class FixedPE:
    """One frozen table ``E x positions x width`` for positions ``1..positions`` (SPEC B2, *fixed*).

    :meth:`draw` returns the first ``length`` rows, broadcast over the batch; a longer
    sequence than the table holds is a ``ValueError`` naming both lengths.
    """

    table: torch.Tensor

    @property
    def positions(self) -> int:
        return int(self.table.shape[1])

    @property
    def width(self) -> int:
        return int(self.table.shape[2])

    @classmethod
    def drawn(
        cls,
        seed: int,
        replicas: int,
        positions: int,
        width: int,
        kind: str = "sphere",
        first_replica: int = 0,
    ) -> FixedPE:
        """Draw the table from streams ``(seed, e, "fixed-pe", block)`` (row-block stable)."""
        rows = [
            gaussian_rows(seed, e, "fixed-pe", 0, positions, width)
            for e in range(first_replica, first_replica + replicas)
        ]
        return cls(_encode(torch.stack(rows), kind))

    def draw(self, key: tuple[int | str, ...], batch: int, length: int) -> torch.Tensor:
        """``E x batch x length x width`` view of the frozen rows (``key`` is ignored)."""
        require(
            length <= self.positions,
            f"fixed PE holds {self.positions} positions, asked for length {length}",
        )
        return self.table[:, None, :length].expand(-1, batch, -1, -1)


def encodings_for(config: Any) -> StochasticPE | FixedPE:
    """A training config's encodings (``configs.SelectionTrainConfig``): stochastic, or a fixed
    table of ``fixed_positions`` rows (``T`` when unset)."""
    if config.pe == "stochastic":
        return StochasticPE(config.seed, config.seeds, config.pe_dim, config.pe_kind)
    rows = config.T if config.fixed_positions is None else config.fixed_positions
    return FixedPE.drawn(config.seed, config.seeds, rows, config.pe_dim, config.pe_kind)
