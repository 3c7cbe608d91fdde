"""Closed forms of SPEC B3/B4 against Monte Carlo, tolerances from the sampling error."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
import torch

from attnsep.exact.selection import exact_loss, mean_stderr, per_sequence_loss
from attnsep.exact.selection_bounds import (
    fcn_bottleneck_loss,
    fcn_loss_floor,
    orthonormal_loss,
    uniform_attention_loss,
    zero_predictor_loss,
)
from attnsep.metrics.selection import sampled_loss
from attnsep.positional_encodings import FixedPE, StochasticPE
from attnsep.tasks.selection import TokenSelection, sts

Z = 5.0  # standard errors allowed


def within(values: torch.Tensor, target: float) -> None:
    mean, se = mean_stderr(values.flatten())
    assert abs(float(mean) - target) < Z * float(se), (float(mean), float(se), target)


def test_uniform_attention_and_zero_predictor_match_monte_carlo() -> None:
    d, T, q, m_p, n = 3, 7, 2, 4, 20000
    data = TokenSelection(d, T, q).sample(0, 1, n, ("mc",))
    P = StochasticPE(0, 1, m_p).draw(("mc",), n, T)
    W = torch.zeros(1, d + m_p, d + m_p, dtype=torch.float64)
    L0 = float(uniform_attention_loss(T, q, d))
    assert uniform_attention_loss(T, q, d) == Fraction(3 * 5, 14)
    within(sampled_loss(W, data.X, P, data.y), L0)
    assert torch.allclose(
        per_sequence_loss(W, P, data.y), torch.full((1, n), L0, dtype=torch.float64)
    )
    within(sts(data.X, data.y).pow(2).sum(dim=-1), float(zero_predictor_loss(q, d)))


def orthonormal_table(T: int, m_p: int) -> FixedPE:
    """Positions ``e_1..e_T`` rotated into ``R^{m_p}``: exactly orthonormal encodings."""
    Q, _ = torch.linalg.qr(
        torch.randn(m_p, m_p, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    )
    return FixedPE(Q[:T].unsqueeze(0))


@pytest.mark.parametrize("alpha", [-1.0, 0.0, 1.5, 4.0])
def test_orthonormal_loss_matches_monte_carlo(alpha: float) -> None:
    d, T, q, m_p, n = 2, 6, 2, 9, 20000
    data = TokenSelection(d, T, q).sample(1, 1, n, ("mc",))
    P = orthonormal_table(T, m_p).draw(("mc",), n, T)
    W = torch.zeros(1, d + m_p, d + m_p, dtype=torch.float64)
    W[0, d:, d:] = alpha * torch.eye(m_p, dtype=torch.float64)
    target = orthonormal_loss(alpha, T, q, d)
    within(sampled_loss(W, data.X, P, data.y), target)
    assert torch.allclose(
        per_sequence_loss(W, P, data.y), torch.full((1, n), target, dtype=torch.float64)
    )


def test_orthonormal_loss_limits() -> None:
    assert orthonormal_loss(0.0, 20, 3, 10) == pytest.approx(
        float(uniform_attention_loss(20, 3, 10))
    )
    assert 0 <= orthonormal_loss(800.0, 20, 3, 10) < 1e-300  # no overflow
    # all attention off the subset, spread evenly: d T / (q (T - q))
    assert orthonormal_loss(-800.0, 20, 3, 10) == pytest.approx(10 * 20 / (3 * 17))
    with pytest.raises(ValueError, match="alpha must be finite"):
        orthonormal_loss(math.inf, 20, 3)


def test_exact_over_tokens_matches_plain_monte_carlo() -> None:
    """Paired: same (y, PE) draws, sampled tokens vs the token average done exactly."""
    d, T, q, m_p, n = 3, 8, 3, 12, 20000
    data = TokenSelection(d, T, q).sample(3, 2, n, ("mc",))
    P = StochasticPE(3, 2, m_p).draw(("mc",), n, T)
    gen = torch.Generator().manual_seed(4)
    W = torch.zeros(2, d + m_p, d + m_p, dtype=torch.float64)
    W[:, d:, d:] = 2.0 * torch.eye(m_p) + 0.5 * torch.randn(
        2, m_p, m_p, generator=gen, dtype=torch.float64
    )
    exact = per_sequence_loss(W, P, data.y)
    diff = sampled_loss(W, data.X, P, data.y) - exact
    mean, se = mean_stderr(diff)
    assert bool((mean.abs() < Z * se).all()), (mean, se)
    mu, mu_se = exact_loss(W, P, data.y)
    assert torch.allclose(mu, exact.mean(dim=-1)) and bool((mu_se < 0.02 * mu).all())


def test_exact_over_tokens_refuses_token_dependent_logits() -> None:
    d, T, m_p = 2, 5, 3
    data = TokenSelection(d, T, 2).sample(0, 1, 4, ("k",))
    P = StochasticPE(0, 1, m_p).draw(("k",), 4, T)
    W = torch.zeros(1, d + m_p, d + m_p, dtype=torch.float64)
    W[0, 0, d] = 1.0
    with pytest.raises(ValueError, match="logits depend on the tokens in replicas \\[0\\]"):
        per_sequence_loss(W, P, data.y)
    assert per_sequence_loss(W, P, data.y, ignore_content=True).shape == (1, 4)


def test_fcn_floor_values() -> None:
    assert fcn_loss_floor(20, 3) == Fraction(17, 1140)
    assert fcn_loss_floor(20, 3, d=10, width=199) == Fraction(17, 1140)
    assert fcn_loss_floor(20, 3, d=10, width=150) == 50 * Fraction(17, 1140)
    assert fcn_loss_floor(20, 3, d=10, width=200) == 0 == fcn_loss_floor(20, 3, d=10, width=500)
    with pytest.raises(ValueError, match="needs d as well as width"):
        fcn_loss_floor(20, 3, width=10)
    for w in range(0, 41):
        bottleneck = fcn_bottleneck_loss(20, 3, 2, w)
        assert bottleneck >= fcn_loss_floor(20, 3, d=2, width=w)
        assert (bottleneck == fcn_loss_floor(20, 3, d=2, width=w)) == (w >= 2)
    assert fcn_bottleneck_loss(20, 3, 2, 0) == zero_predictor_loss(3, 2)


def selection_moment(T: int, q: int, d: int) -> np.ndarray:
    """``M = E_y[B_yᵀ B_y]`` by enumerating every subset (``vec X`` is position-major)."""
    M = np.zeros((T * d, T * d))
    subsets = list(itertools.combinations(range(T), q))
    for y in subsets:
        B = np.kron(np.isin(np.arange(T), y).astype(float)[None, :], np.eye(d)) / q
        M += B.T @ B / len(subsets)
    return M


@pytest.mark.parametrize("width", [1, 3, 6])
def test_bottleneck_loss_is_attained_by_the_best_projection(width: int) -> None:
    """The Bayes predictor from ``width`` top eigen-directions reaches the closed form (MC)."""
    T, q, d, n = 4, 2, 2, 40000
    M = selection_moment(T, q, d)
    values, vectors = np.linalg.eigh(M)
    small = Fraction(T - q, q * T * (T - 1))
    assert np.allclose(np.sort(values), sorted([float(small)] * ((T - 1) * d) + [1 / T] * d))
    top = vectors[:, -width:]
    residual = np.eye(T * d) - top @ top.T  # what the width-w projection cannot see
    data = TokenSelection(d, T, q).sample(5, 1, n, ("mc",))
    vec = data.X[0].reshape(n, T * d).numpy()
    mask = np.zeros((n, T))
    np.put_along_axis(mask, data.y[0].numpy(), 1.0, axis=1)
    error = np.einsum("nt,ntk->nk", mask / q, (vec @ residual).reshape(n, T, d))
    within(torch.from_numpy((error**2).sum(axis=1)), float(fcn_bottleneck_loss(T, q, d, width)))
