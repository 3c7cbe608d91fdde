"""Sparse XOR and k-sparse parity on the hypercube (SPEC A1).

``y = sign * prod_{a in S} x_a`` for ``x ~ Uniform{-1, +1}^d``, optionally with each label
flipped independently with probability ``noise``. Sparse XOR is ``k = 2, sign = -1``.
Every replica ``e`` has its own support and its own sample streams, named
``(seed, e, ...)``, so a replica's data never depends on the batch of replicas it is in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from ..core.rng import generator
from ..core.validate import distinct_indices, int_at_least, probability, require

SAMPLE_ELEMENTS = 1 << 18
"""Samples are drawn in blocks of ``max(1, SAMPLE_ELEMENTS // d)`` rows, one stream a block."""

BYTE_SIGNS = ((torch.arange(256)[:, None] >> torch.arange(8)) & 1).to(torch.float64) * 2 - 1
"""Row ``b``: the eight ``±1`` coordinates random byte ``b`` encodes (bit ``k``: coordinate ``k``).

One random word gives 64 coordinates, where a draw per coordinate cost most of an empirical
step (bench row 4)."""


def random_words_(words: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Fill the int64 ``words`` with uniform bits from ``gen``, 64 a word (in place)."""
    return words.random_(-(2**63), None, generator=gen)


def random_bytes(gen: torch.Generator, n: int) -> torch.Tensor:
    """``n`` uniform random bytes from ``gen``: the first ``n`` of ``ceil(n / 8)`` random words
    (eight bytes a word, little-endian)."""
    return random_words_(torch.empty((n + 7) // 8, dtype=torch.int64), gen).view(torch.uint8)[:n]


@dataclass(frozen=True)
class SparseParity:
    """The task: input length ``d``, support size ``k``, label sign and label-flip rate."""

    d: int
    k: int = 2
    sign: int = -1
    noise: float = 0.0

    def __post_init__(self) -> None:
        int_at_least("d", self.d, 2)
        int_at_least("k", self.k, 1)
        require(self.k <= self.d, f"k must be <= d={self.d}, got {self.k}")
        require(self.sign in (1, -1), f"sign must be +1 or -1, got {self.sign!r}")
        probability("noise", self.noise, below_half=True)

    @classmethod
    def of(cls, config: Any) -> SparseParity:
        """The task of a config (``attnsep.configs``): its ``d``, ``k``, ``noise`` and ``sign``
        where it has one, else ``-1`` (the FCN baselines learn ``y = -x_i x_j``)."""
        return cls(config.d, config.k, getattr(config, "sign", -1), config.noise)

    def supports(self, seed: int, replicas: int, first_replica: int = 0) -> torch.Tensor:
        """``E x k`` sorted supports, replica ``e`` uniform from stream ``(seed, e, "support")``."""
        rows = [
            torch.randperm(self.d, generator=generator(seed, first_replica + e, "support"))[
                : self.k
            ]
            for e in range(replicas)
        ]
        return torch.stack(rows).sort(dim=1).values

    def fixed_support(self, support: list[int], replicas: int) -> torch.Tensor:
        """The same given support for every replica (``E x k``)."""
        items = distinct_indices("support", support, self.d, self.k)
        return torch.tensor(sorted(items)).expand(replicas, self.k).clone()

    def labels(
        self, x: torch.Tensor, support: torch.Tensor, flips: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Clean (or flipped, where ``flips`` is true) labels for ``x`` of shape ``E x n x d``."""
        idx = support[:, None, :].expand(x.shape[0], x.shape[1], self.k)
        y = self.sign * torch.gather(x, 2, idx).prod(dim=2)
        return torch.where(flips, -y, y) if flips is not None else y

    def block_rows(self) -> int:
        """Rows per sample block (depends on ``d`` only)."""
        return max(1, SAMPLE_ELEMENTS // self.d)

    def draw(
        self,
        support: torch.Tensor,
        gens: list[torch.Generator],
        n: int,
        rows: int | None = None,
        dtype: torch.dtype = torch.float64,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``n`` samples of every replica, replica ``e`` from ``gens[e]``: ``x`` (E x n x d), ``y``.

        ``x`` is ±1 on the CPU in ``dtype`` (exact in any): ``ceil(d / 8)`` random bytes a
        sample, eight coordinates a byte (:data:`BYTE_SIGNS`), then, with label noise, one
        uniform a sample for the flips. ``rows``: keep only the first ``rows`` of the ``n``
        samples drawn.
        """
        rows = n if rows is None else rows
        width = (self.d + 7) // 8
        blocks, flips = [], []
        for gen in gens:
            blocks.append(random_bytes(gen, n * width).view(n, width)[:rows])
            if self.noise > 0:
                uniform = torch.rand(n, generator=gen, dtype=torch.float64)
                flips.append(uniform[:rows] < self.noise)
        raw = torch.stack(blocks)
        signs = BYTE_SIGNS.to(dtype)
        x = signs.index_select(0, raw.view(-1).long()).view(*raw.shape[:2], -1)
        x = x[..., : self.d]
        return x, self.labels(x, support, torch.stack(flips) if flips else None)

    def sample_block(
        self, seed: int, support: torch.Tensor, block: int, rows: int, first_replica: int = 0
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Rows ``0..rows-1`` of sample block ``block``, every replica (:meth:`draw`).

        Block ``b`` of replica ``e`` is the ``block_rows()`` samples of stream
        ``(seed, e, "samples", b)``.
        """
        replicas = range(first_replica, first_replica + support.shape[0])
        gens = [generator(seed, e, "samples", block) for e in replicas]
        return self.draw(support, gens, self.block_rows(), rows)

    def samples(self, seed: int, support: torch.Tensor, n: int, first_replica: int = 0):
        """Yield ``(x, y)`` chunks covering samples ``0..n-1`` of every replica, in order."""
        per_block = self.block_rows()
        for block in range((n + per_block - 1) // per_block):
            rows = min(per_block, n - block * per_block)
            yield self.sample_block(seed, support, block, rows, first_replica)
