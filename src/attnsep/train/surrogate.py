"""A Gaussian surrogate of the empirical gradient on sparse XOR (SPEC A4 gradients, A7.5).

The empirical gradient on ``n`` samples is the mean of ``n`` i.i.d. per-sample gradients, so it
is the population gradient plus noise of mean 0 and covariance ``Sigma / n``, ``Sigma`` the
covariance of one per-sample gradient. The surrogate draws that noise as a Gaussian instead of
drawing the ``n x d`` inputs: the central limit theorem's approximation, exact in its first two
moments.

``Sigma`` is computed exactly from Rademacher moments, in the query space. With ``u_h = gamma_h
. x``, ``f = s u_1 u_2`` and ``y = s_t xi x_i x_j`` (``E xi = 1 - 2 rho``, ``xi^2 = 1``), the
per-sample gradient in ``theta_h`` is ``c_h(x) B_h^T x`` where ``B_h = (d sigma / d s)(s_h) V``
(``d x m``) and ``c_h = 2 s (f - y) u_{h'}`` (``h'`` the other head). Hence

    E[G_h G_h'^T] = 4 B_h^T E[(u_1^2 u_2^2 - 2 s y u_1 u_2 + 1) u_{h''} u_{h'''} x x^T] B_h'

and every ``E[prod_j (l_j . x) x x^T]`` is, by the cumulant expansion of
``exact.parity.rademacher_moment``, a diagonal plus a sum of rank-one terms: a partition puts
the two ``x``'s in one block (a diagonal ``kappa prod l_j[a]``) or in two (``p q^T``).
:func:`form_moment` sums those terms without forming a ``d x d`` matrix.

Cost per replica: ``O(P d m)`` for the ``P <= 379`` partitions of 8 forms (the rank-one
terms projected on ``B``), ``O(d m^2)`` for the diagonal, ``O((2m)^3)`` for the square root of
the ``2m x 2m`` covariance; independent of ``n``, where exact sampling costs ``O(n d)``.
Sparse XOR only (two heads, two support bits); ``V`` must be held (not streamed).
"""

from __future__ import annotations

from collections import Counter
from functools import cache

import torch

from .. import attention
from ..core.rng import generator
from ..core.validate import int_at_least, require
from ..exact.parity import RADEMACHER_CUMULANTS, even_partitions
from ..models.query_heads import QueryHeads
from ..tasks.parity import SparseParity
from .parity import label_correlation


@cache
def distinct_partitions(
    labels: tuple[int, ...],
) -> tuple[tuple[tuple[tuple[int, ...], ...], int], ...]:
    """The even partitions of ``range(len(labels))`` with each index replaced by its label, each
    distinct one once with its multiplicity (partitions of equal forms are equal terms)."""
    counts = Counter(
        tuple(sorted(tuple(sorted(labels[j] for j in block)) for block in partition))
        for partition in even_partitions(len(labels))
    )
    return tuple(counts.items())


def form_moment(forms: list[torch.Tensor], left: torch.Tensor, right: torch.Tensor) -> torch.Tensor:
    """``E[prod_j (l_j . x) (a_p . x) (b_q . x)]`` for ``x`` uniform on the cube: ``E x p x q``.

    ``forms``: the ``l_j`` (each ``E x d``); ``left`` (``E x p x d``) and ``right``
    (``E x q x d``): the ``a_p`` and ``b_q``. Over the even partitions of the forms plus two
    marks ``A``, ``B`` (the two ``x``'s): blocks without a mark give ``kappa sum_a prod l[a]``;
    a block with both gives the diagonal ``kappa prod l``; one with ``A`` and one with ``B``
    give the vectors ``p`` and ``q`` of a rank-one term ``p q^T``.
    """
    count = len(forms)
    mark_a, mark_b = count, count + 1
    ones = torch.ones_like(left[:, 0])
    # equal forms (the same tensor) make many partitions equal: each distinct one once, weighted
    label = [next(i for i in range(j + 1) if forms[i] is forms[j]) for j in range(count)]
    distinct = distinct_partitions((*label, mark_a, mark_b))
    products: dict[tuple[int, ...], torch.Tensor] = {}

    def product(indices: tuple[int, ...]) -> torch.Tensor:
        if indices not in products:
            out = ones
            for j in indices:
                out = out * forms[j]
            products[indices] = out
        return products[indices]

    diagonal = torch.zeros_like(ones)
    lefts, rights = [], []
    for partition, times in distinct:
        scalar = torch.full_like(ones[:, 0], float(times))
        vec_a = vec_b = both = None
        for block in partition:
            term = RADEMACHER_CUMULANTS[len(block)] * product(tuple(j for j in block if j < count))
            if mark_a in block and mark_b in block:
                both = term
            elif mark_a in block:
                vec_a = term
            elif mark_b in block:
                vec_b = term
            else:
                scalar = scalar * term.sum(dim=-1)
        if both is not None:
            diagonal = diagonal + scalar[:, None] * both
        else:
            assert vec_a is not None and vec_b is not None  # A and B in two blocks
            lefts.append(scalar[:, None] * vec_a)
            rights.append(vec_b)
    out = torch.einsum("epd,ed,eqd->epq", left, diagonal, right)
    if lefts:
        p = left @ torch.stack(lefts, dim=1).transpose(1, 2)  # E x p x T
        q = right @ torch.stack(rights, dim=1).transpose(1, 2)  # E x q x T
        out = out + p @ q.transpose(1, 2)
    return out


def query_jacobians(model: QueryHeads, scores: torch.Tensor) -> torch.Tensor:
    """``B_h^T = ((d sigma / d s)(s_h) V)^T`` for every head: ``E x H x m x d``, so that a
    weights gradient ``g_h`` maps to the query gradient ``B_h^T g_h`` (one forward-mode product
    per column of ``V``)."""
    V = model.V
    if not isinstance(V, torch.Tensor):
        raise ValueError("the surrogate gradient needs V held, not streamed")
    fn = attention.get(model.attention)
    E, H, d = scores.shape
    m = model.m
    primal = scores[:, :, None, :].expand(E, H, m, d).contiguous()
    tangent = V.transpose(1, 2)[:, None].expand(E, H, m, d).contiguous()
    _, out = torch.autograd.functional.jvp(fn, primal, tangent)  # by double backward: any map
    return out


def gradient_covariance(
    model: QueryHeads,
    task: SparseParity,
    support: torch.Tensor,
    scores: torch.Tensor,
    mean: torch.Tensor,
) -> torch.Tensor:
    """The covariance of one per-sample query gradient, exactly (``E x 2m x 2m``, heads major).

    ``mean``: the population query gradient (``E x 2 x m``), the per-sample gradient's mean.
    """
    require(
        scores.shape[1] == 2 and support.shape[1] == 2 and task.k == 2,
        "the surrogate gradient covers sparse XOR (two heads, k = 2)",
    )
    gamma = attention.get(model.attention)(scores)
    jac = query_jacobians(model, scores)  # E x 2 x m x d
    u1, u2 = gamma[:, 0], gamma[:, 1]
    bits = [
        torch.zeros_like(u1).scatter_(1, support[:, a : a + 1].to(u1.device), 1.0) for a in range(2)
    ]
    corr = label_correlation(model, task)  # s * s_t * (1 - 2 rho): E[s y | x] / (x_i x_j)
    other = (u2, u1)
    blocks = {}
    for h, g in ((0, 0), (0, 1), (1, 1)):
        pair = [other[h], other[g]]
        second = (
            form_moment([u1, u1, u2, u2, *pair], jac[:, h], jac[:, g])
            - 2 * corr * form_moment([u1, u2, *bits, *pair], jac[:, h], jac[:, g])
            + form_moment(pair, jac[:, h], jac[:, g])
        )
        blocks[h, g] = 4 * second
    blocks[1, 0] = blocks[0, 1].transpose(1, 2)
    second = torch.cat([torch.cat([blocks[h, 0], blocks[h, 1]], dim=2) for h in range(2)], dim=1)
    flat = mean.reshape(mean.shape[0], -1)
    return second - flat[:, :, None] * flat[:, None, :]


def surrogate_noise(
    covariance: torch.Tensor, n: int, seed: int, first_replica: int = 0
) -> torch.Tensor:
    """Gaussian noise with covariance ``covariance / n`` (``E x P x P`` -> ``E x P``), replica
    ``e`` from stream ``(seed, e, "surrogate")``. The square root is ``Q sqrt(max(Lambda, 0))``
    from the eigendecomposition (round-off can leave tiny negative eigenvalues)."""
    int_at_least("n", n, 1)
    values, vectors = torch.linalg.eigh(covariance)
    root = vectors * values.clamp(min=0).sqrt()[:, None, :]
    size = covariance.shape[1]
    normal = torch.stack(
        [
            torch.randn(
                size, generator=generator(seed, first_replica + e, "surrogate"), dtype=torch.float64
            )
            for e in range(covariance.shape[0])
        ]
    ).to(covariance.device, covariance.dtype)
    return (root @ normal[:, :, None])[..., 0] / n**0.5


def surrogate_query_gradient(
    model: QueryHeads,
    task: SparseParity,
    support: torch.Tensor,
    scores: torch.Tensor,
    population_grad: torch.Tensor,
    seed: int,
    n: int,
    first_replica: int = 0,
) -> torch.Tensor:
    """The population query gradient plus the Gaussian surrogate of the empirical noise on ``n``
    samples (``E x 2 x m``)."""
    cov = gradient_covariance(model, task, support, scores, population_grad)
    noise = surrogate_noise(cov, n, seed, first_replica)
    return population_grad + noise.view_as(population_grad)
