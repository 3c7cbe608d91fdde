"""Exact population loss of the query-vector model on k-sparse parity (SPEC A4).

For ``x`` uniform on ``{-1,+1}^d`` every moment of linear forms has a finite expansion in
the joint cumulants of Rademacher variables (``kappa_2 = 1, kappa_4 = -2, kappa_6 = 16, ...``,
odd ones zero):

    E[prod_j (l_j . x)] = sum over partitions of the forms into even blocks B of
                          prod_B kappa_|B| * sum_a prod_{j in B} l_j[a].

With ``f = s_m prod_h (gamma_h . x)`` and ``y = s_t xi prod_{a in S} x_a`` (``E xi = 1 - 2 rho``):

    L = E[prod_h (gamma_h . x)^2]
        - 2 s_m s_t (1 - 2 rho) E[prod_h (gamma_h . x) prod_{a in S} x_a] + 1.

For two heads (``g, h``) this is SPEC A4's
``|g|^2 |h|^2 + 2 (g.h)^2 - 2 sum_a g_a^2 h_a^2 - 2 (g_i h_j + g_j h_i) + 1``.
Cost: ``O(d)`` per partition per replica. ``enumeration_loss`` and ``worst_case_error``
enumerate the cube for small ``d`` and serve as the reference.
"""

from __future__ import annotations

import itertools
from functools import cache

import torch

from ..configs import MAX_EXACT_HEADS
from ..core.validate import require

# Joint cumulants of one Rademacher variable: kappa_{2n} = 2^{2n} (2^{2n} - 1) B_{2n} / (2n).
RADEMACHER_CUMULANTS = {2: 1.0, 4: -2.0, 6: 16.0, 8: -272.0, 10: 7936.0, 12: -353792.0}
MAX_ENUMERATION_D = 22


@cache
def even_partitions(count: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """All partitions of ``range(count)`` into blocks of even size (none when ``count`` is odd)."""
    if count == 0:
        return ((),)
    rest = range(1, count)
    out = []
    for size in range(1, count, 2):  # the block holding 0 has 1 + size elements
        for partners in itertools.combinations(rest, size):
            remaining = [i for i in rest if i not in partners]
            for tail in even_partitions(len(remaining)):
                mapped = (tuple(remaining[i] for i in block) for block in tail)
                out.append(((0, *partners), *mapped))
    return tuple(out)


def rademacher_moment(forms: list[torch.Tensor]) -> torch.Tensor:
    """``E[prod_j (l_j . x)]`` for ``x`` uniform on the cube; each form is ``... x d``."""
    most = max(RADEMACHER_CUMULANTS)
    require(
        len(forms) <= most, f"the moment expansion handles at most {most} forms, got {len(forms)}"
    )
    total = torch.zeros(forms[0].shape[:-1], dtype=forms[0].dtype, device=forms[0].device)
    for partition in even_partitions(len(forms)):
        term = torch.ones_like(total)
        for block in partition:
            prod = forms[block[0]]
            for j in block[1:]:
                prod = prod * forms[j]
            term = term * (RADEMACHER_CUMULANTS[len(block)] * prod.sum(dim=-1))
        total = total + term
    return total


def two_head_loss(
    gamma: torch.Tensor, support: torch.Tensor, label_corr: float = 1.0
) -> torch.Tensor:
    """SPEC A4's closed form, ``H = k = 2``: ``gamma`` is ``E x 2 x d``, ``support`` ``E x 2``."""
    g, h = gamma[:, 0], gamma[:, 1]
    gg, hh, gh = (g * g).sum(-1), (h * h).sum(-1), (g * h).sum(-1)
    diag = (g * g * h * h).sum(-1)
    gs, hs = g.gather(1, support), h.gather(1, support)
    cross = gs[:, 0] * hs[:, 1] + gs[:, 1] * hs[:, 0]
    return gg * hh + 2 * gh**2 - 2 * diag - 2 * label_corr * cross + 1


def population_loss(
    gamma: torch.Tensor, support: torch.Tensor, label_corr: float = 1.0
) -> torch.Tensor:
    """Exact ``E[(f(x) - y)^2]`` per replica from the weights ``gamma`` (``E x H x d``).

    ``label_corr = s_m s_t (1 - 2 rho)``: model sign times task sign times label correlation.
    """
    if gamma.shape[1] == 2 and support.shape[1] == 2:
        return two_head_loss(gamma, support, label_corr)
    heads = gamma.shape[1]
    require(
        heads <= MAX_EXACT_HEADS and heads + support.shape[1] <= 2 * MAX_EXACT_HEADS,
        f"the exact population loss handles at most {MAX_EXACT_HEADS} heads, got {heads}",
    )
    rows = list(gamma.unbind(dim=1))
    bits = [
        torch.zeros_like(rows[0]).scatter_(1, support[:, a : a + 1], 1.0)
        for a in range(support.shape[1])
    ]
    square = rademacher_moment([h for h in rows for _ in range(2)])
    cross = rademacher_moment(rows + bits)
    return square - 2 * label_corr * cross + 1


def cube(d: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """All ``2^d`` points of ``{-1,+1}^d`` (``2^d x d``)."""
    require(d <= MAX_ENUMERATION_D, f"enumeration needs d <= {MAX_ENUMERATION_D}, got d={d}")
    codes = torch.arange(2**d)[:, None]
    bits = (codes >> torch.arange(d)) & 1
    return (2 * bits - 1).to(dtype)


def enumeration_terms(gamma: torch.Tensor, support: torch.Tensor, sign: int, task_sign: int):
    """``(f(x), y(x))`` over the whole cube, per replica: two ``E x 2^d`` tensors."""
    x = cube(gamma.shape[2], gamma.dtype).to(gamma.device)
    f = sign * (x @ gamma.transpose(1, 2)).prod(dim=2)  # E x 2^d
    y = task_sign * x[:, support].prod(dim=2).transpose(0, 1)  # (2^d x E x k) -> E x 2^d
    return f, y


def enumeration_loss(
    gamma: torch.Tensor,
    support: torch.Tensor,
    sign: int = -1,
    task_sign: int = -1,
    noise: float = 0.0,
) -> torch.Tensor:
    """``E[(f - y)^2]`` by summing over all ``2^d`` inputs (and the two label outcomes)."""
    f, y = enumeration_terms(gamma, support, sign, task_sign)
    return ((1 - noise) * (f - y) ** 2 + noise * (f + y) ** 2).mean(dim=1)


def worst_case_error(
    gamma: torch.Tensor, support: torch.Tensor, sign: int = -1, task_sign: int = -1
) -> torch.Tensor:
    """``max_x |f(x) - y(x)|`` over all ``2^d`` inputs (clean labels), per replica."""
    f, y = enumeration_terms(gamma, support, sign, task_sign)
    return (f - y).abs().amax(dim=1)
