"""Seeded random rows: Gaussian and unit-sphere matrices, row-block stable (SPEC A2, B2).

Rows are drawn in fixed blocks of ``ROW_BLOCK`` rows, each block from its own stream
``(seed, replica, name, block)``: a row's value depends only on its index, never on how
many rows, replicas or chunks are asked for at once.
"""

from __future__ import annotations

import torch

from .rng import generator
from .validate import require

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
