"""Sample-complexity floors of a 2-sparse parity without learning (SPEC Part G, item 2b).

Inputs are bit vectors ``b in GF(2)^d`` (``x_a = (-1)^(b_a)``), the label bit ``b_i xor b_j``
(``y = x_i x_j``; A7's ``-x_i x_j`` differs by a known sign). Two algorithms read samples one at
a time until the support is identified:

* Gaussian elimination (:func:`elimination_samples`): the parity vector ``s`` with ``<b, s> =
  label`` is determined once the inputs span ``GF(2)^d``; it uses no sparsity. The probability
  that ``n`` uniform vectors span is ``prod_{i<d} (1 - 2^(i-n))`` (:func:`span_probability`).
* Pair search (:func:`pair_samples`): keep the pairs ``{a, b}`` consistent with every label so
  far, until one is left: it uses the sparsity and needs about ``log2 C(d, 2)`` samples, the
  information floor (each sample's label is one bit).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np


def span_probability(d: int, n: int) -> float:
    """``P(n uniform vectors of GF(2)^d span it) = prod_{i<d} (1 - 2^(i-n))`` (0 when
    ``n < d``)."""
    if n < d:
        return 0.0
    return math.prod(1.0 - 2.0 ** (i - n) for i in range(d))


def span_quantile(d: int, level: float) -> int:
    """The smallest ``n`` with ``span_probability(d, n) >= level``: the exact ``n*``."""
    n = d
    while span_probability(d, n) < level:
        n += 1
    return n


def _rows(rng: np.random.Generator, d: int, block: int) -> Iterator[np.ndarray]:
    """Endless blocks of ``block`` uniform bit vectors (``block x d``, uint8)."""
    while True:
        yield rng.integers(0, 2, size=(block, d), dtype=np.uint8)


def _as_int(bits: np.ndarray) -> int:
    return int.from_bytes(np.packbits(bits, bitorder="little").tobytes(), "little")


def elimination_samples(
    rng: np.random.Generator, d: int, support: tuple[int, int]
) -> tuple[int, bool]:
    """Samples read until the inputs span ``GF(2)^d`` (incremental elimination on integer bit
    masks, the label riding in bit ``d``), and whether back substitution then recovers the
    support's indicator exactly."""
    basis: dict[int, int] = {}  # leading input bit -> row (input bits 0..d-1, label bit d)
    n = 0
    i, j = support
    for block in _rows(rng, d, d + 64):
        for bits in block:
            n += 1
            row = _as_int(bits) | ((int(bits[i]) ^ int(bits[j])) << d)
            _insert(basis, row, d)
            if len(basis) == d:
                return n, _solve(basis, d) == {i, j}
    raise AssertionError("unreachable")  # pragma: no cover


def _insert(basis: dict[int, int], row: int, d: int) -> None:
    mask = (1 << d) - 1
    while row & mask:
        top = (row & mask).bit_length() - 1
        if top not in basis:
            basis[top] = row
            return
        row ^= basis[top]


def _solve(basis: dict[int, int], d: int) -> set[int]:
    """Back substitution on a full basis: the support of ``s`` (pivots from the lowest up, each
    row reduced to ``e_p`` plus its label bit)."""
    reduced: dict[int, int] = {}
    for p in range(d):
        row = basis[p]
        for q in range(p):
            if row >> q & 1:
                row ^= reduced[q]
        reduced[p] = row
    return {p for p in range(d) if reduced[p] >> d & 1}


def pair_samples(rng: np.random.Generator, d: int, support: tuple[int, int]) -> int:
    """Samples read until exactly one pair ``{a, b}`` is consistent with every label (always
    the support: it is never eliminated)."""
    a, b = np.triu_indices(d, k=1)
    alive = np.ones(len(a), dtype=bool)
    n = 0
    i, j = support
    for block in _rows(rng, d, math.ceil(information_floor(d)) + 8):
        labels = block[:, i] ^ block[:, j]
        agree = (block[:, a] ^ block[:, b]) == labels[:, None]
        survivors = np.cumprod(agree, axis=0, dtype=bool) & alive
        counts = survivors.sum(axis=1)
        done = np.flatnonzero(counts == 1)
        if len(done):
            return n + int(done[0]) + 1
        n += len(block)
        alive = survivors[-1]
    raise AssertionError("unreachable")  # pragma: no cover


def information_floor(d: int) -> float:
    """``log2 C(d, 2)``: bits needed to name a 2-sparse support, hence labels needed."""
    return math.log2(math.comb(d, 2))
