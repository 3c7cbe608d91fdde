"""The law of the products ``p_i · v`` and the loss on them: one place for SPEC B2–B3's selector
with the position block alone (used by :mod:`.family`, :mod:`.family_law`,
:mod:`attnsep.train.selection_threshold` and :mod:`attnsep.train.selection`).

With logits ``a_i = p_i · v`` (``v = W u_y``, ``u_y = Σ_{i∈y} p_i``; ``W = αI`` gives ``v = α
u_y``) the encodings enter through

* ``i ∈ y``: the ``q`` encodings of the subset, drawn as they are (:func:`subset`);
* ``i ∉ y``: ``p_i`` is isotropic and independent of ``v``, so ``a_i = ‖v‖ t_i`` with ``t_i``
  i.i.d. one coordinate of an encoding (:func:`coordinates`): ``z / sqrt(z² + χ²_{m−1})`` for
  ``sphere`` encodings, ``N(0, 1/m)`` for ``gaussian`` ones.

A sequence costs ``O(q m + T)`` draws instead of ``O(T m)``, exact in distribution; by
exchangeability ``y`` sits at the first ``q`` positions. Several recipes draw the same law
(:data:`RECIPES`); each caller keeps its own, so its random stream, and its results, stay
what they were. The loss is exact over the tokens (SPEC B3): ``L = d Σ_i (s_i − 1{i∈y}/q)²``
(:func:`subset_loss`, :func:`selection_loss`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, TypeVar

import numpy as np
import torch

Recipe = Literal["beta", "ratio", "parts"]
RECIPES: tuple[Recipe, ...] = ("beta", "ratio", "parts")
"""How a ``sphere`` coordinate is drawn (the same law): ``beta``, ``2B − 1`` with ``B ~ Beta((m −
1)/2, (m − 1)/2)`` (:mod:`.family`); ``ratio``, ``z / sqrt(z² + 2 Γ((m − 1)/2))``
(:mod:`attnsep.train.selection_threshold`); ``parts``, with the orthogonal parts and the random walk
that population steps drawn by law need (:func:`sphere_parts`, :mod:`attnsep.train.selection`,
which also draws a direction ``normal`` right after the subset)."""


Array = TypeVar("Array", np.ndarray, torch.Tensor)
"""numpy or torch: a function of arrays returns the kind it is given."""


@dataclass(frozen=True)
class Draw:
    """One batch (leading axes ``... x B``): ``on_y`` (``... x q x m``), the encodings of the
    subset; ``t`` (``... x K``, ``K = T − q``), the coordinates off it; with the ``parts`` recipe
    also ``normal`` (``... x m``) and, for ``sphere``, :func:`sphere_parts`'s ``perp``, ``walk``
    (``... x K``) and ``joins``."""

    on_y: np.ndarray
    t: np.ndarray
    normal: np.ndarray | None = None
    perp: np.ndarray | None = None
    walk: np.ndarray | None = None
    joins: np.ndarray | None = None


ROW_BLOCK = 1 << 15
"""Entries per block of :func:`row_norms`' scratch (256 KiB: it stays in cache)."""


def row_norms(x: np.ndarray) -> np.ndarray:
    """``np.linalg.norm(x, axis=-1)``, the same bits (its ``sqrt(add.reduce(x * x))``, pairwise
    along each row), through a small scratch block instead of an ``x``-sized temporary: a fresh
    array of hundreds of MB costs its page faults, several times its arithmetic."""
    flat = x.reshape(-1, x.shape[-1])
    rows = max(1, ROW_BLOCK // max(1, x.shape[-1]))
    square = np.empty((min(rows, len(flat)), x.shape[-1]))
    out = np.empty(len(flat))
    for start in range(0, len(flat), rows):
        block = flat[start : start + rows]
        scratch = square[: len(block)]
        np.multiply(block, block, out=scratch)
        np.add.reduce(scratch, axis=-1, out=out[start : start + rows])
    return np.sqrt(out, out=out).reshape(x.shape[:-1])


def subset(
    rng: np.random.Generator,
    batch: int,
    q: int,
    m_p: int,
    kind: str,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """``batch x q x m_p`` encodings: uniform unit vectors (``sphere``) or ``N(0, I/m_p)``;
    ``out`` (C-contiguous float64 of that shape), if given, is filled and returned (the same
    numbers as a fresh array)."""
    if out is None:
        on_y = rng.standard_normal((batch, q, m_p))
    else:
        on_y = rng.standard_normal(out=out)
    if kind == "sphere":
        on_y /= row_norms(on_y)[..., None]
    else:
        on_y /= math.sqrt(m_p)
    return on_y


def ratio_coordinates(rng: np.random.Generator, shape: tuple[int, ...], dim: int) -> np.ndarray:
    """A coordinate of a uniform unit vector of ``R^dim``: ``z / sqrt(z² + χ²_{dim−1})``."""
    z = rng.standard_normal(shape)
    if dim < 2:
        return np.sign(z)
    return z / np.sqrt(z * z + 2.0 * rng.standard_gamma((dim - 1) / 2, shape))


def coordinates(
    rng: np.random.Generator, shape: tuple[int, ...], m_p: int, kind: str, recipe: Recipe
) -> np.ndarray:
    """``t``: i.i.d. one coordinate of an encoding (``beta`` or ``ratio`` recipe for ``sphere``)."""
    if kind != "sphere":
        return rng.standard_normal(shape) / math.sqrt(m_p)
    if recipe == "ratio":
        return ratio_coordinates(rng, shape, m_p)
    if m_p == 1:
        return rng.choice([-1.0, 1.0], shape)
    half = (m_p - 1) / 2
    return 2 * rng.beta(half, half, shape) - 1


def walk_chunks(K: int) -> tuple[int, int]:
    """``(J, L)``: a random walk's ``K`` steps go in ``J ≈ sqrt(K)`` chunks of ``L`` (padded)."""
    chunks = max(1, math.isqrt(K))
    return chunks, -(-K // chunks)


def sphere_parts(
    rng: np.random.Generator, shape: tuple[int, ...], m_p: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(t, perp, cos, joins)`` of encodings ``(z v̂ + h) / ‖z v̂ + h‖``, ``h`` Gaussian in ``v^⊥``.

    ``h = z' ŝ + h'`` along the walk's current direction ``ŝ`` (made of earlier encodings, so
    independent of ``h``), ``‖h'‖² ~ χ²_{m−2}``: one chi-square per encoding gives its coordinate
    ``t = z / ρ``, its orthogonal norm ``‖h‖ / ρ`` and the walk's cosine ``z' / ‖h‖`` exactly.
    ``joins``: fresh cosines in ``v^⊥`` (``R^{m−1}``) that join the walk's chunks.
    """
    z = rng.standard_normal(shape)
    joins_shape = (*shape[:-1], walk_chunks(shape[-1])[0])
    if m_p == 1:
        return np.sign(z), np.zeros(shape), np.zeros(shape), np.zeros(joins_shape)
    side = rng.standard_normal(shape)
    rest = 2.0 * rng.standard_gamma((m_p - 2) / 2, shape) if m_p > 2 else np.zeros(shape)
    h = np.sqrt(side * side + rest)
    rho = np.sqrt(z * z + h * h)
    return z / rho, h / rho, side / h, ratio_coordinates(rng, joins_shape, m_p - 1)


def draw(
    rng: np.random.Generator,
    batch: int,
    T: int,
    q: int,
    m_p: int,
    kind: str,
    recipe: Recipe,
    out: tuple[np.ndarray, np.ndarray] | None = None,
) -> Draw:
    """``batch`` sequences' draws from ``rng``, in the recipe's order (:data:`RECIPES`); ``out``
    (``parts`` recipe): arrays ``(on_y, normal)`` to fill instead of fresh ones (the same
    numbers; a caller that draws every step reuses them)."""
    on_y = subset(rng, batch, q, m_p, kind, None if out is None else out[0])
    shape = (batch, T - q)
    if recipe != "parts":
        return Draw(on_y, coordinates(rng, shape, m_p, kind, recipe))
    normal = rng.standard_normal((batch, m_p)) if out is None else rng.standard_normal(out=out[1])
    if kind != "sphere":
        return Draw(on_y, coordinates(rng, shape, m_p, kind, recipe), normal)
    t, perp, walk, joins = sphere_parts(rng, shape, m_p)
    return Draw(on_y, t, normal, perp, walk, joins)


def stack(draws: list[Draw], **given: np.ndarray) -> Draw:
    """The draws of several replicas stacked on a new first axis (one replica: views, no copy);
    fields in ``given`` are taken as they are (arrays the draws were made into, ``draw``'s
    ``out``, one slice per replica)."""

    def field(name: str) -> np.ndarray | None:
        if name in given:
            return given[name]
        arrays = [getattr(d, name) for d in draws]
        if arrays[0] is None:
            return None
        return arrays[0][None] if len(arrays) == 1 else np.stack(arrays)

    on_y, t = field("on_y"), field("t")
    assert on_y is not None and t is not None  # every draw has its subset and coordinates
    return Draw(on_y, t, *(field(name) for name in ("normal", "perp", "walk", "joins")))


def products(on_y: Array, t: Array, v: Array) -> tuple[Array, Array]:
    """``(p_i · v on y, ‖v‖ t_i off it)`` (numpy or torch; leading axes shared)."""
    if isinstance(v, np.ndarray):
        inside = np.einsum("...qm,...m->...q", on_y, v)
        return inside, np.linalg.norm(v, axis=-1, keepdims=True) * t
    inside = torch.einsum("...qm,...m->...q", on_y, v)
    return inside, torch.linalg.vector_norm(v, dim=-1, keepdim=True) * t


def weights(logits: Array) -> Array:
    """``s = softmax(logits)`` over the last axis (numpy or torch, each stable)."""
    if isinstance(logits, np.ndarray):
        s = np.exp(logits - logits.max(axis=-1, keepdims=True))
        return s / s.sum(axis=-1, keepdims=True)
    return torch.softmax(logits, dim=-1)


def subset_loss(s_in: Array, out_square: Array, d: int) -> Array:
    """``d (Σ_{i∈y} (s_i − 1/q)² + Σ_{i∉y} s_i²)`` from the subset's weights ``s_in`` (``... x
    q``) and the sum of the squared weights off it (``...``): the loss of SPEC B3."""
    q = s_in.shape[-1]
    return d * (((s_in - 1.0 / q) ** 2).sum(-1) + out_square)


def selection_loss(logits: Array, q: int, d: int) -> Array:
    """Per-sequence ``d Σ_i (s_i − 1{i∈y}/q)²``, the subset at the first ``q`` logits."""
    s = weights(logits)
    return subset_loss(s[..., :q], (s[..., q:] ** 2).sum(-1), d)
