"""Population gradient descent on the selector's full ``W`` from ``W = 0`` (SPEC B2, B3; SPEC
Part G, item B5.7): its exact reduction to the scale ``α`` of ``W = αW*``, and the curvature of
the population loss around that path in every other direction of ``W``.

**Reduction.** Logits ``a_i = z_iᵀ W z_q`` with ``z_q = (0 ; u_y)`` read only the columns ``d:``
of ``W``: ``a_i = x_iᵀ W_xp u_y + p_iᵀ W_pp u_y`` (``W_xp = W[:d, d:]``, ``W_pp = W[d:, d:]``);
the columns ``:d`` get gradient exactly 0 and stay 0. Three symmetries of the population loss
``L`` then pin the population-gradient path from ``W = 0``:

* ``x → −x`` (Gaussian tokens): ``L(W_xp, W_pp) = L(−W_xp, W_pp)``, so ``∂L/∂W_xp = 0`` at
  ``W_xp = 0`` whatever ``W_pp``: ``W_xp`` stays 0, and the loss stays exact over the tokens;
* ``p → Op`` for every orthogonal ``O`` (stochastic encodings, i.i.d. isotropic):
  ``L(W_pp) = L(OᵀW_ppO)``, so ``∇L(αI)`` commutes with every ``O`` and is a multiple of ``I``:
  ``W_pp`` stays ``α_t I``, and ``W_t = α_t W*`` (``cos(W_t, W*) = 1``);
* along that path ``∇_W L = (L'(α) / m_p) W*``, so GD with rate ``lr_per_dim · m_p`` on ``W``
  is GD with rate ``lr_per_dim`` on ``α`` (:func:`alpha_descent`).

**Stability.** The same symmetries make the Hessian of ``L`` at ``αW*`` a scalar on each of its
invariant blocks: ``I`` (the scale), the symmetric traceless and the antisymmetric parts of
``W_pp``, and ``W_xp`` (``O(d) x O(m_p)`` acts irreducibly on it; ``x → −x`` kills its coupling
to ``W_pp``). One second derivative along one unit direction of each block is its eigenvalue
(:func:`curvatures`). The limit ``α*W*`` is a local minimum of ``L`` in the full ``W`` (so GD
returns to it after any small perturbation: rounding, sampling) when all four are positive; a
negative one makes it a saddle that GD leaves.

Monte Carlo (*choice*): over ``(y, PE)`` only, exact over the tokens where ``W_xp = 0``; common
random numbers (one draw reused at every ``α`` or ``ε``), the encodings drawn by their law
(``exact.products``, ``train.selection.law_draws``). ``W_xp``'s curvature needs the tokens: one
draw of them, shared by ``±ε``. Streams ``(seed, "full-w", part, T, q, m_p)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ..core.rng import stream_seed
from ..exact import products
from ..exact.family import family_products
from .selection import law_draws, law_terms, sampled_law_terms

BLOCKS = ("scale", "symmetric", "antisymmetric", "content")
"""The Hessian's invariant blocks at ``αW*`` (module docstring)."""


@dataclass(frozen=True)
class AlphaDescent:
    """GD on ``α`` (:func:`alpha_descent`): the final ``α``, steps taken, the rule that stopped
    (``converged`` or ``budget``), and ``α`` after every step (``path[0] = 0``)."""

    alpha: float
    steps: int
    rule: str
    path: list[float]


def family_draw(
    T: int, q: int, m_p: int, samples: int, seed: int, part: str, kind: str = "sphere"
) -> torch.Tensor:
    """The products ``α``'s loss is read from (``samples x T``, subset first; the family's
    ``beta`` recipe), stream ``(seed, "full-w", part, T, q, m_p)``."""
    rng = np.random.default_rng(stream_seed(seed, "full-w", part, T, q, m_p))
    G_in, G_out = family_products(T, q, m_p, samples, rng, kind)
    return torch.from_numpy(np.concatenate([G_in, G_out], axis=1))


def alpha_descent(
    T: int,
    q: int,
    m_p: int,
    d: int,
    *,
    samples: int,
    seed: int,
    lr_per_dim: float,
    steps: int,
    tol: float = 1e-6,
    kind: str = "sphere",
) -> AlphaDescent:
    """Population GD on the full ``W`` from 0, reduced to ``α`` (module docstring):
    ``α ← α − lr_per_dim · L'(α)``, ``L`` exact over the tokens, Monte Carlo over ``samples``
    draws of ``(y, PE)`` (common to every step). Stops when a step moves ``α`` by less than
    ``tol (1 + α)`` (``converged``) or after ``steps`` steps (``budget``)."""
    G = family_draw(T, q, m_p, samples, seed, "descent", kind)
    alpha, path = 0.0, [0.0]
    for step in range(1, steps + 1):
        a = torch.tensor(alpha, dtype=torch.float64, requires_grad=True)
        loss = products.selection_loss(a * G, q, d).mean()
        (grad,) = torch.autograd.grad(loss, a)
        move = lr_per_dim * float(grad)
        if not math.isfinite(move):
            raise ValueError(f"alpha descent diverged at step {step}: lower lr_per_dim")
        alpha -= move
        path.append(alpha)
        if abs(move) < tol * (1 + abs(alpha)):
            return AlphaDescent(alpha, step, "converged", path)
    return AlphaDescent(alpha, steps, "budget", path)


def loss_at(alpha: float, T: int, q: int, m_p: int, d: int, G: torch.Tensor) -> np.ndarray:
    """Per-sequence loss of ``W = αW*`` on the products ``G`` (``samples x T``, subset first)."""
    return products.selection_loss(alpha * G, q, d).numpy()


def directions(m_p: int, d: int, rng: np.random.Generator) -> dict[str, torch.Tensor]:
    """One unit (Frobenius) direction per block: ``I / sqrt(m_p)``, a symmetric traceless and an
    antisymmetric ``m_p x m_p`` matrix, and a ``d x m_p`` content block (Gaussian, projected)."""
    G = torch.from_numpy(rng.standard_normal((m_p, m_p)))
    sym = (G + G.T) / 2
    sym = sym - torch.trace(sym) / m_p * torch.eye(m_p, dtype=torch.float64)
    out = {
        "scale": torch.eye(m_p, dtype=torch.float64),
        "symmetric": sym,
        "antisymmetric": (G - G.T) / 2,
        "content": torch.from_numpy(rng.standard_normal((d, m_p))),
    }
    return {k: v / torch.linalg.matrix_norm(v) for k, v in out.items()}


def curvatures(
    alpha: float,
    T: int,
    q: int,
    m_p: int,
    d: int,
    *,
    samples: int,
    seed: int,
    step: float = 0.1,
    kind: str = "sphere",
) -> dict[str, float]:
    """``m_p x`` the second derivative of ``L`` at ``αW*`` along each block's unit direction
    (central differences ``[L(+ε) − 2L(0) + L(−ε)] / ε²`` on common random numbers, ``ε = step ·
    α sqrt(m_p)``, a ``step`` fraction of ``‖αW*‖``). The ``scale`` entry is ``L''(α)``; the
    others are on the same footing (``m_p`` times a Frobenius curvature)."""
    eps = step * max(alpha, 1e-3) * math.sqrt(m_p)
    key = ("full-w", "curvature", T, q, m_p)
    draws = law_draws(seed, range(1), key, samples, T, q, m_p, kind)
    rng = np.random.default_rng(stream_seed(seed, "full-w", "directions", T, q, m_p))
    ways = directions(m_p, d, rng)
    center = alpha * torch.eye(m_p, dtype=torch.float64)

    def position(W_pp: torch.Tensor) -> float:
        return float(law_terms(W_pp[None], draws, d, kind)[0].mean())

    out = {}
    base = position(center)
    for name in BLOCKS[:3]:
        plus, minus = position(center + eps * ways[name]), position(center - eps * ways[name])
        out[name] = m_p * (plus - 2 * base + minus) / eps**2
    tokens = np.random.default_rng(stream_seed(seed, "full-w", "tokens", T, q, m_p))
    X = torch.from_numpy(tokens.standard_normal((1, samples, T, d)))

    def content(shift: float) -> float:
        cols = torch.cat([shift * ways["content"], center])[None]
        return float(sampled_law_terms(cols, X, draws, kind)[0].mean())

    out["content"] = m_p * (content(eps) - 2 * content(0.0) + content(-eps)) / eps**2
    return out


def full_gradient(
    W: torch.Tensor, X: torch.Tensor, P: torch.Tensor, y: torch.Tensor
) -> torch.Tensor:
    """Autograd gradient of the sampled loss ``mean ‖f − STS‖²`` in the full ``W`` (``D x D``) on
    explicit tokens ``X`` (``n x T x d``), encodings ``P`` (``n x T x m_p``) and subsets ``y``
    (``n x q``), through ``models.selector.forward`` (SPEC B2) — no reduction assumed."""
    from ..models.selector import forward
    from ..tasks.selection import sts

    W = W.detach().clone().requires_grad_(True)
    f, _ = forward(W[None], X[None], P[None], y[None])
    loss = (f - sts(X[None], y[None])).pow(2).sum(dim=-1).mean()
    (grad,) = torch.autograd.grad(loss, W)
    return grad


def symmetry_check(
    alpha: float, T: int, q: int, m_p: int, d: int, *, samples: int, seed: int
) -> dict[str, float]:
    """The reduction verified by autograd on the full ``W = αW*`` (explicit sphere encodings and
    Gaussian tokens, ``samples`` sequences and their mirror images ``−X``): the largest entry of
    the gradient's Frobenius norm in ``W[:, :d]`` and in ``W_xp``, each over its norm in ``W_pp``
    (``columns``, ``content``: 0 up to rounding), and the same for ``W_xp`` without the mirror
    images (``content_plain``: sampling noise only, ``O(samples^−1/2)``)."""
    rng = np.random.default_rng(stream_seed(seed, "full-w", "autograd", T, q, m_p))
    P = torch.from_numpy(rng.standard_normal((samples, T, m_p)))
    P = P / torch.linalg.vector_norm(P, dim=-1, keepdim=True)
    X = torch.from_numpy(rng.standard_normal((samples, T, d)))
    y = torch.from_numpy(np.argsort(rng.random((samples, T)), axis=1)[:, :q].copy())
    W = torch.zeros(d + m_p, d + m_p, dtype=torch.float64)
    W[d:, d:] = alpha * torch.eye(m_p, dtype=torch.float64)
    mirrored = full_gradient(W, torch.cat([X, -X]), torch.cat([P, P]), torch.cat([y, y]))
    plain = full_gradient(W, X, P, y)

    def share(grad: torch.Tensor, block: torch.Tensor) -> float:
        return float(torch.linalg.matrix_norm(block) / torch.linalg.matrix_norm(grad[d:, d:]))

    return {
        "columns": share(mirrored, mirrored[:, :d]),
        "content": share(mirrored, mirrored[:d, d:]),
        "content_plain": share(plain, plain[:d, d:]),
    }
