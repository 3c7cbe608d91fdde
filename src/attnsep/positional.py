"""Random positional vectors on the unit sphere (SPEC A2 embeddings, B2 encodings).

Rows are drawn in fixed blocks of ``ROW_BLOCK`` rows, each block from its own stream
``(seed, replica, name, block)``: a row's value depends only on its index, never on how
many rows, replicas or chunks are asked for at once.
"""

from __future__ import annotations

import torch

from .rng import generator
from .validate import int_at_least

ROW_BLOCK = 1 << 12


def gaussian_rows(
    seed: int, replica: int, name: str, start: int, stop: int, width: int
) -> torch.Tensor:
    """Rows ``start..stop-1`` of an i.i.d. ``N(0, 1)`` matrix with ``width`` columns (float64, CPU)."""
    out = torch.empty(stop - start, width, dtype=torch.float64)
    first, last = start // ROW_BLOCK, (stop - 1) // ROW_BLOCK
    for block in range(first, last + 1):
        rows = torch.randn(ROW_BLOCK, width, generator=generator(seed, replica, name, block),
                           dtype=torch.float64)
        lo, hi = max(start, block * ROW_BLOCK), min(stop, (block + 1) * ROW_BLOCK)
        out[lo - start : hi - start] = rows[lo - block * ROW_BLOCK : hi - block * ROW_BLOCK]
    return out


def sphere_rows(seed: int, replica: int, name: str, start: int, stop: int, width: int) -> torch.Tensor:
    """Rows ``start..stop-1`` of a matrix whose rows are uniform on ``S^{width-1}``."""
    rows = gaussian_rows(seed, replica, name, start, stop, width)
    return rows / rows.norm(dim=1, keepdim=True)


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
) -> torch.Tensor:
    """``E x rows x width`` unit rows; replica ``e`` is drawn from stream ``(seed, first_replica + e)``."""
    int_at_least("rows", rows, 1)
    int_at_least("width", width, 1)
    int_at_least("replicas", replicas, 1)
    out = torch.stack(
        [sphere_rows(seed, first_replica + e, name, 0, rows, width) for e in range(replicas)]
    )
    return out.to(dtype=dtype, device=device)
