"""Per-replica metrics of the query-vector model on sparse parity (SPEC A6, A7.6)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import torch

from ..core.rng import generator
from ..core.validate import require
from ..tasks.parity import BYTE_SIGNS

MAX_ASSIGNMENT_HEADS = 8


def support_mass(gamma: torch.Tensor, support: torch.Tensor) -> torch.Tensor:
    """Weight each head puts on each support position: ``E x H x k``."""
    idx = support[:, None, :].expand(gamma.shape[0], gamma.shape[1], support.shape[1])
    return torch.gather(gamma, 2, idx.to(gamma.device))


def top_positions(gamma: torch.Tensor) -> torch.Tensor:
    """The position each head weights most in absolute value: ``E x H``.

    Component-wise maps (linear, erf) give signed weights; a head with weight ``-1`` on
    ``i`` reads ``-x_i``, so it attends to ``i``. For softmax the weights are positive.
    """
    return gamma.abs().argmax(dim=2)


def specialized(gamma: torch.Tensor, support: torch.Tensor) -> torch.Tensor:
    """True where the heads' top positions are exactly the support, one head per position."""
    top = top_positions(gamma).sort(dim=1).values.cpu()
    return (top == support.sort(dim=1).values.cpu()).all(dim=1)


def collapsed(gamma: torch.Tensor, support: torch.Tensor) -> torch.Tensor:
    """True where every head's top position is in the support but two heads share one."""
    top = top_positions(gamma).sort(dim=1).values.cpu()
    on_support = (top[:, :, None] == support.cpu()[:, None, :]).any(dim=2).all(dim=1)
    repeated = (top[:, 1:] == top[:, :-1]).any(dim=1)
    return on_support & repeated


def l1_to_targets(gamma: torch.Tensor, support: torch.Tensor) -> torch.Tensor:
    """``eps[e, h, a] = || gamma_h - e_{S_a} ||_1``: ``E x H x k``."""
    mass = support_mass(gamma, support)
    total = gamma.abs().sum(dim=2, keepdim=True)
    return total - mass.abs() + (1 - mass).abs()


def best_assignment(
    gamma: torch.Tensor, support: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The certified error bound and the head-to-support assignment that attains it (SPEC A6).

    If head ``h`` targets support bit ``S_pi(h)`` then ``|gamma_h . x - x_{S_pi(h)}| <= eps_h``
    for every ``x``, hence ``|f - y| <= prod_h (1 + eps_h) - 1`` (``eps_1 + eps_2 + eps_1 eps_2``
    for XOR); the bound is minimized over the assignments ``pi``. Needs ``H = k`` and the
    model's output sign equal to the task's. Returns ``(bound: E, pi: E x H)``.
    """
    heads, k = gamma.shape[1], support.shape[1]
    require(heads == k, f"certified error needs as many heads as support bits, got {heads} and {k}")
    require(
        heads <= MAX_ASSIGNMENT_HEADS,
        f"certified error supports at most {MAX_ASSIGNMENT_HEADS} heads",
    )
    eps = l1_to_targets(gamma, support)
    perms = torch.tensor(list(itertools.permutations(range(k))), device=eps.device)  # P x H
    rows = torch.arange(heads, device=eps.device)
    bounds = torch.stack([(1 + eps[:, rows, perm]).prod(dim=1) - 1 for perm in perms])  # P x E
    bound, best = bounds.min(dim=0)
    return bound, perms[best]


def certified_error(gamma: torch.Tensor, support: torch.Tensor) -> torch.Tensor:
    """``max_x |f(x) - y(x)| <= certified_error`` for every input of the cube (SPEC A6)."""
    return best_assignment(gamma, support)[0]


def assigned_mass(gamma: torch.Tensor, support: torch.Tensor) -> torch.Tensor:
    """Each head's weight on the support bit it is assigned to: ``E x H``."""
    _, perm = best_assignment(gamma, support)
    return support_mass(gamma, support).gather(2, perm[:, :, None]).squeeze(2)


SIGN_TEST_BYTES = 1 << 20
"""Random bytes (eight coordinates each) a sign-error chunk draws per replica."""


def sign_error(
    gamma: torch.Tensor,
    support: torch.Tensor,
    sign: int,
    samples: int,
    generators: Sequence[torch.Generator],
) -> torch.Tensor:
    """Each replica's test sign error (SPEC A7.6): the share of ``samples`` fresh inputs
    ``x ~ Uniform{-1, +1}^d`` with ``sign f(x) != y``, ``f(x) = sign * prod_h (gamma_h . x)``
    and ``y = sign * prod_{a in S} x_a`` (clean labels; ``f(x) = 0`` counts as an error, as in
    the FCN's test). ``gamma`` is ``E x H x d``, ``support`` ``E x k``; replica ``e`` draws its
    inputs from ``generators[e]`` in chunks whose size depends on ``d`` only. Returns ``E``.

    Each random byte gives eight coordinates, and ``gamma_h . x`` sums, over the bytes, a
    lookup in a table of the ``256`` partial dot products of that byte's coordinates: one
    table per head, read with ``numpy.take`` (2-3x faster than indexing a ``torch`` table
    of all heads at once, which fetched the heads' rows together).
    """
    E, heads, d = gamma.shape
    require(len(generators) == E, f"need one generator per replica, got {len(generators)} for {E}")
    width = (d + 7) // 8
    rows = max(1, SIGN_TEST_BYTES // width)
    offsets = 256 * np.arange(width, dtype=np.intp)
    padded = torch.nn.functional.pad(gamma.detach().cpu().double(), (0, 8 * width - d))
    errors = torch.empty(E, dtype=torch.float64)
    for e, gen in enumerate(generators):
        by_byte = torch.einsum("bt,hct->hcb", BYTE_SIGNS, padded[e].reshape(heads, width, 8))
        tables = by_byte.reshape(heads, width * 256).numpy()
        wrong = 0
        for first in range(0, samples, rows):
            n = min(rows, samples - first)
            raw = torch.randint(0, 256, (n, width), generator=gen, dtype=torch.uint8).numpy()
            index = raw.astype(np.intp) + offsets
            f = sign * np.prod([table.take(index).sum(axis=1) for table in tables], axis=0)
            bits = [(raw[:, a // 8] >> (a % 8)) & 1 for a in support[e].tolist()]
            y = sign * np.prod(2.0 * np.stack(bits, axis=1) - 1, axis=1)
            wrong += int((np.sign(f) != y).sum())
        errors[e] = wrong / samples
    return errors


TEST_STREAM = "one-step-test"
"""The stream of a replica's fresh test inputs after a one-step run: ``(seed, e, TEST_STREAM)``."""


def step_sign_error(
    gamma: torch.Tensor,
    support: torch.Tensor,
    certified: torch.Tensor,
    sign: int,
    samples: int,
    seed: int,
    first_replica: int = 0,
) -> torch.Tensor:
    """Each replica's test sign error after a step (``sign_error`` on ``samples`` fresh inputs of
    stream ``(seed, e, TEST_STREAM)``, replica ``e = first_replica + row``). A replica whose
    certified error (SPEC A6) is below 1 has ``sign f(x) = y`` on every input of the cube, so its
    error is 0 without sampling. Returns ``E`` (CPU)."""
    errors = torch.zeros(gamma.shape[0], dtype=torch.float64)
    todo = torch.nonzero(certified.cpu() >= 1).flatten()
    if len(todo):
        gens = [generator(seed, first_replica + int(e), TEST_STREAM) for e in todo]
        errors[todo] = sign_error(gamma[todo.to(gamma.device)], support[todo], sign, samples, gens)
    return errors
