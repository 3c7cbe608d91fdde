"""The exact population loss with as many heads as support bits, grouped (SPEC A4, k-parity).

The same value as ``exact.parity.population_loss`` in a handful of tensor operations, so many
gradient steps at ``k = 3, 4`` are cheap (``exact.parity`` sums over every even partition of
the ``2H`` forms: 31 at ``H = 3``, 379 at ``H = 4``).

* Square term ``E[prod_h (gamma_h . x)^2]``: a block of a partition only sees how many copies
  of each head it holds, its *signature* ``c in {0, 1, 2}^H``, through the power sum
  ``P_c = sum_a prod_h gamma_h[a]^(c_h)``. Partitions with the same multiset of signatures are
  merged once per ``H`` (their cumulant products added), leaving a short polynomial in the
  ``P_c``; all ``3^H`` power sums come from ``H`` broadcast products.
* Cross term ``E[prod_h (gamma_h . x) prod_{a in S} x_a]`` with ``H = k``: a block holding two
  distinct support bits vanishes, so each block holds exactly one bit and (being even) an odd
  number of heads, hence exactly one: the term is the *permanent* of the ``H x k`` matrix of
  the heads' weights on the support bits.

``loss_and_gradient`` gives the same loss with its gradient in ``gamma`` by hand, for many GD
steps: the power sums are one batched matrix product of two halves of the heads (each half's
rows ``prod_{h in half} gamma_h^(c_h)``, ``3^(H/2) x d``), and the gradient runs back through
the same two products, so no ``3^H x d`` tensor is ever held (autograd through ``power_sums``
held several, and took about 6x the forward's time).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from functools import cache

import torch

from ..core.validate import require
from .parity import MAX_EXACT_HEADS, RADEMACHER_CUMULANTS, even_partitions


def _index(signature: tuple[int, ...]) -> int:
    """Position of a signature among the ``3^H`` power sums (head 0 is the slowest digit)."""
    out = 0
    for c in signature:
        out = 3 * out + c
    return out


@cache
def square_terms(heads: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``(coef: G, index: G x L)``: ``E[prod_h (gamma_h . x)^2] = sum_g coef_g prod_l P[index]``
    where ``P`` holds the ``3^H`` power sums followed by a ``1`` (the padding of short terms)."""
    owner = [h for h in range(heads) for _ in range(2)]  # form j is a copy of head owner[j]
    merged: dict[tuple[int, ...], float] = defaultdict(float)
    for partition in even_partitions(2 * heads):
        coef, blocks = 1.0, []
        for block in partition:
            signature = [0] * heads
            for j in block:
                signature[owner[j]] += 1
            blocks.append(_index(tuple(signature)))
            coef *= RADEMACHER_CUMULANTS[len(block)]
        merged[tuple(sorted(blocks))] += coef
    terms = [(c, b) for b, c in sorted(merged.items()) if c != 0]
    width, pad = max(len(b) for _, b in terms), 3**heads
    index = torch.tensor([list(b) + [pad] * (width - len(b)) for _, b in terms])
    return torch.tensor([c for c, _ in terms], dtype=torch.float64), index


def power_sums(gamma: torch.Tensor) -> torch.Tensor:
    """``P_c = sum_a prod_h gamma_h[a]^(c_h)`` for every ``c in {0,1,2}^H``: ``E x 3^H``."""
    E, heads, d = gamma.shape
    powers = torch.stack([torch.ones_like(gamma), gamma, gamma * gamma], dim=2)  # E x H x 3 x d
    prod = powers[:, 0]
    for h in range(1, heads):
        prod = (prod[:, :, None, :] * powers[:, h, None, :, :]).reshape(E, -1, d)
    return prod.sum(dim=-1)


def square_moment(gamma: torch.Tensor) -> torch.Tensor:
    """``E[prod_h (gamma_h . x)^2]`` per replica, ``gamma`` of shape ``E x H x d``."""
    coef, index = square_terms(gamma.shape[1])
    sums = power_sums(gamma)
    padded = torch.cat([sums, torch.ones_like(sums[:, :1])], dim=1)
    return padded[:, index.to(gamma.device)].prod(dim=-1) @ coef.to(gamma)


def support_permanent(gamma: torch.Tensor, support: torch.Tensor) -> torch.Tensor:
    """``perm(M)`` with ``M[h, a] = gamma_h[S_a]``: the cross term for ``H = k``, per replica."""
    heads = gamma.shape[1]
    idx = support[:, None, :].expand(gamma.shape[0], heads, support.shape[1]).to(gamma.device)
    mass = torch.gather(gamma, 2, idx)  # E x H x k
    perms = torch.tensor(list(itertools.permutations(range(heads))), device=gamma.device)
    rows = torch.arange(heads, device=gamma.device)
    return mass[:, rows, perms].prod(dim=-1).sum(dim=-1)


def population_loss(
    gamma: torch.Tensor, support: torch.Tensor, label_corr: float = 1.0
) -> torch.Tensor:
    """Exact ``E[(f(x) - y)^2]`` per replica for ``H = k`` heads (SPEC A4), grouped.

    ``label_corr = s_m s_t (1 - 2 rho)`` as in ``exact.parity.population_loss``.
    """
    heads = gamma.shape[1]
    require(
        heads == support.shape[1],
        f"the grouped loss needs as many heads as support bits, got {heads} and {support.shape[1]}",
    )
    require(
        heads <= MAX_EXACT_HEADS,
        f"the exact population loss handles at most {MAX_EXACT_HEADS} heads, got {heads}",
    )
    return square_moment(gamma) - 2 * label_corr * support_permanent(gamma, support) + 1


# --- the loss with its gradient by hand (many GD steps: ``train.grid_descent``) ---------------


def _half_rows(powers: list[torch.Tensor], like: torch.Tensor) -> torch.Tensor:
    """``prod_h powers_h[c_h]`` for every ``c`` of a half (at most two heads; ``powers_h`` is
    ``N x 3 x d``, rows ``1, gamma_h, gamma_h^2``): ``N x 3^len x d``, the first head slowest. No
    head: one row of ones, shaped as a row of ``like``."""
    if not powers:
        return torch.ones_like(like[:, :1])
    if len(powers) == 1:
        return powers[0]
    a, b = powers
    return (a[:, :, None, :] * b[:, None, :, :]).flatten(1, 2)


def _half_gradients(powers: list[torch.Tensor], grad: torch.Tensor) -> list[torch.Tensor]:
    """``d / d gamma_h`` of each head of a half from the gradient on its rows (``N x 3^len x
    d``; one head: its rows ``1, 2`` suffice): ``g[1] + 2 gamma g[2]`` where ``g[c]`` is the
    gradient on head ``h``'s power ``c``, the other head's powers summed out (its power 0 is 1)."""
    if len(powers) == 1:
        gamma, rows = powers[0][:, 1], grad[:, -2:]
        return [torch.addcmul(rows[:, 0], gamma, rows[:, 1], value=2.0)]
    (a, b), n, d = powers, grad.shape[0], grad.shape[-1]
    blocks = grad.view(n, 3, 3, d)
    out = []
    for mine, other, by_other in ((a, b, blocks[:, 1:]), (b, a, blocks[:, :, 1:].transpose(1, 2))):
        g = by_other[:, :, 0] + by_other[:, :, 1] * other[:, None, 1]  # N x 2 x d: powers 1, 2
        g.addcmul_(by_other[:, :, 2], other[:, None, 2])
        out.append(torch.addcmul(g[:, 0], mine[:, 1], g[:, 1], value=2.0))
    return out


def _polynomial(sums: torch.Tensor, heads: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``square_moment`` from the power sums (``N x 3^H``) and its gradient in them."""
    coef, index = square_terms(heads)
    coef, index = coef.to(sums), index.to(sums.device)
    padded = torch.cat([sums, torch.ones_like(sums[:, :1])], dim=1)
    factors = padded[:, index]  # N x terms x L
    value = factors.prod(dim=-1) @ coef
    grad = torch.zeros_like(padded)
    width = factors.shape[-1]
    for spot in range(width):
        others = [factors[..., j] for j in range(width) if j != spot]
        rest = torch.stack(others, -1).prod(-1) if others else torch.ones_like(factors[..., 0])
        grad.index_add_(1, index[:, spot], rest * coef)
    return value, grad[:, :-1]


def _permanent(mass: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``perm(M)`` per replica (``M``: ``N x H x H``) and its gradient in ``M``."""
    heads = mass.shape[1]
    perms = torch.tensor(list(itertools.permutations(range(heads))), device=mass.device)
    terms = mass[:, torch.arange(heads, device=mass.device), perms]  # N x P x H
    grad = torch.zeros_like(mass)
    for h in range(heads):
        rest = terms[..., [j for j in range(heads) if j != h]].prod(dim=-1)  # N x P
        grad[:, h].index_add_(1, perms[:, h], rest)
    return terms.prod(dim=-1).sum(dim=-1), grad


def loss_and_gradient(
    gamma: torch.Tensor, support: torch.Tensor, label_corr: float = 1.0
) -> tuple[torch.Tensor, torch.Tensor]:
    """``population_loss`` (SPEC A4, ``H = k``) per replica and its gradient in ``gamma``, by hand.

    The power sums ``P`` are ``L @ R^T`` for the rows ``L``, ``R`` of the two halves of the heads
    (``_half_rows``), so the gradient goes back as ``W R`` and ``W^T L`` with ``W = d square /
    dP``, then to each head through its powers ``(1, gamma_h, gamma_h^2)``
    (``_half_gradients``). The cross term's gradient is the permanent's cofactors, placed on the
    support bits. Equal to autograd on ``population_loss`` up to float64 rounding (another order
    of the same sums). ``gamma``: ``N x H x d``, ``support``: ``N x H``."""
    n, heads, d = gamma.shape
    require(
        heads == support.shape[1],
        f"the grouped loss needs as many heads as support bits, got {heads} and {support.shape[1]}",
    )
    require(
        heads <= MAX_EXACT_HEADS,
        f"the exact population loss handles at most {MAX_EXACT_HEADS} heads, got {heads}",
    )
    powers = []
    for g in gamma.unbind(dim=1):
        rows = torch.empty(n, 3, d, dtype=gamma.dtype, device=gamma.device)
        rows[:, 0] = 1
        rows[:, 1] = g
        torch.mul(g, g, out=rows[:, 2])
        powers.append(rows)
    half = heads // 2
    left, right = _half_rows(powers[:half], gamma), _half_rows(powers[half:], gamma)
    sums = torch.bmm(left, right.transpose(1, 2))  # N x 3^half x 3^rest: P, head 0 slowest
    square, w = _polynomial(sums.reshape(n, -1), heads)
    w = w.reshape(sums.shape)
    # a single head's gradient needs only its rows 1 and 2 (power 0 is the constant 1)
    g_left = w[:, -2:] if half == 1 else w
    g_right = w.transpose(1, 2)[:, -2:] if heads - half == 1 else w.transpose(1, 2)
    grads = _half_gradients(powers[:half], torch.bmm(g_left, right)) if half else []
    grads += _half_gradients(powers[half:], torch.bmm(g_right, left))
    grad = torch.stack(grads, dim=1)
    idx = support[:, None, :].expand(n, heads, heads).to(gamma.device)
    perm, g_mass = _permanent(torch.gather(gamma, 2, idx))
    grad.scatter_add_(2, idx, (-2 * label_corr) * g_mass)
    return square - 2 * label_corr * perm + 1, grad
