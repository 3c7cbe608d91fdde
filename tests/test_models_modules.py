"""The single-model ``nn.Module``s (``attnsep.models``): each equals replica 0 of the ensemble
code it wraps, has correct gradients, and trains in a plain PyTorch loop."""

from __future__ import annotations

import pytest
import torch
from torch.func import functional_call

from attnsep.exact.parity import population_loss
from attnsep.models import ClsTransformer, QueryHeadsModel, Selector
from attnsep.models import selector as ensemble_selector
from attnsep.models.query_heads import QueryHeads, initial_queries
from attnsep.positional_encodings import StochasticPE
from attnsep.tasks.parity import SparseParity
from attnsep.tasks.selection import TokenSelection, sts


def bits(n: int, d: int, seed: int = 0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(0, 2, (n, d), generator=gen).to(torch.float64) * 2 - 1


def selection_batch(d: int = 3, T: int = 6, q: int = 2, m_p: int = 4, B: int = 5, key=("k",)):
    data = TokenSelection(d, T, q).sample(0, 1, B, key)
    P = StochasticPE(0, 1, m_p).draw(key, B, T)
    return data.X[0], P[0], data.y[0]


@pytest.mark.parametrize(
    ("heads", "attention", "init", "sign"),
    [
        (2, "softmax", "antisymmetric", -1),
        (3, "linear", "orthogonal", 1),
        (1, "erf", "independent", -1),
    ],
)
def test_query_heads_model_is_replica_zero_of_the_ensemble(heads, attention, init, sign) -> None:
    d, m, seed = 12, 6, 7
    module = QueryHeadsModel(d, m, heads, attention, sign, seed, init)
    ensemble = QueryHeads.sample(seed, 1, d, m, attention=attention, sign=sign)
    theta = initial_queries(seed, 1, heads, m, init)
    assert torch.equal(module.V, ensemble.V[0]) and torch.equal(module.theta.detach(), theta[0])
    x = bits(9, d)
    assert torch.equal(module(x).detach(), ensemble.predict(theta, x[None])[0])
    assert torch.equal(module.weights().detach(), ensemble.weights(theta)[0])
    assert [name for name, _ in module.named_parameters()] == ["theta"]
    assert [name for name, _ in module.named_buffers()] == ["V"]


def test_query_heads_model_gradcheck() -> None:
    module = QueryHeadsModel(5, 3, seed=1)
    x = bits(4, 5)
    theta = module.theta.detach().clone().requires_grad_(True)
    assert torch.autograd.gradcheck(lambda t: functional_call(module, {"theta": t}, (x,)), (theta,))
    x = x.clone().requires_grad_(True)
    assert torch.autograd.gradcheck(module, (x,))


def test_query_heads_model_learns_xor_with_plain_gd() -> None:
    """Plain GD with ``torch.optim.SGD`` on the exact population loss (SPEC A4, A5): one step
    of ``eta = 16 d^2 ln d`` brings the loss near 0, and the module predicts the labels."""
    d, m = 16, 16
    model = QueryHeadsModel(d, m, seed=0)
    support = SparseParity(d).supports(0, 1)
    eta = 16 * d**2 * torch.log(torch.tensor(float(d))).item()
    optimizer = torch.optim.SGD(model.parameters(), lr=eta)
    before = population_loss(model.weights()[None], support)[0].item()
    for _ in range(3):
        optimizer.zero_grad()
        loss = population_loss(model.weights()[None], support)[0]
        loss.backward()
        optimizer.step()
    after = population_loss(model.weights()[None], support)[0].item()
    assert before > 0.9 and after < 0.05
    x = bits(256, d)
    y = SparseParity(d).labels(x[None], support)[0]
    assert bool((model(x).sign() == y).all())


def test_selector_is_the_ensemble_forward() -> None:
    d, m_p = 3, 4
    X, P, y = selection_batch(d=d, m_p=m_p)
    module = Selector(d, m_p)
    assert module.W.shape == (d + m_p, d + m_p) and not bool(module.W.any())
    with torch.no_grad():
        module.W.copy_(torch.randn(d + m_p, d + m_p, generator=torch.Generator().manual_seed(2)))
    f, s = module(X, P, y)
    want_f, want_s = ensemble_selector.forward(module.W.detach()[None], X[None], P[None], y[None])
    assert torch.equal(f.detach(), want_f[0]) and torch.equal(s.detach(), want_s[0])
    truth = Selector.ground_truth(d, m_p)
    assert torch.equal(truth.W.detach(), ensemble_selector.ground_truth(d, m_p))
    assert truth.cosine_to_ground_truth().item() == pytest.approx(1.0)
    assert module.W.grad is None and Selector(d, m_p).cosine_to_ground_truth().item() == 0.0


@pytest.mark.parametrize("optimizer", ["sgd", "adamw"])
def test_position_only_selector_keeps_the_other_entries_at_zero(optimizer) -> None:
    d, m_p = 3, 4
    module = Selector(d, m_p, trainable="position")
    opt = (
        torch.optim.SGD(module.parameters(), lr=1.0, momentum=0.9)
        if optimizer == "sgd"
        else torch.optim.AdamW(module.parameters(), lr=0.1, weight_decay=0.1)
    )
    for step in range(3):
        X, P, y = selection_batch(d=d, m_p=m_p, key=("train", step))
        opt.zero_grad()
        f, _ = module(X, P, y)
        (f - sts(X, y)).pow(2).sum(dim=-1).mean().backward()
        assert not bool(module.W.grad[:d].any()) and not bool(module.W.grad[:, :d].any())
        opt.step()
    assert not bool(module.W[:d].any()) and not bool(module.W[:, :d].any())
    assert bool(module.W[d:, d:].any())
    with pytest.raises(ValueError, match="trainable"):
        Selector(d, m_p, trainable="content")


@pytest.mark.parametrize("trainable", ["full", "position"])
def test_selector_gradcheck(trainable) -> None:
    d, m_p = 2, 3
    module = Selector(d, m_p, trainable)
    X, P, y = selection_batch(d=d, T=4, m_p=m_p, B=2)
    W = 0.5 * torch.randn(d + m_p, d + m_p, generator=torch.Generator().manual_seed(3))
    W = W.to(torch.float64).requires_grad_(True)
    assert torch.autograd.gradcheck(
        lambda w, x, p: functional_call(module, {"W": w}, (x, p, y)),
        (W, X.clone().requires_grad_(True), P.clone().requires_grad_(True)),
    )


def test_cls_transformer_trains_in_a_plain_loop() -> None:
    """``ClsTransformer`` (SPEC A3) from a ``QueryHeadsModel``: the same predictions, and a few
    ``torch.optim.SGD`` steps on ``W_Q`` (as the query-vector model trains ``theta``) lower a
    sampled loss while the masked entries keep a zero gradient."""
    d, m = 8, 4
    model = QueryHeadsModel(d, m, seed=1)
    block = ClsTransformer.from_query_heads(*model.ensemble())
    x = bits(64, d)
    assert torch.allclose(block(x[None])[0], model(x), atol=1e-12)
    support = SparseParity(d).supports(1, 1)
    y = SparseParity(d).labels(x[None], support)
    optimizer = torch.optim.SGD([block.W_Q], lr=50.0)
    losses = []
    for _ in range(5):
        optimizer.zero_grad()
        loss = (block(x[None]) - y).pow(2).mean()
        loss.backward()
        losses.append(loss.item())
        assert not bool((block.W_Q.grad * (1 - block.q_mask)).any())
        optimizer.step()
    assert losses[-1] < losses[0]


def test_cls_transformer_gradcheck() -> None:
    block = ClsTransformer.from_query_heads(*QueryHeadsModel(3, 2, seed=2).ensemble())
    x = bits(2, 3)[None]
    W_Q = block.W_Q.detach().clone().requires_grad_(True)
    W_K = block.W_K.detach().clone().requires_grad_(True)
    assert torch.autograd.gradcheck(
        lambda q, k: functional_call(block, {"W_Q": q, "W_K": k}, (x,)), (W_Q, W_K)
    )
