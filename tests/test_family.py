"""The W = αI family's products and best loss against direct simulation (SPEC B3, B5.1)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from attnsep.exact.family import best_family_loss, family_losses, family_products
from attnsep.exact.selection import per_sequence_loss
from attnsep.exact.selection_bounds import orthonormal_loss
from attnsep.positional_encodings import StochasticPE
from attnsep.tasks.selection import TokenSelection


def direct_losses(alpha: float, T: int, q: int, m_p: int, d: int, kind: str, n: int) -> np.ndarray:
    """Full encodings and subsets drawn as training draws them; loss exact over tokens."""
    pe = StochasticPE(seed=3, replicas=1, width=m_p, kind=kind)
    P = pe.draw(("check",), n, T)
    y = TokenSelection(d=d, T=T, q=q).sample(3, 1, n, ("check",)).y
    W = torch.zeros(1, d + m_p, d + m_p, dtype=torch.float64)
    W[0, d:, d:] = alpha * torch.eye(m_p, dtype=torch.float64)
    return per_sequence_loss(W, P, y)[0].numpy()


@pytest.mark.parametrize("kind", ["sphere", "gaussian"])
@pytest.mark.parametrize(("T", "q", "m_p", "alpha"), [(6, 2, 4, 2.0), (9, 3, 8, 4.0)])
def test_family_loss_matches_full_encodings(kind, T, q, m_p, alpha):
    d, n = 3, 20000
    direct = direct_losses(alpha, T, q, m_p, d, kind, n)
    rng = np.random.default_rng(0)
    fast = family_losses(alpha, *family_products(T, q, m_p, n, rng, kind), d)
    se = math.hypot(direct.std() / math.sqrt(n), fast.std() / math.sqrt(n))
    assert abs(direct.mean() - fast.mean()) < 4 * se


def test_off_subset_products_have_the_encoding_law():
    """For sphere encodings t = p_i · u / |u| has mean 0 and variance 1/m."""
    m = 16
    G_in, G_out = family_products(40, 2, m, 5000, np.random.default_rng(1))
    assert G_in.shape == (5000, 2) and G_out.shape == (5000, 38)
    # |G_in| includes the unit self-product: p_i · u = 1 + p_i · p_j
    assert abs(G_in.mean() - 1.0) < 4 * G_in.std() / math.sqrt(G_in.size)
    u_norm2 = G_in.sum(axis=1)  # |u|² = Σ_{i∈y} p_i · u
    t = G_out / np.sqrt(u_norm2)[:, None]
    assert abs(t.mean()) < 4 * t.std() / math.sqrt(t.size)
    assert t.var() == pytest.approx(1 / m, rel=0.03)


def test_alpha_zero_is_uniform_attention_exactly():
    T, q, d = 12, 3, 5
    G = family_products(T, q, 8, 64, np.random.default_rng(2))
    assert family_losses(0.0, *G, d) == pytest.approx(np.full(64, d * (T - q) / (q * T)))


def test_best_loss_beats_uniform_falls_with_width_and_nears_the_orthonormal_limit():
    T, q = 16, 2
    narrow = best_family_loss(T, q, 16, samples=2048)
    wide = best_family_loss(T, q, 1024, samples=2048)
    assert narrow.uniform == pytest.approx((T - q) / (q * T))
    assert wide.loss + 4 * wide.stderr < narrow.loss < narrow.uniform
    # as m_p grows, the encodings become orthonormal and L_T(α) falls toward 0 as α grows
    assert orthonormal_loss(wide.alpha, T, q) < wide.loss


def test_best_loss_is_reproducible_and_the_minimum_on_its_grid():
    a = best_family_loss(8, 1, 32, samples=512, seed=4)
    b = best_family_loss(8, 1, 32, samples=512, seed=4)
    assert a == b
    rng = np.random.default_rng(9)
    G = family_products(8, 1, 32, 4096, rng)
    at_best = family_losses(a.alpha, *G).mean()
    for factor in (0.5, 2.0):
        assert at_best <= family_losses(a.alpha * factor, *G).mean() + 0.01
