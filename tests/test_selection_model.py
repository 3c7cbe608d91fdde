"""The one-layer selector (SPEC B2) against a naive loop, and its structure."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnsep.models.selector import (
    forward,
    ground_truth,
    logits,
    position_logits,
    trainable_mask,
)
from attnsep.positional_encodings import StochasticPE
from attnsep.tasks.selection import TokenSelection


def naive_forward(W: np.ndarray, X: np.ndarray, P: np.ndarray, y: np.ndarray) -> np.ndarray:
    """One sequence: z_i = (x_i; p_i), z_q = (0; Σ_{j∈y} p_j), f = Σ softmax(a)_i x_i."""
    d = X.shape[1]
    z_q = np.concatenate([np.zeros(d), P[list(y)].sum(axis=0)])
    a = np.array([np.concatenate([X[i], P[i]]) @ W @ z_q for i in range(X.shape[0])])
    s = np.exp(a - a.max())
    s /= s.sum()
    return sum(s[i] * X[i] for i in range(X.shape[0]))


def draw(d: int = 3, T: int = 6, q: int = 2, m_p: int = 5, E: int = 2, B: int = 4):
    data = TokenSelection(d, T, q).sample(0, E, B, ("k",))
    P = StochasticPE(0, E, m_p).draw(("k",), B, T)
    W = torch.randn(
        E, d + m_p, d + m_p, generator=torch.Generator().manual_seed(1), dtype=torch.float64
    )
    return W, data.X, P, data.y


def test_forward_matches_naive_loop() -> None:
    W, X, P, y = draw()
    f, s = forward(W, X, P, y)
    assert torch.allclose(s.sum(dim=-1), torch.ones(2, 4, dtype=torch.float64))
    for e in range(2):
        for b in range(4):
            want = naive_forward(W[e].numpy(), X[e, b].numpy(), P[e, b].numpy(), y[e, b].numpy())
            np.testing.assert_allclose(f[e, b].numpy(), want, rtol=1e-12, atol=1e-12)


def test_softmax_is_stable_for_huge_logits() -> None:
    W, X, P, y = draw()
    f, s = forward(1e6 * W, X, P, y)
    assert bool(torch.isfinite(f).all()) and bool(torch.isfinite(s).all())


def test_position_logits_equal_full_logits_when_content_block_is_zero() -> None:
    W, X, P, y = draw()
    W[:, :3, :] = 0.0  # content rows: the logits no longer see the tokens
    assert torch.allclose(logits(W, X, P, y), position_logits(W[:, 3:, 3:], P, y), atol=1e-12)


def test_content_columns_never_act() -> None:
    W, X, P, y = draw()
    changed = W.clone()
    changed[:, :, :3] = 7.0  # columns of the query's zero content part
    assert torch.allclose(logits(W, X, P, y), logits(changed, X, P, y), atol=1e-12)


def test_ground_truth_and_masks() -> None:
    Ws = ground_truth(2, 3)
    assert (
        torch.equal(Ws[2:, 2:], torch.eye(3, dtype=torch.float64))
        and float(Ws[:2].abs().sum()) == 0
    )
    position = trainable_mask(2, 3, "position")
    assert float(position[2:, 2:].min()) == 1 and float(position.sum()) == 9
    assert float(trainable_mask(2, 3, "full").sum()) == 25
    with pytest.raises(ValueError, match="trainable must be one of full, position"):
        trainable_mask(2, 3, "content")


def test_wrong_W_shape_is_refused() -> None:
    W, X, P, y = draw()
    with pytest.raises(ValueError, match="W must be E x 8 x 8"):
        logits(W[:, 1:, 1:], X, P, y)
