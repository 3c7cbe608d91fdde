"""Sparse XOR on Gaussian inputs, axis-aligned or in a rotated basis (SPEC Part G, item 7).

Inputs ``x ~ N(0, I_d)``; target ``y = -<u, x><v, x>`` with ``u, v`` orthonormal: the axis task
takes ``u = e_i, v = e_j``, the rotated task a Haar-random orthonormal pair. Both have
``E y^2 = 1``. The query-vector model (SPEC A2) predicts ``f = -(g.x)(h.x)`` with attention
weights ``g, h``, so ``f - y = -x^T C x`` with ``A = (g h^T + h g^T)/2``, ``B = (u v^T + v u^T)/2``,
``C = A - B``, and the Gaussian moments give the population loss in closed form,
``L = E (x^T C x)^2 = tr(C)^2 + 2 tr(C^2)``, computed from inner products in ``O(d)``.
"""

from __future__ import annotations

import torch


def _dot(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a * b).sum(dim=-1)


def population_loss(
    g: torch.Tensor, h: torch.Tensor, u: torch.Tensor, v: torch.Tensor
) -> torch.Tensor:
    """``E_x [((g.x)(h.x) - (u.x)(v.x))^2]`` for ``x ~ N(0, I_d)``, over the last axis
    (leading axes broadcast): ``tr(C)^2 + 2 tr(C^2)`` with ``tr A = g.h``,
    ``2 tr A^2 = |g|^2 |h|^2 + (g.h)^2``, ``2 tr AB = (g.u)(h.v) + (g.v)(h.u)`` and the same for
    ``B``; any ``u, v`` (not only orthonormal ones). Differentiable (autograd)."""
    gh, uv = _dot(g, h), _dot(u, v)
    cross = _dot(g, u) * _dot(h, v) + _dot(g, v) * _dot(h, u)
    squares_a = _dot(g, g) * _dot(h, h) + gh**2
    squares_b = _dot(u, u) * _dot(v, v) + uv**2
    return (gh - uv) ** 2 + squares_a - 2 * cross + squares_b


def sampled_loss(
    g: torch.Tensor, h: torch.Tensor, u: torch.Tensor, v: torch.Tensor, x: torch.Tensor
) -> torch.Tensor:
    """The Monte Carlo path of :func:`population_loss`: the mean of
    ``((g.x)(h.x) - (u.x)(v.x))^2`` over the rows of ``x`` (``E x n x d``; ``g, h, u, v``
    ``E x d``)."""

    def proj(w: torch.Tensor) -> torch.Tensor:
        return torch.bmm(x, w.unsqueeze(-1)).squeeze(-1)

    return ((proj(g) * proj(h) - proj(u) * proj(v)) ** 2).mean(dim=-1)


def simplex_floor_bound(u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """A proven lower bound on the loss of ANY pair of weight vectors ``g, h`` on the simplex
    (softmax weights, whatever the embeddings), for orthonormal ``u, v``: with
    ``U = max(|u|_inf, |v|_inf)``, ``L >= 1 - 4U^2 + U^4`` (clipped at 0).

    Proof: ``L = 1 + 2(g.h)^2 + |g|^2|h|^2 - 2[(g.u)(h.v) + (g.v)(h.u)]``; on the simplex
    ``|g.u| <= |g|_1 |u|_inf = |u|_inf`` and ``|g.u| <= |g|`` (Cauchy-Schwarz), so with
    ``a = |g|, b = |h|`` the bracket is at most ``2 min(U, a) min(U, b)``; ``t^2 - 4t`` falls on
    ``[0, 2]``, so the least value of ``a^2 b^2 - 4 min(U,a) min(U,b)`` is at ``a = b = U``.
    For the axis task ``U = 1`` and the bound is 0 (reached as ``g -> e_i, h -> e_j``); for a
    Haar pair ``U^2 ~ 2 ln d / d``, so the bound tends to 1, the trivial predictor's loss."""
    U = torch.maximum(u.abs().amax(dim=-1), v.abs().amax(dim=-1))
    return (1 - 4 * U**2 + U**4).clamp(min=0.0)
