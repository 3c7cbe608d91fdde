"""The family's loss from the law of the products against the direct draw (SPEC B3, B5.2)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnsep.exact.family import best_family_loss, family_losses, family_products
from attnsep.exact.family_law import (
    best_law_loss,
    law_draw,
    law_losses,
    log_moments,
    table_log_moments,
    tail,
)


@pytest.mark.parametrize("m_p", [2, 5, 64, 1024])
@pytest.mark.parametrize("c", [0.0, 3.0, 200.0])
def test_bulk_moments_match_a_fine_trapezoid(m_p, c):
    theta0 = tail(4000, m_p).theta0
    theta = np.linspace(theta0, math.pi, 400_001)
    log_f = c * np.cos(theta) + (m_p - 2) * np.log(np.maximum(np.sin(theta), 1e-300))
    top = log_f.max()
    reference = top + math.log(np.trapezoid(np.exp(log_f - top), theta))
    assert float(log_moments(np.array([c]), theta0, m_p)[0]) == pytest.approx(reference, abs=1e-4)


@pytest.mark.parametrize(("K", "m_p"), [(65528, 2434), (4000, 64), (100_000, 16), (1000, 2)])
def test_tabulated_moments_match_the_quadrature(K, m_p):
    """The table (interpolated in ln(1 + c)) against the quadrature itself, over ``c`` from 0 to
    beyond the smallest table (a second, larger table is built): rounding-level agreement."""
    split = tail(K, m_p)
    rng = np.random.default_rng(K)
    c = np.concatenate([[0.0], rng.uniform(0, 50, 5000), np.exp(rng.uniform(-8, 10, 5000))])
    direct = log_moments(c, split.theta0, m_p)
    tabulated = table_log_moments(c, split.theta0, m_p)
    assert np.max(np.abs(tabulated - direct) / np.maximum(1.0, np.abs(direct))) < 1e-10


def test_split_leaves_top_expected_exceedances():
    split = tail(60000, 100, top=32)
    assert 60000 * split.p == pytest.approx(32, rel=0.01)  # a table point
    assert split.cdf[0] == 0.0 and split.cdf[-1] == 1.0


@pytest.mark.parametrize(("T", "q", "m_p"), [(1024, 4, 64), (512, 2, 24)])
@pytest.mark.parametrize("alpha", [2.0, 8.0, 40.0])
def test_law_loss_matches_the_direct_draw(T, q, m_p, alpha):
    """Both estimate the same mean: they agree within 4 standard errors (independent draws)."""
    n = 8000
    direct = family_losses(alpha, *family_products(T, q, m_p, n, np.random.default_rng(1)))
    law = law_losses(alpha, law_draw(T, q, m_p, n, np.random.default_rng(2)))
    se = math.hypot(direct.std(), law.std()) / math.sqrt(n)
    assert abs(direct.mean() - law.mean()) < 4 * se


def test_small_T_is_drawn_exactly_and_alpha_zero_is_uniform():
    T, q = 40, 3
    draw = law_draw(T, q, 16, 64, np.random.default_rng(0))
    assert draw.split is None and draw.t.shape == (64, T - q)
    assert law_losses(0.0, draw, 5) == pytest.approx(np.full(64, 5 * (T - q) / (q * T)))
    big = law_draw(4096, q, 16, 64, np.random.default_rng(0))
    assert law_losses(0.0, big) == pytest.approx(np.full(64, (4096 - q) / (q * 4096)))


def test_subset_products_have_their_law():
    """``G_i = 1 + Σ_{j≠i} p_i·p_j``: mean 1, variance (q − 1)/m (Bartlett's Gram)."""
    q, m = 4, 32
    draw = law_draw(600, q, m, 20000, np.random.default_rng(3))
    G = draw.G_in
    assert abs(G.mean() - 1) < 4 * G.std() / math.sqrt(G.size)
    assert G.var() == pytest.approx((q - 1) / m, rel=0.05)
    assert draw.r**2 == pytest.approx(G.sum(axis=1))


def test_best_law_loss_agrees_with_best_family_loss():
    a = best_family_loss(1024, 4, 256, samples=2048, seed=1, descent=True)
    b = best_law_loss(1024, 4, 256, samples=2048, seed=1, descent=True)
    assert abs(a.loss - b.loss) < 4 * math.hypot(a.stderr, b.stderr)
    assert b.alpha == pytest.approx(a.alpha, rel=0.1)
    assert best_law_loss(1024, 4, 256, samples=256, seed=2) == best_law_loss(
        1024, 4, 256, samples=256, seed=2
    )


def test_search_refactor_leaves_best_family_loss_unchanged():
    """Values of ``best_family_loss`` before ``minimize_alpha`` was split out (same seeds)."""
    b = best_family_loss(64, 3, 16, samples=256, seed=7, descent=True)
    assert b.alpha == 4.029974545887285
    assert b.loss == 0.16882079926443444
    assert b.stderr == 0.0039033798967063873
