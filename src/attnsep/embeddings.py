"""Frozen sphere embeddings (SPEC A2), whole or streamed in row chunks (SPEC A4 at large ``d``).

``sphere_embeddings`` draws replica ``e``'s ``d x m`` unit rows from stream ``(seed, e)``
(``random_rows``). The query-vector model touches ``V`` (``E x d x m``) only through two
products: the scores ``theta V^T`` (``E x H x d``) and the back-projection ``G V``
(``E x H x m``) of a gradient ``G`` on the scores. ``StreamedEmbeddings`` computes both chunk
by chunk, regenerating the rows from their seeded streams, so ``V`` is never held whole (or,
given ``out``, drawn once into it and kept for the next products, the same chunks); the rows
are exactly those of ``sphere_embeddings`` with the same seed, whatever the chunk size.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import torch

from .core.random_rows import ROW_BLOCK, sphere_rows
from .core.validate import require


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
    if out is None:
        out = torch.empty(replicas, rows, width, dtype=torch.float64)
    _check_out(out, (replicas, rows, width))
    for e in range(replicas):
        sphere_rows(seed, first_replica + e, name, 0, rows, width, out=out[e])
    return out.to(dtype=dtype, device=device)


def _check_out(out: torch.Tensor, shape: tuple[int, int, int]) -> None:
    require(
        out.shape == shape and out.dtype == torch.float64 and out.device.type == "cpu",
        f"out must be float64 on the CPU, of shape {shape}, got {tuple(out.shape)}",
    )


CHUNK_ELEMENTS = 1 << 22
"""Default chunk: as many whole row blocks as keep ``E x rows x m`` near this many numbers."""


def _aligned(x: torch.Tensor) -> torch.Tensor:
    """``x``, copied to a fresh (64-byte aligned) allocation when its data is not aligned."""
    return x if x.data_ptr() % 64 == 0 else x.clone()


def per_replica_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a[e] @ b[e]`` for every replica, one aligned product each.

    BLAS kernels may round differently for a batch of another size or for operands at another
    memory alignment; one product per replica on 64-byte aligned operands keeps every
    replica's result independent of the batch it runs in (bitwise, on the CPU). The copies
    happen only for slabs whose size is not a multiple of 64 bytes (e.g. odd ``m``). Outside
    autograd the products are written straight into the result.
    """
    pairs = [(_aligned(x), _aligned(y)) for x, y in zip(a, b, strict=True)]
    if torch.is_grad_enabled() and (a.requires_grad or b.requires_grad):
        return torch.stack([x @ y for x, y in pairs])
    out = torch.empty(*a.shape[:2], b.shape[2], dtype=a.dtype, device=a.device)
    for (x, y), slab in zip(pairs, out, strict=True):
        if slab.data_ptr() % 64 == 0:
            torch.matmul(x, y, out=slab)
        else:
            slab.copy_(x @ y)
    return out


@dataclass(frozen=True)
class StreamedEmbeddings:
    """Replicas ``first_replica .. first_replica + replicas - 1`` of ``d x m`` sphere rows."""

    seed: int
    replicas: int
    d: int
    m: int
    first_replica: int = 0
    dtype: torch.dtype = torch.float64
    device: torch.device | str = "cpu"
    chunk_rows: int | None = None
    name: str = "embeddings"
    out: torch.Tensor | None = field(default=None, repr=False, compare=False)
    """A float64 CPU ``E x d x m`` tensor (reused memory) to draw the rows into and keep: a
    step that takes several products with ``V`` then draws it once (the draw, not the product,
    is most of a pass), for ``E d m`` numbers held."""
    _kept: list[tuple[int, int, torch.Tensor]] = field(
        default_factory=list, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if self.out is not None:
            _check_out(self.out, self.shape)

    @property
    def shape(self) -> tuple[int, int, int]:
        return (self.replicas, self.d, self.m)

    def rows_per_chunk(self) -> int:
        if self.chunk_rows is not None:
            return self.chunk_rows
        blocks = max(1, CHUNK_ELEMENTS // (self.replicas * self.m * ROW_BLOCK))
        return blocks * ROW_BLOCK

    def chunks(self) -> Iterator[tuple[int, int, torch.Tensor]]:
        """``(start, stop, V[:, start:stop])`` over all rows (after a whole pass drawn into
        ``out``, the kept ones)."""
        if self._kept:
            yield from self._kept
            return
        step, drawn = self.rows_per_chunk(), []
        for start in range(0, self.d, step):
            stop = min(self.d, start + step)
            if self.out is None:
                rows = torch.empty(self.replicas, stop - start, self.m, dtype=torch.float64)
            else:
                rows = self.out[:, start:stop]
            for e in range(self.replicas):
                sphere_rows(
                    self.seed, self.first_replica + e, self.name, start, stop, self.m, rows[e]
                )
            chunk = (start, stop, rows.to(self.device, self.dtype))
            if self.out is not None:
                drawn.append(chunk)
            yield chunk
        self._kept.extend(drawn)  # only after a whole pass

    def scores(self, theta: torch.Tensor) -> torch.Tensor:
        """``theta V^T``: ``E x H x d``."""
        out = torch.empty(*theta.shape[:2], self.d, dtype=theta.dtype, device=theta.device)
        for start, stop, V in self.chunks():
            out[:, :, start:stop] = per_replica_matmul(theta, V.transpose(1, 2))
        return out

    def backproject(self, grad_scores: torch.Tensor) -> torch.Tensor:
        """``G V`` for ``G`` of shape ``E x H x d``: ``E x H x m``."""
        out = torch.zeros(
            *grad_scores.shape[:2], self.m, dtype=grad_scores.dtype, device=grad_scores.device
        )
        for start, stop, V in self.chunks():
            out += per_replica_matmul(grad_scores[:, :, start:stop], V)
        return out
