"""The H-head query-vector attention model over frozen sphere embeddings (SPEC A2).

Scores ``s_h = V theta_h``, weights ``gamma_h = sigma(s_h)``, output
``f(x) = sign * prod_h (gamma_h . x)``. The query vectors ``theta`` (``E x H x m``) are the
only trainable parameters; the embeddings ``V`` (``E x d x m``) are frozen.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .. import attention
from ..configs import INITS
from ..core.rng import generator
from ..core.validate import one_of, require
from ..embeddings import StreamedEmbeddings, per_replica_matmul, sphere_embeddings


def simplex_vertices(heads: int) -> torch.Tensor:
    """``H x (H-1)`` unit vectors summing to zero with pairwise inner products ``-1/(H-1)``.

    For ``H = 2`` these are ``+1`` and ``-1``.
    """
    centered = torch.eye(heads, dtype=torch.float64) - 1.0 / heads
    basis, r = torch.linalg.qr(centered[:, : heads - 1])  # orthonormal basis of the sum-zero space
    coords = centered @ (basis * torch.sign(torch.diagonal(r)))
    return coords / coords.norm(dim=1, keepdim=True)


def haar_frame(gen: torch.Generator, m: int, columns: int) -> torch.Tensor:
    """``m x columns`` orthonormal columns, Haar-uniform (QR of a Gaussian, signs fixed)."""
    q, r = torch.linalg.qr(torch.randn(m, columns, generator=gen, dtype=torch.float64))
    return q * torch.sign(torch.diagonal(r))


def initial_queries(
    seed: int,
    replicas: int,
    heads: int,
    m: int,
    init: str = "antisymmetric",
    first_replica: int = 0,
) -> torch.Tensor:
    """Initial ``theta`` (``E x H x m``, float64, CPU) (SPEC A2); every head has unit norm.

    ``antisymmetric``: ``theta_1 ~ Uniform(S^{m-1})`` and ``theta_2 = -theta_1``; for ``H > 2``
    the heads are the vertices of a regular simplex centred at 0 in a uniformly random
    orientation (pairwise inner products ``-1/(H-1)``, needs ``m >= H - 1``).
    ``orthogonal``: the heads are a uniformly random orthonormal frame (pairwise inner products
    0, needs ``m >= H``). For ``H >= 3`` the simplex stays the default: its heads first prefer
    distinct support bits about twice as often (``experiments.xor_kparity.config.Config``).
    ``independent``: every head i.i.d. uniform on the sphere.
    """
    one_of("init", init, INITS)
    if init != "independent" and heads > 1:
        least = heads if init == "orthogonal" else heads - 1
        require(m >= least, f"{init} init with {heads} heads needs m >= {least}, got m={m}")
    out = []
    for e in range(replicas):
        gen = generator(seed, first_replica + e, "queries")
        if init == "independent" or heads == 1:
            g = torch.randn(heads, m, generator=gen, dtype=torch.float64)
            out.append(g / g.norm(dim=1, keepdim=True))
        elif init == "orthogonal":
            out.append(haar_frame(gen, m, heads).T)
        else:
            out.append(simplex_vertices(heads) @ haar_frame(gen, m, heads - 1).T)
    return torch.stack(out)


@dataclass(frozen=True)
class QueryHeads:
    """Frozen embeddings ``V`` (``E x d x m``, held or streamed), attention map, output sign."""

    V: torch.Tensor | StreamedEmbeddings
    attention: str = "softmax"
    sign: int = -1

    def __post_init__(self) -> None:
        attention.get(self.attention)
        require(self.sign in (1, -1), f"sign must be +1 or -1, got {self.sign!r}")
        require(len(self.V.shape) == 3, f"V must have shape E x d x m, got {tuple(self.V.shape)}")

    @classmethod
    def sample(
        cls,
        seed: int,
        replicas: int,
        d: int,
        m: int,
        *,
        attention: str = "softmax",
        sign: int = -1,
        first_replica: int = 0,
        dtype: torch.dtype = torch.float64,
        device: torch.device | str = "cpu",
        streamed: bool = False,
    ) -> QueryHeads:
        """Embeddings with rows uniform on ``S^{m-1}``, replica ``e`` from stream ``(seed, e)``.

        ``streamed``: never hold ``V`` whole; regenerate it chunk by chunk at every product.
        """
        V: torch.Tensor | StreamedEmbeddings
        if streamed:
            V = StreamedEmbeddings(seed, replicas, d, m, first_replica, dtype, device)
        else:
            V = sphere_embeddings(
                seed, replicas, d, m, first_replica=first_replica, dtype=dtype, device=device
            )
        return cls(V, attention, sign)

    @property
    def d(self) -> int:
        return self.V.shape[1]

    @property
    def m(self) -> int:
        return self.V.shape[2]

    def scores(self, theta: torch.Tensor) -> torch.Tensor:
        """``s = V theta`` for every head: ``E x H x d`` (a streamed ``V`` chunk by chunk)."""
        if not isinstance(self.V, StreamedEmbeddings):
            return row_blocked_scores(theta, self.V)
        out = torch.empty(*theta.shape[:2], self.d, dtype=theta.dtype, device=theta.device)
        for start, stop, V in self.V.chunks():
            out[:, :, start:stop] = row_blocked_scores(theta, V)
        return out

    def backproject(self, grad_scores: torch.Tensor) -> torch.Tensor:
        """The gradient in ``theta`` from a gradient on the scores: ``G V`` (``E x H x m``)."""
        if isinstance(self.V, StreamedEmbeddings):
            return self.V.backproject(grad_scores)
        return per_replica_matmul(grad_scores, self.V)

    def weights(self, theta: torch.Tensor) -> torch.Tensor:
        """Attention weights ``gamma = sigma(V theta)``: ``E x H x d``."""
        return attention.get(self.attention)(self.scores(theta))

    def predict(self, theta: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """``f(x) = sign * prod_h gamma_h . x`` for ``x`` of shape ``E x n x d``: ``E x n``."""
        return head_product(self.weights(theta), x, self.sign)

    @staticmethod
    def trainable_params(heads: int, m: int) -> int:
        return heads * m


SCORE_ELEMENTS = 1 << 16
"""On the CPU the scores ``theta V^T`` are taken over row blocks of ``V`` of about this many
numbers (512 KiB in float64): a block stays in the cache through the product, 1.3-1.5x faster
than one product over all ``d`` rows (measured, one thread, ``d = 2^18``, ``m = 32-128``)."""


def row_blocked_scores(theta: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
    """``theta V^T`` (``E x H x rows``) for ``V`` of shape ``E x rows x m``, per replica
    (``per_replica_matmul``), in row blocks of ``SCORE_ELEMENTS`` on the CPU.

    Each score is a dot product over the ``m`` columns of its own row, so the blocks give the
    bits of the whole product (tested); not under autograd, where the gradient in ``theta``
    would be summed block by block."""
    rows = max(64, SCORE_ELEMENTS // V.shape[2] // 64 * 64)  # 64-byte aligned blocks
    graph = torch.is_grad_enabled() and (theta.requires_grad or V.requires_grad)
    if V.device.type != "cpu" or V.shape[1] <= rows or graph:
        return per_replica_matmul(theta, V.transpose(1, 2))
    out = torch.empty(*theta.shape[:2], V.shape[1], dtype=theta.dtype, device=theta.device)
    for start in range(0, V.shape[1], rows):
        block = V[:, start : start + rows].transpose(1, 2)
        out[:, :, start : start + rows] = per_replica_matmul(theta, block)
    return out


def head_product(gamma: torch.Tensor, x: torch.Tensor, sign: int) -> torch.Tensor:
    """``sign * prod_h (gamma_h . x)`` from weights ``E x H x d`` and inputs ``E x n x d``."""
    return sign * torch.bmm(x.to(gamma.dtype), gamma.transpose(1, 2)).prod(dim=2)
