"""A linear readout on frozen random features, fitted exactly over the whole cube (SPEC Part G,
item 1: the paper's "linear classifiers with fixed embeddings").

Features ``phi_j(x) = relu(w_j . x / sqrt(d) + b_j)`` (``step``: ``1{w_j . x / sqrt(d) + b_j >
0}``), ``w_j ~ N(0, I_d)``, ``b_j ~ N(0, 1)``, frozen; the readout ``a . phi(x)`` (no intercept:
a parity of degree ``k >= 1`` has mean 0) is the least-squares fit over all ``2^d`` points of
``{-1,+1}^d`` (the population optimum of a linear readout), so a failure is the embedding's, not
the training's. Success (SPEC A7.6's definition, exact over the cube): sign error ``<= 1%``.

Features are nested: the first ``N`` columns of one draw. The fit on the first ``N`` columns is
the projection ``sum_{j <= N} q_j (q_j . y)`` on the orthonormal ``q_1, q_2, ...`` of the
feature matrix's QR, so one QR gives the readout at every ``N``. It is built block by block
(classical Gram-Schmidt twice against the earlier blocks, then a Householder QR of the block)
and stops at the first ``N`` whose readout succeeds: the work is ``~ 4 * 2^d * N_r^2``. A
feature that adds nothing to the span (zero, or affine, on the whole cube: frequent at small
``d``) is counted and skipped, so ``N_r`` may exceed ``2^d``; once the features span all ``2^d``
functions the readout is exact.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..core.rng import stream_seed
from ..core.validate import require

FEATURES = ("relu", "step")
"""The random feature maps: ``relu(z)`` and ``1{z > 0}`` of ``z = w . x / sqrt(d) + b``."""
BLOCK = 64
"""Feature columns drawn and orthogonalized at once."""
DEPENDENT = 1e-9
"""A column whose part orthogonal to the earlier ones is below this fraction of its norm adds
nothing to the span (e.g. a feature that is 0 on the whole cube, or a repeat) and is skipped."""


def cube(d: int) -> np.ndarray:
    """All ``2^d`` points of ``{-1,+1}^d`` (``2^d x d``, float64; point ``c`` has bit ``a`` of
    ``c`` as coordinate ``a``)."""
    require(1 <= d <= 20, f"the cube needs 1 <= d <= 20, got d={d}")
    codes = np.arange(2**d)[:, None]
    return (2 * ((codes >> np.arange(d)) & 1) - 1).astype(np.float64)


def features(x: np.ndarray, w: np.ndarray, b: np.ndarray, kind: str = "relu") -> np.ndarray:
    """``phi(x)`` for the rows of ``x`` (``points x d``), weights ``w`` (``d x N``) and biases
    ``b`` (``N``): ``points x N``."""
    require(kind in FEATURES, f"features must be one of {', '.join(FEATURES)}, got {kind!r}")
    z = x @ w / math.sqrt(x.shape[1]) + b
    return np.maximum(z, 0.0) if kind == "relu" else (z > 0).astype(np.float64)


@dataclass(frozen=True)
class Replica:
    """One replica's random draws: its support and the stream its features come from."""

    seed: int
    d: int
    k: int
    index: int

    def support(self) -> np.ndarray:
        """``S``, ``k`` distinct coordinates uniform over ``[d]`` (sorted)."""
        rng = np.random.default_rng(stream_seed(self.seed, "fixed", self.d, self.k, self.index))
        return np.sort(rng.choice(self.d, self.k, replace=False))

    def weights(self, block: int) -> tuple[np.ndarray, np.ndarray]:
        """Columns ``block * BLOCK ...`` of the nested draw: ``(w, b)``, ``d x BLOCK`` and
        ``BLOCK``; the same whatever the cap, so ``N_r`` never depends on it."""
        keys = ("fixed-features", self.d, self.k, self.index, block)
        rng = np.random.default_rng(stream_seed(self.seed, *keys))
        return rng.standard_normal((self.d, BLOCK)), rng.standard_normal(BLOCK)


def parity(x: np.ndarray, support: np.ndarray) -> np.ndarray:
    """``y = prod_{a in S} x_a`` on the rows of ``x``."""
    return np.prod(x[:, support], axis=1)


def sign_error(prediction: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Fraction of points whose prediction's sign differs from ``y`` (0 counts as wrong), per
    column of ``prediction`` (``points x columns``) or for one vector."""
    return np.mean(prediction * (y if prediction.ndim == 1 else y[:, None]) <= 0, axis=0)


@dataclass(frozen=True)
class Threshold:
    """The first ``N`` whose readout succeeds (``None``: none up to ``cap``), the sign error and
    mean squared error of the readout there (at ``cap`` when none succeeds), and the columns
    orthogonalized."""

    n: int | None
    error: float
    mse: float
    columns: int


def first_success(
    x: np.ndarray,
    y: np.ndarray,
    columns: Callable[[int], np.ndarray],
    cap: int,
    target: float = 0.01,
) -> Threshold:
    """The smallest ``N <= cap`` whose least-squares readout on the first ``N`` columns has sign
    error ``<= target`` over the rows of ``x``; ``columns(block)`` gives the feature block
    ``block`` (``points x BLOCK``). Module docstring: one incremental QR, every prefix."""
    points = len(y)
    q = np.empty((points, min(cap, points)), order="F")
    fit = np.zeros(points)
    rank = n = 0
    while n < cap and rank < points:
        block = columns(n // BLOCK)[:, : cap - n]
        basis, kept = _orthonormal(block, q[:, :rank])
        basis, kept = basis[:, : points - rank], kept[: points - rank]
        prefix = fit[:, None] + np.cumsum(basis * (basis.T @ y), axis=1)
        errors = sign_error(prefix, y)
        passing = np.nonzero(errors <= target)[0]
        if len(passing):
            j = int(passing[0])
            n_r = n + int(kept[j]) + 1
            return Threshold(n_r, float(errors[j]), _mse(prefix[:, j], y), n + block.shape[1])
        if basis.shape[1]:
            fit = prefix[:, -1]
        q[:, rank : rank + basis.shape[1]] = basis
        rank += basis.shape[1]
        n += block.shape[1]
    return Threshold(None, float(sign_error(fit, y)), _mse(fit, y), n)


def _mse(prediction: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean((prediction - y) ** 2))


def _orthonormal(block: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """An orthonormal basis of ``block``'s part orthogonal to ``q``'s columns, one column per
    independent column of ``block`` in its order (Gram-Schmidt twice, then Householder QR), and
    for each of them the index in ``block`` of the column it comes from (once the basis spans
    every row, the later columns add nothing and are left out). A column whose part
    orthogonal to ``q`` and to the block's earlier columns is below ``DEPENDENT`` of its norm
    is left out, and the QR redone without it (its ``R`` diagonal is that part's norm)."""
    p = np.array(block, dtype=np.float64, order="F")
    norms = np.maximum(np.linalg.norm(p, axis=0), np.finfo(float).tiny)
    for _ in range(2):
        if q.shape[1]:
            p -= q @ (q.T @ p)
    keep = np.linalg.norm(p, axis=0) > DEPENDENT * norms
    while True:
        basis, r = np.linalg.qr(p[:, keep])
        diagonal = np.abs(np.diag(r))  # as many as the basis has columns
        small = np.nonzero(diagonal <= DEPENDENT * norms[keep][: len(diagonal)])[0]
        if not len(small):
            return basis, np.nonzero(keep)[0][: basis.shape[1]]
        keep[np.nonzero(keep)[0][small[0]]] = False


def replica_threshold(
    replica: Replica, cap: int, kind: str = "relu", target: float = 0.01
) -> tuple[Threshold, np.ndarray]:
    """``first_success`` for one replica: its parity, its nested features over the whole cube;
    returns the threshold and the support."""
    x = cube(replica.d)
    support = replica.support()

    def columns(block: int) -> np.ndarray:
        return features(x, *replica.weights(block), kind)

    return first_success(x, parity(x, support), columns, cap, target), support


def walsh_count(d: int, k: int) -> int:
    """Walsh functions of degree ``<= k`` on ``{-1,+1}^d``: ``sum_{j <= k} C(d, j)``
    (``~ d^k / k!``), the dimension a readout needs to represent every ``k``-sparse parity."""
    return sum(math.comb(d, j) for j in range(k + 1))
