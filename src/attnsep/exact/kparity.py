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
