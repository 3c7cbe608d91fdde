"""Steps drawn by law (train.selection.law_terms, sampled_law_terms): the same law as explicit
draws."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from attnsep.exact import products
from attnsep.exact.selection import per_sequence_loss
from attnsep.models.selector import forward, logits, position_logits, query
from attnsep.positional_encodings import StochasticPE
from attnsep.tasks.selection import TokenSelection, sts
from attnsep.train import selection as module
from attnsep.train.selection import (
    SelectionTrainConfig,
    law_draws,
    law_terms,
    sampled_law_terms,
    train,
)

N = 60_000
Z = 4.5  # a few statistics per case: |z| below 4.5 by chance almost surely


def explicit_terms(W_pp: torch.Tensor, kind: str, T: int, q: int, d: int):
    """``(loss, g, u)`` from explicit encodings and autograd through the logits."""
    m = W_pp.shape[-1]
    P = StochasticPE(17, 1, m, kind).draw(("explicit",), N, T)
    y = torch.arange(q).expand(1, N, q)
    a = position_logits(W_pp, P, y).requires_grad_(True)
    W = torch.zeros(1, d + m, d + m, dtype=torch.float64)
    W[:, d:, d:] = W_pp
    loss = per_sequence_loss(W, P, y)
    s = torch.softmax(a, dim=-1)
    target = torch.zeros_like(s)
    target[..., :q] = 1 / q
    (c,) = torch.autograd.grad((d * (s - target).pow(2).sum(dim=-1)).sum(), a)
    return loss, torch.einsum("ebt,ebtm->ebm", c, P), query(P, y)


def statistics(loss, g, u, W_pp):
    """Per-sequence values whose means both methods must share."""
    return {
        "loss": loss[0],
        "|g|^2": g[0].pow(2).sum(-1),
        "g.u": (g[0] * u[0]).sum(-1),
        "g.Wu": (g[0] * (u[0] @ W_pp[0].T)).sum(-1),
        "g0 u1": g[0, :, 0] * u[0, :, 1],
    }


@pytest.mark.parametrize("kind", ["sphere", "gaussian"])
@pytest.mark.parametrize(("T", "q", "m"), [(6, 2, 5), (5, 1, 2), (40, 3, 4)])
def test_law_matches_explicit_draws(kind: str, T: int, q: int, m: int) -> None:
    d = 2
    rng = np.random.default_rng(1)
    W_pp = torch.from_numpy(rng.standard_normal((1, m, m)) * 1.5 + 2 * np.eye(m))
    law = statistics(
        *law_terms(W_pp, law_draws(3, range(1), ("k",), N, T, q, m, kind), d, kind), W_pp
    )
    ref = statistics(*explicit_terms(W_pp, kind, T, q, d), W_pp)
    for name, values in law.items():
        a, b = values.double(), ref[name].double()
        se = math.hypot(float(a.std()), float(b.std())) / math.sqrt(N)
        z = (float(a.mean()) - float(b.mean())) / se
        assert abs(z) < Z, f"{name}: law {float(a.mean()):.5f} vs explicit {float(b.mean()):.5f}"


def test_chunked_walk_norm_has_the_law_of_a_sum_of_unit_vectors() -> None:
    rng = np.random.default_rng(0)
    n, K, dim = 20_000, 37, 5
    w = rng.uniform(-1, 1, K)
    direct = rng.standard_normal((n, K, dim))
    direct /= np.linalg.norm(direct, axis=-1, keepdims=True)
    explicit = np.linalg.norm(np.einsum("k,nkd->nd", w, direct), axis=-1)
    cosines = np.stack([products.ratio_coordinates(rng, (n,), dim) for _ in range(K)], axis=-1)
    joins = products.ratio_coordinates(rng, (n, products.walk_chunks(K)[0]), dim)
    walked = module._chunked_walk_norm(np.broadcast_to(w, (n, K)), cosines, joins)
    assert abs(float((walked**2).mean()) / float(np.sum(w * w)) - 1) < 0.03  # E|S|^2 = sum w^2
    se = math.hypot(walked.std(), explicit.std()) / math.sqrt(n)
    assert abs(walked.mean() - explicit.mean()) < Z * se


def test_population_training_is_seeded_and_replicas_independent_of_E() -> None:
    base = dict(d=3, T=12, q=2, pe_dim=8, batch=32, steps=20, trainable="position")
    config = SelectionTrainConfig(**base, objective="population", seeds=3, seed=5, lr=0.4)
    a, b = train(config), train(config)
    assert torch.equal(a.W, b.W) and torch.equal(a.losses, b.losses)
    two = train(SelectionTrainConfig(**base, objective="population", seeds=2, seed=5, lr=0.4))
    assert torch.allclose(two.W, a.W[:2], rtol=0, atol=1e-12)
    assert not torch.allclose(a.W[0], a.W[1])


def random_W(d: int, m: int) -> torch.Tensor:
    """A full ``W`` (``1 x D x D``): noise everywhere, ``2 I`` added on the position block."""
    rng = np.random.default_rng(1)
    W = torch.from_numpy(rng.standard_normal((1, d + m, d + m)) * 0.8)
    W[0, d:, d:] += 2 * torch.eye(m, dtype=torch.float64)
    return W


def explicit_sampled_terms(W: torch.Tensor, X: torch.Tensor, P: torch.Tensor, q: int):
    """``(loss, g, u)`` of the sampled loss from explicit encodings, the subset at the first
    ``q`` positions, ``g = Σ_i (∂loss/∂a_i) z_i`` by autograd through the logits."""
    y = torch.arange(q).expand(*X.shape[:2], q)
    a = logits(W, X, P, y).detach().requires_grad_(True)
    s = torch.softmax(a, dim=-1)
    loss = (torch.einsum("ebt,ebtk->ebk", s, X) - sts(X, y)).pow(2).sum(dim=-1)
    (c,) = torch.autograd.grad(loss.sum(), a)
    return loss.detach(), torch.einsum("ebt,ebtk->ebk", c, torch.cat([X, P], -1)), query(P, y)


def test_sampled_law_terms_are_exact_when_every_position_is_in_the_subset() -> None:
    d, m, T, B = 3, 6, 4, 50
    W = random_W(d, m)
    draws = law_draws(2, range(1), ("k",), B, T, T, m, "sphere")
    X = TokenSelection(d, T, T).tokens(2, 1, B, ("k",), length=T)
    loss, g, u = law_sampled = sampled_law_terms(W[:, :, d:], X, draws, "sphere")
    ref = explicit_sampled_terms(W, X, torch.from_numpy(draws.on_y), T)
    for ours, theirs in zip(law_sampled, ref, strict=True):
        assert torch.allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    # the step's gradient is autograd's gradient of the batch's mean loss in W[:, d:]
    W_leaf = W.clone().requires_grad_(True)
    y = torch.arange(T).expand(1, B, T)
    f, _ = forward(W_leaf, X, torch.from_numpy(draws.on_y), y)
    (full,) = torch.autograd.grad((f - sts(X, y)).pow(2).sum(-1).mean(), W_leaf)
    assert torch.allclose(full[:, :, d:], torch.bmm(g.transpose(-1, -2), u) / B, atol=1e-12)
    assert float(full[:, :, :d].abs().max()) == 0.0


@pytest.mark.parametrize("kind", ["sphere", "gaussian"])
@pytest.mark.parametrize(("T", "q", "m"), [(6, 2, 5), (40, 3, 4)])
def test_sampled_law_matches_explicit_draws(kind: str, T: int, q: int, m: int) -> None:
    d = 2
    W = random_W(d, m)
    X = TokenSelection(d, T, q).tokens(4, 1, N, ("k",), length=T)
    law = sampled_law_terms(W[:, :, d:], X, law_draws(3, range(1), ("k",), N, T, q, m, kind), kind)
    P = StochasticPE(17, 1, m, kind).draw(("explicit",), N, T)
    ref = explicit_sampled_terms(W, TokenSelection(d, T, q).tokens(5, 1, N, ("e",), length=T), P, q)

    def statistics(loss, g, u):
        v = torch.einsum("eim,ebm->ebi", W[:, :, d:], u)
        return {
            "loss": loss[0],
            "|g|^2": g[0].pow(2).sum(-1),
            "g_p.u": (g[0, :, d:] * u[0]).sum(-1),
            "g.Wz": (g[0] * v[0]).sum(-1),
            "g_c0 u1": g[0, :, 0] * u[0, :, 1],
            "g_p0 u0": g[0, :, d] * u[0, :, 0],
        }

    for name, values in statistics(*law).items():
        a, b = values.double(), statistics(*ref)[name].double()
        se = math.hypot(float(a.std()), float(b.std())) / math.sqrt(N)
        z = (float(a.mean()) - float(b.mean())) / se
        assert abs(z) < Z, f"{name}: law {float(a.mean()):.5f} vs explicit {float(b.mean()):.5f}"
