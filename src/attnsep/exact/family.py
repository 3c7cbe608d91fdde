"""The ``W = αI`` family on the position block and its best loss: the yardstick of SPEC B5.1–B5.3.

With ``W = αI`` the logits are ``a_i = α G_i``, ``G_i = p_i · u_y``. The products ``G`` carry
all the dependence on the encodings, and their law is cheap to draw exactly
(:mod:`.products`, its ``beta`` recipe): a sequence costs ``O(q² m + T)`` draws instead of
``O(T m)``, and ``y`` sits at the first ``q`` positions. The loss is exact over the tokens,
``L(α) = d E[Σ_i (s_i − 1{i∈y}/q)²]`` (SPEC B3, :func:`.products.selection_loss`), and Monte
Carlo over ``(y, PE)`` only.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..configs import FAMILY_SAMPLES as SAMPLES
from ..configs import PE_KINDS
from ..core.rng import stream_seed
from ..core.validate import int_at_least, one_of, require
from . import products
from .law_sizes import GOLDEN_ROUNDS as GOLDEN_ROUNDS
from .law_sizes import GRID_POINTS as GRID_POINTS

ALPHA_MAX = 1e3


def family_products(
    T: int, q: int, m_p: int, samples: int, rng: np.random.Generator, kind: str = "sphere"
) -> tuple[np.ndarray, np.ndarray]:
    """``(G_in, G_out)``: ``samples x q`` products on ``y``, ``samples x (T − q)`` off it (the
    ``beta`` recipe of :func:`.products.draw`)."""
    int_at_least("T", T, 1)
    int_at_least("q", q, 1)
    require(q <= T, f"q must be <= T, got q={q} and T={T}")
    int_at_least("pe width", m_p, 1)
    one_of("pe kind", kind, PE_KINDS)
    sample = products.draw(rng, samples, T, q, m_p, kind, "beta")
    return products.products(sample.on_y, sample.t, sample.on_y.sum(axis=1))


def family_losses(alpha: float, G_in: np.ndarray, G_out: np.ndarray, d: int = 1) -> np.ndarray:
    """Per-sequence ``d Σ_i (s_i − 1{i∈y}/q)²`` at ``W = αI`` (exact over the tokens)."""
    return products.selection_loss(alpha * np.concatenate([G_in, G_out], axis=1), G_in.shape[1], d)


def minimize_alpha(mean_loss: Callable[[float], float], descent: bool = False) -> float:
    """The ``α`` that minimizes ``mean_loss``: a grid of ``GRID_POINTS`` in ``ln(1 + α)`` up to
    ``ALPHA_MAX``, then ``GOLDEN_ROUNDS`` of golden section around the grid's best. With
    ``descent`` the grid walk stops at the first rise (the first minimum met from ``α = 0``)."""

    def loss(z: float) -> float:
        return mean_loss(math.expm1(z))

    grid = np.linspace(0.0, math.log1p(ALPHA_MAX), GRID_POINTS)
    values = [loss(grid[0])]
    for z in grid[1:]:
        if descent and len(values) >= 2 and values[-1] > values[-2]:
            break
        values.append(loss(z))
    best = int(np.argmin(values))
    lo, hi = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
    ratio = (math.sqrt(5) - 1) / 2
    a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    loss_a, loss_b = loss(a), loss(b)
    for _ in range(GOLDEN_ROUNDS):  # one new point per round: the bracket shrinks 0.618^30
        if loss_a <= loss_b:
            hi, b, loss_b = b, a, loss_a
            a = hi - ratio * (hi - lo)
            loss_a = loss(a)
        else:
            lo, a, loss_a = a, b, loss_b
            b = lo + ratio * (hi - lo)
            loss_b = loss(b)
    return math.expm1(0.5 * (lo + hi))


@dataclass(frozen=True)
class FamilyBest:
    """The best ``α`` (fitted on one draw) and its loss on an independent draw, ± s.e."""

    alpha: float
    loss: float
    stderr: float
    uniform: float  # the loss at α = 0, d (T − q) / (q T)


def best_family_loss(
    T: int,
    q: int,
    m_p: int,
    d: int = 1,
    kind: str = "sphere",
    samples: int = SAMPLES,
    seed: int = 0,
    descent: bool = False,
) -> FamilyBest:
    """The least loss over ``W = αI`` at ``(T, q, m_p)`` (SPEC B5.1 yardstick).

    ``α`` minimizes the mean loss on a *fit* draw (a grid in ``ln(1 + α)``, then golden
    section); the loss is reported on an independent *eval* draw, so it carries no selection
    bias. With ``descent`` the minimum is the first one met walking up from ``α = 0``: where
    gradient descent on ``α`` from 0 comes to rest. Streams ``(seed, "family", T, q, m_p, kind,
    part)``.
    """
    int_at_least("d", d, 1)
    int_at_least("samples", samples, 2)

    def draw(part: str) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(stream_seed(seed, "family", T, q, m_p, kind, part))
        return family_products(T, q, m_p, samples, rng, kind)

    fit = draw("fit")
    alpha = minimize_alpha(lambda a: float(family_losses(a, *fit).mean()), descent)
    losses = family_losses(alpha, *draw("eval"), d)
    return FamilyBest(
        alpha=alpha,
        loss=float(losses.mean()),
        stderr=float(losses.std(ddof=1) / math.sqrt(samples)),
        uniform=d * (T - q) / (q * T),
    )
