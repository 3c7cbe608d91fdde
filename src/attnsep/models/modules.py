"""Single-model ``nn.Module`` views of the query-heads model (SPEC A2) and the selector (SPEC B2),
for a plain PyTorch loop (any ``torch.optim`` optimizer, your own loss).

The library's own models are ensemble-first (a leading replica axis ``E``); these hold one
model (``E = 1``) and call the ensemble functions on a replica axis of 1, so the math is the
same code: ``QueryHeadsModel(d, m, seed=s)`` is replica 0 of ``QueryHeads.sample(s, 1, d, m)``
with the queries of ``initial_queries(s, 1, heads, m)``, and ``Selector(d, m_p)(X, P, y)`` is
``selector.forward`` on ``W[None]``.
"""

from __future__ import annotations

import torch
from torch import nn

from ..core.validate import int_at_least
from . import selector
from .query_heads import QueryHeads, initial_queries


class QueryHeadsModel(nn.Module):
    """``f(x) = sign * prod_h (gamma_h . x)``, ``gamma_h = sigma(V theta_h)`` (SPEC A2).

    ``V`` (``d x m``, a buffer: frozen, moved by ``.to``) holds rows uniform on the sphere,
    drawn exactly as replica 0 of ``QueryHeads.sample(seed, 1, d, m)``; ``theta``
    (``H x m``, the only ``nn.Parameter``) starts at replica 0 of
    ``initial_queries(seed, 1, heads, m, init)``. ``attention`` names a map of
    ``attnsep.attention`` (a registered one too).

    Call: ``model(x)`` with ``x`` of shape ``n x d`` (``±1`` bits) gives the ``n`` predictions;
    ``model.weights()`` the attention weights ``gamma`` (``H x d``).
    """

    V: torch.Tensor

    def __init__(
        self,
        d: int,
        m: int,
        heads: int = 2,
        attention: str = "softmax",
        sign: int = -1,
        seed: int = 0,
        init: str = "antisymmetric",
        *,
        dtype: torch.dtype = torch.float64,
    ) -> None:
        super().__init__()
        int_at_least("d", d, 1)
        int_at_least("m", m, 1)
        int_at_least("heads", heads, 1)
        V = QueryHeads.sample(seed, 1, d, m, attention=attention, sign=sign, dtype=dtype).V
        assert isinstance(V, torch.Tensor)  # held, not streamed
        self.attention, self.sign = attention, sign
        self.register_buffer("V", V[0])
        self.theta = nn.Parameter(initial_queries(seed, 1, heads, m, init)[0].to(dtype))

    def ensemble(self) -> tuple[QueryHeads, torch.Tensor]:
        """The ensemble model and queries this module computes, replica axis 1: ``(model,
        theta[None])`` (e.g. for ``ClsTransformer.from_query_heads(*module.ensemble())``)."""
        return QueryHeads(self.V[None], self.attention, self.sign), self.theta[None]

    def weights(self) -> torch.Tensor:
        """Attention weights ``gamma_h = sigma(V theta_h)``: ``H x d``."""
        model, theta = self.ensemble()
        return model.weights(theta)[0]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``f(x)`` for ``x`` of shape ``n x d``: ``n`` predictions."""
        model, theta = self.ensemble()
        return model.predict(theta, x[None])[0]


class Selector(nn.Module):
    """One-layer, one-head selector with merged ``W = KᵀQ`` (SPEC B2), ``W`` an ``nn.Parameter``.

    ``W`` is ``D x D`` (``D = d + m_p``, content then position), zero at the start (SPEC B3).
    ``trainable="position"`` trains the position block ``W[d:, d:]`` only: ``forward`` uses
    ``W * mask``, so every other entry gets a zero gradient and, from ``W = 0``, stays 0 under
    SGD, momentum, Adam or weight decay.

    Call: ``f, s = selector(X, P, y)`` with tokens ``X`` (``B x T x d``), encodings ``P``
    (``B x T x m_p``) and subsets ``y`` (``B x q``, 0-based int64): output ``B x d`` and
    attention weights ``B x T`` (``models.selector.forward`` on a replica axis of 1).
    """

    mask: torch.Tensor

    def __init__(
        self, d: int, m_p: int, trainable: str = "full", *, dtype: torch.dtype = torch.float64
    ) -> None:
        super().__init__()
        int_at_least("d", d, 1)
        int_at_least("m_p", m_p, 1)
        self.d, self.m_p, self.trainable = d, m_p, trainable
        self.register_buffer("mask", selector.trainable_mask(d, m_p, trainable).to(dtype))
        self.W = nn.Parameter(torch.zeros(d + m_p, d + m_p, dtype=dtype))

    @classmethod
    def ground_truth(
        cls, d: int, m_p: int, trainable: str = "full", *, dtype: torch.dtype = torch.float64
    ) -> Selector:
        """A selector at ``W*``: identity on the position block, zero elsewhere (SPEC B2)."""
        module = cls(d, m_p, trainable, dtype=dtype)
        with torch.no_grad():
            module.W.copy_(selector.ground_truth(d, m_p, dtype))
        return module

    def effective(self) -> torch.Tensor:
        """The ``W`` the forward pass uses: ``W * mask`` (``D x D``)."""
        return self.W * self.mask

    def cosine_to_ground_truth(self) -> torch.Tensor:
        """``cos(W, W*)`` of the effective ``W`` (SPEC B2; 0 at ``W = 0``)."""
        W = self.effective().detach()
        target = selector.ground_truth(self.d, self.m_p, W.dtype).to(W.device)
        norm = W.norm() * target.norm()
        return (W * target).sum() / norm if norm > 0 else norm

    def forward(
        self, X: torch.Tensor, P: torch.Tensor, y: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(f, s)``: output ``B x d`` and attention weights ``B x T``."""
        f, s = selector.forward(self.effective()[None], X[None], P[None], y[None])
        return f[0], s[0]
