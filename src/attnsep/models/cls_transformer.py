"""A real single-layer multi-head attention block with a ``[CLS]`` token (SPEC A3).

Token ``i = 1..d`` is ``[x_i e_content ; v_i ; 0]`` and the CLS token (position 0) is
``[0 ; 0 ; e_cls]``: a content block of width ``c``, a positional block of width ``m`` holding
the frozen sphere rows ``v_i`` of SPEC A2, and a CLS block of width ``b``; ``e_content`` and
``e_cls`` are unit vectors. Every head ``h`` has full ``W_Q,h, W_K,h`` (``a x D``) and a
1-dimensional value ``W_V,h`` (``D``), ``D = c + m + b``, all with a leading replica axis ``E``.

Structural mask (enforced by multiplying the weights by column masks, so gradients of the
masked entries are zero): queries read only the CLS block, keys only the positional block,
values only the content block; the CLS row never attends to itself. Q, K, V and a full
``(d+1) x (d+1)`` attention are computed for every token, but only the CLS row is read out:
``f(x) = sign * prod_h o_h`` with ``o_h`` the CLS output of head ``h`` (SPEC A2's readout; no
residual, ``W_O``, MLP or LayerNorm). Scores are ``scale * q . k`` with ``scale = 1`` by
default (SPEC has no ``1/sqrt(a)``). Only softmax: other maps are not standard in a transformer.

Equivalence: the CLS scores are ``s_h,i = v_i . theta_h`` with
``theta_h = scale * K_hᵀ W_Q,h e_cls``, ``K_h`` the positional block of ``W_K,h``, so the block
computes ``QueryHeads.predict(theta)`` when ``W_V,h`` reads ``e_content``. A gradient step of
size ``eta`` on ``W_Q`` alone moves ``theta`` by ``-eta * scale^2 * K_hᵀ K_h grad_theta L``:
the same step as the query-vector model exactly when ``scale^2 K_hᵀ K_h = I`` (e.g. ``K_h``
orthogonal and ``scale = 1``). The forward functions agree for any invertible ``K_h``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from ..core.rng import generator
from ..core.validate import int_at_least, positive_finite, require
from .query_heads import QueryHeads


def random_orthogonal(seed: int, replicas: int, heads: int, m: int) -> torch.Tensor:
    """Haar-random orthogonal ``E x H x m x m`` (float64), replica ``e`` from ``(seed, e)``."""
    int_at_least("m", m, 1)
    out = []
    for e in range(replicas):
        gen = generator(seed, e, "key_orthogonal")
        q, r = torch.linalg.qr(torch.randn(heads, m, m, generator=gen, dtype=torch.float64))
        out.append(q * torch.sign(torch.diagonal(r, dim1=-2, dim2=-1))[:, None, :])
    return torch.stack(out)


def unit(width: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """The first standard basis vector of ``R^width``."""
    return torch.eye(width, dtype=dtype)[0]


class ClsTransformer(nn.Module):
    """Single-layer multi-head attention with a CLS token and the SPEC A3 structural mask."""

    V: torch.Tensor
    e_content: torch.Tensor
    e_cls: torch.Tensor
    q_mask: torch.Tensor
    k_mask: torch.Tensor
    v_mask: torch.Tensor

    def __init__(
        self,
        V: torch.Tensor,
        W_Q: torch.Tensor,
        W_K: torch.Tensor,
        W_V: torch.Tensor,
        e_content: torch.Tensor,
        e_cls: torch.Tensor,
        *,
        sign: int = -1,
        scale: float = 1.0,
    ) -> None:
        """``V``: ``E x d x m``; ``W_Q, W_K``: ``E x H x a x D``; ``W_V``: ``E x H x D``."""
        super().__init__()
        c, m, b = e_content.numel(), V.shape[2], e_cls.numel()
        width = c + m + b
        require(V.dim() == 3, f"V must have shape E x d x m, got {tuple(V.shape)}")
        for name, w, dims in (("W_Q", W_Q, 4), ("W_K", W_K, 4), ("W_V", W_V, 3)):
            ok = w.dim() == dims and w.shape[-1] == width and w.shape[0] == V.shape[0]
            require(
                ok,
                f"{name} must have E={V.shape[0]} first and D={width} last, got {tuple(w.shape)}",
            )
        for name, e in (("e_content", e_content), ("e_cls", e_cls)):
            require(abs(float(e.norm()) - 1) < 1e-12, f"{name} must be a unit vector")
        require(sign in (1, -1), f"sign must be +1 or -1, got {sign!r}")
        self.sign, self.scale = sign, positive_finite("scale", scale)
        self.content, self.pos, self.cls = slice(0, c), slice(c, c + m), slice(c + m, width)
        self.register_buffer("V", V)
        self.register_buffer("e_content", e_content.to(V))
        self.register_buffer("e_cls", e_cls.to(V))
        for name, block in (("q_mask", self.cls), ("k_mask", self.pos), ("v_mask", self.content)):
            mask = torch.zeros(width, dtype=V.dtype, device=V.device)
            mask[block] = 1.0
            self.register_buffer(name, mask)
        self.W_Q, self.W_K, self.W_V = (nn.Parameter(w.to(V).clone()) for w in (W_Q, W_K, W_V))

    @classmethod
    def from_query_heads(
        cls,
        model: QueryHeads,
        theta: torch.Tensor,
        W_K: torch.Tensor | None = None,
        *,
        e_content: torch.Tensor | None = None,
        e_cls: torch.Tensor | None = None,
        scale: float = 1.0,
    ) -> ClsTransformer:
        """The block computing ``model.predict(theta, .)`` (SPEC A3).

        ``W_K``: the positional block ``K_h`` of every key matrix (``m x m`` or
        ``E x H x m x m``, invertible; identity by default); the query is set to
        ``W_Q,h e_cls = K_h^{-T} theta_h / scale`` and the value reads ``e_content``.
        """
        require(
            model.attention == "softmax", f"the CLS block is softmax only, got {model.attention!r}"
        )
        positive_finite("scale", scale)
        V = model.V
        if not isinstance(V, torch.Tensor):
            raise ValueError("the CLS block needs V held, not streamed")
        E, H, m = theta.shape
        require(
            (E, m) == (V.shape[0], V.shape[2]), f"theta must be E x H x m, got {tuple(theta.shape)}"
        )
        e_content = unit(1, V.dtype) if e_content is None else e_content.to(V)
        e_cls = unit(1, V.dtype) if e_cls is None else e_cls.to(V)
        K = torch.eye(m, dtype=V.dtype) if W_K is None else W_K
        require(K.shape[-2:] == (m, m), f"W_K must end in m x m = {m} x {m}, got {tuple(K.shape)}")
        K = K.to(V).expand(E, H, m, m)
        q = torch.linalg.solve(K.transpose(-1, -2), theta.to(V)[..., None] / scale)[..., 0]
        c, b = e_content.numel(), e_cls.numel()
        width = c + m + b
        W_Q = torch.zeros(E, H, m, width, dtype=V.dtype, device=V.device)
        W_Q[..., c + m :] = q[..., None] * e_cls
        W_Kfull = torch.zeros_like(W_Q)
        W_Kfull[..., c : c + m] = K
        W_V = torch.zeros(E, H, width, dtype=V.dtype, device=V.device)
        W_V[..., :c] = e_content
        return cls(V, W_Q, W_Kfull, W_V, e_content, e_cls, sign=model.sign, scale=scale)

    def masked(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``W_Q, W_K, W_V`` with the structural mask applied (SPEC A3)."""
        return self.W_Q * self.q_mask, self.W_K * self.k_mask, self.W_V * self.v_mask

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        """Tokens ``E x n x (d+1) x D``: CLS ``[0;0;e_cls]`` then ``[x_i e_content ; v_i ; 0]``."""
        E, n, d = x.shape
        tokens = torch.zeros(
            E, n, d + 1, self.q_mask.numel(), dtype=self.V.dtype, device=self.V.device
        )
        tokens[:, :, 0, self.cls] = self.e_cls
        tokens[:, :, 1:, self.content] = x.to(self.V)[..., None] * self.e_content
        tokens[:, :, 1:, self.pos] = self.V[:, None]
        return tokens

    def attend(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-head CLS outputs ``E x n x H`` and the CLS attention rows ``E x n x H x (d+1)``.

        Scores ``scale * Q Kᵀ`` for all token pairs, softmax over keys; the CLS row has its
        own entry masked to ``-inf`` so it attends only to positions ``1..d``.
        """
        W_Q, W_K, W_V = self.masked()
        Q = torch.einsum("entD,ehaD->enhta", tokens, W_Q)
        K = torch.einsum("entD,ehaD->enhta", tokens, W_K)
        values = torch.einsum("entD,ehD->enht", tokens, W_V)
        scores = self.scale * torch.einsum("enhta,enhsa->enhts", Q, K)
        blocked = torch.zeros(scores.shape[-2:], dtype=torch.bool, device=scores.device)
        blocked[0, 0] = True
        attn = torch.softmax(scores.masked_fill(blocked, float("-inf")), dim=-1)
        out = torch.einsum("enhts,enhs->enht", attn, values)
        return out[..., 0], attn[..., 0, :]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``f(x) = sign * prod_h o_h(x)`` for ``x`` of shape ``E x n x d``: ``E x n``."""
        heads, _ = self.attend(self.embed(x))
        return self.sign * heads.prod(dim=-1)

    def weights(self) -> torch.Tensor:
        """CLS attention over positions ``1..d``: ``E x H x d`` (keys ignore content: any ``x``)."""
        x = torch.zeros(
            self.V.shape[0], 1, self.V.shape[1], dtype=self.V.dtype, device=self.V.device
        )
        return self.attend(self.embed(x))[1][:, 0, :, 1:]

    def theta(self) -> torch.Tensor:
        """Implied query vectors ``theta_h = scale * K_hᵀ W_Q,h e_cls``: ``E x H x m``."""
        W_Q, W_K, _ = self.masked()
        q = W_Q[..., self.cls] @ self.e_cls
        return self.scale * torch.einsum("eham,eha->ehm", W_K[..., self.pos], q)

    def query_step(
        self, loss: Callable[[ClsTransformer], torch.Tensor], eta: float
    ) -> torch.Tensor:
        """One gradient step ``W_Q -= eta * dL/dW_Q`` (``W_K``, ``W_V`` frozen); the loss before.

        ``loss`` maps the block to per-replica losses (``E``); replicas do not interact, so
        the gradient of their sum is each replica's own gradient.
        """
        positive_finite("eta", eta)
        with torch.enable_grad():
            value = loss(self)
            (grad,) = torch.autograd.grad(value.sum(), self.W_Q)
        with torch.no_grad():
            self.W_Q.sub_(eta * grad)
        return value.detach()
