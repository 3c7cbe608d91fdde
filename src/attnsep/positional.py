"""Random positional vectors: sphere embeddings (SPEC A2) and positional encodings (SPEC B2).

Rows are drawn in fixed blocks of ``ROW_BLOCK`` rows, each block from its own stream
``(seed, replica, name, block)``: a row's value depends only on its index, never on how
many rows, replicas or chunks are asked for at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .configs import PE_KINDS
from .rng import generator
from .validate import int_at_least, one_of, require

ROW_BLOCK = 1 << 12


def block_normals(
    seed: int, replica: int, name: str, block: int, rows: int, width: int
) -> torch.Tensor:
    """The first ``rows`` rows of block ``block``'s ``ROW_BLOCK x width`` float32 normals.

    Only ``rows x width`` numbers (rounded up to a multiple of 16) are drawn: torch's CPU
    kernel draws all the uniforms in order, then transforms them 16 at a time, so these are
    bitwise the first rows of the whole block (tested); a partial last block costs less.
    """
    count = min(ROW_BLOCK * width, -(-rows * width // 16) * 16)
    normals = torch.randn(count, generator=generator(seed, replica, name, block))
    return normals[: rows * width].view(rows, width)


def gaussian_rows(
    seed: int,
    replica: int,
    name: str,
    start: int,
    stop: int,
    width: int,
    out: torch.Tensor | None = None,
) -> torch.Tensor:
    """Rows ``start..stop-1`` of an i.i.d. ``N(0, 1)`` matrix with ``width`` columns (float64, CPU).

    The normals are drawn in float32 (several times faster on the CPU) and widened to float64.
    """
    require(0 <= start < stop, f"need 0 <= start < stop, got start={start}, stop={stop}")
    out = torch.empty(stop - start, width, dtype=torch.float64) if out is None else out
    for block in range(start // ROW_BLOCK, (stop - 1) // ROW_BLOCK + 1):
        first = block * ROW_BLOCK
        lo, hi = max(start, first), min(stop, first + ROW_BLOCK)
        rows = block_normals(seed, replica, name, block, hi - first, width)
        out[lo - start : hi - start] = rows[lo - first :]
    return out


def sphere_rows(
    seed: int,
    replica: int,
    name: str,
    start: int,
    stop: int,
    width: int,
    out: torch.Tensor | None = None,
) -> torch.Tensor:
    """Rows ``start..stop-1`` of a matrix whose rows are uniform on ``S^{width-1}`` (float64)."""
    rows = gaussian_rows(seed, replica, name, start, stop, width, out)
    return rows.div_(torch.linalg.vector_norm(rows, dim=1, keepdim=True))


def sphere_embeddings(
    seed: int,
    replicas: int,
    rows: int,
    width: int,
    name: str = "embeddings",
    *,
    first_replica: int = 0,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str = "cpu",
    out: torch.Tensor | None = None,
) -> torch.Tensor:
    """``E x rows x width`` unit rows; replica ``e`` from stream ``(seed, first_replica + e)``.

    ``out``: a float64 CPU ``E x rows x width`` tensor to draw into (reused memory).
    """
    int_at_least("rows", rows, 1)
    int_at_least("width", width, 1)
    int_at_least("replicas", replicas, 1)
    if out is None:
        out = torch.empty(replicas, rows, width, dtype=torch.float64)
    shape = (replicas, rows, width)
    require(
        out.shape == shape and out.dtype == torch.float64 and out.device.type == "cpu",
        f"out must be float64 on the CPU, of shape {shape}, got {tuple(out.shape)}",
    )
    for e in range(replicas):
        sphere_rows(seed, first_replica + e, name, 0, rows, width, out=out[e])
    return out.to(dtype=dtype, device=device)


# --- SPEC B2: positional encodings for sparse token selection -----------------------------


def _encode(rows: torch.Tensor, kind: str) -> torch.Tensor:
    """Gaussian rows -> ``sphere`` (normalized) or ``gaussian`` (``N(0, I/m_p)``) encodings."""
    if kind == "sphere":
        return rows / rows.norm(dim=-1, keepdim=True)
    return rows / rows.shape[-1] ** 0.5


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
        int_at_least("replicas", replicas, 1)
        int_at_least("positions", positions, 1)
        int_at_least("pe width", width, 1)
        one_of("pe kind", kind, PE_KINDS)
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
