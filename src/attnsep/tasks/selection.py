"""Sparse token selection, q-sparse averaging (SPEC B1).

A sequence is ``T`` tokens ``x_1..x_T ~ N(0, I_d)`` and a subset ``y ⊂ [T]`` of size ``q``,
uniform and independent of the tokens. The target is ``STS(X, y) = (1/q) Σ_{i∈y} x_i``.

Representation: ``y`` is an **index tensor** of shape ``E x B x q`` (0-based positions,
sorted ascending, distinct); :func:`subset_mask` turns it into the ``0/1`` mask ``E x B x T``.

Randomness: replica ``e`` draws its tokens from stream ``(seed, e, "tokens", *key)`` and its
subsets from ``(seed, e, "subset", *key)``; ``key`` names the batch (a training step, or
``("eval", length)`` for an evaluation set). A replica's data therefore depends on
``(seed, e, key, batch, length)`` only, never on how many replicas are drawn together.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from ..core.rng import generator
from ..core.validate import int_at_least, require


@dataclass(frozen=True)
class SelectionBatch:
    """Tokens ``X`` (``E x B x T x d``, float64) and subsets ``y`` (``E x B x q``, int64)."""

    X: torch.Tensor
    y: torch.Tensor


@dataclass(frozen=True)
class TokenSelection:
    """The q-sparse averaging task with token dimension ``d``, training length ``T`` (SPEC B1)."""

    d: int
    T: int
    q: int

    def __post_init__(self) -> None:
        int_at_least("d", self.d, 1)
        int_at_least("T", self.T, 1)
        int_at_least("q", self.q, 1)
        require(self.q <= self.T, f"q must be <= T (q={self.q}, T={self.T})")

    @classmethod
    def of(cls, config: Any) -> TokenSelection:
        """The task of a config (``attnsep.configs``): its ``d``, ``T`` and ``q``."""
        return cls(config.d, config.T, config.q)

    def sample(
        self,
        seed: int,
        replicas: int,
        batch: int,
        key: tuple[int | str, ...],
        *,
        length: int | None = None,
        first_replica: int = 0,
    ) -> SelectionBatch:
        """``batch`` sequences of ``length`` tokens (default ``T``) per replica, deterministic."""
        length = self.T if length is None else int_at_least("length", length, 1)
        require(self.q <= length, f"length must be >= q={self.q}, got {length}")
        X = self.tokens(seed, replicas, batch, key, length=length, first_replica=first_replica)
        y = self.subsets(seed, replicas, batch, key, length=length, first_replica=first_replica)
        return SelectionBatch(X=X, y=y)

    def tokens(
        self,
        seed: int,
        replicas: int,
        batch: int,
        key: tuple[int | str, ...],
        *,
        length: int,
        first_replica: int = 0,
    ) -> torch.Tensor:
        """The tokens of :meth:`sample` alone (``E x B x length x d``, the same streams)."""
        xs = []
        for e in range(first_replica, first_replica + replicas):
            tokens = generator(seed, e, "tokens", *key)
            xs.append(torch.randn(batch, length, self.d, generator=tokens, dtype=torch.float64))
        return torch.stack(xs)

    def subsets(
        self,
        seed: int,
        replicas: int,
        batch: int,
        key: tuple[int | str, ...],
        *,
        length: int,
        first_replica: int = 0,
    ) -> torch.Tensor:
        """The subsets of :meth:`sample` alone (``E x B x q``, the same streams)."""
        ys = []
        for e in range(first_replica, first_replica + replicas):
            keys = torch.rand(batch, length, generator=generator(seed, e, "subset", *key))
            ys.append(keys.argsort(dim=1)[:, : self.q].sort(dim=1).values)
        return torch.stack(ys)


def subset_mask(y: torch.Tensor, length: int) -> torch.Tensor:
    """The ``0/1`` mask ``(..., length)`` (float64) of index subsets ``y`` (``..., q``)."""
    mask = torch.zeros(*y.shape[:-1], length, dtype=torch.float64, device=y.device)
    return mask.scatter_(-1, y, 1.0)


def sts(X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``STS(X, y) = (1/q) Σ_{i∈y} x_i`` (SPEC B1): ``(…, T, d)``, ``(…, q)`` -> ``(…, d)``."""
    picked = X.gather(-2, y.unsqueeze(-1).expand(*y.shape, X.shape[-1]))
    return picked.mean(dim=-2)
