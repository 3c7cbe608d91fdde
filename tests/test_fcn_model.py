"""The ensemble-batched MLP (SPEC A7.6): replicas are independent nets, counts are exact."""

from __future__ import annotations

import math

import pytest
import torch

from attnsep.models.mlp import MLP, count


def _step(model: MLP, x: torch.Tensor, y: torch.Tensor, optimizer: str) -> None:
    """One optimizer step on the per-replica MSE, summed over replicas."""
    params = model.requires_grad_().parameters()
    opt = (
        torch.optim.Adam(params, lr=1e-2)
        if optimizer == "adam"
        else torch.optim.SGD(params, lr=0.1)
    )
    loss = (model(x) - y).pow(2).sum(dim=-1).mean(dim=1)
    opt.zero_grad()
    loss.sum().backward()
    opt.step()
    model.requires_grad_(False)


@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
@pytest.mark.parametrize(("d_out", "depth"), [(1, 1), (3, 2)])
def test_ensemble_equals_separate_nets(optimizer: str, d_out: int, depth: int) -> None:
    """Bitwise on float64 CPU for sizes that keep every replica's block 64-byte aligned."""
    E, d_in, width, n = 4, 16, 8, 64
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(E, n, d_in, generator=gen, dtype=torch.float64)
    y = torch.randn(E, n, d_out, generator=gen, dtype=torch.float64)
    ensemble = MLP.init(E, d_in, width, d_out, depth, seed=5)
    singles = [MLP.init(1, d_in, width, d_out, depth, seed=5, first_replica=e) for e in range(E)]
    for e, single in enumerate(singles):
        for p, q in zip(ensemble.parameters(), single.parameters(), strict=True):
            assert torch.equal(p[e], q[0])
        assert torch.equal(ensemble(x)[e], single(x[e : e + 1])[0])
    _step(ensemble, x, y, optimizer)
    for e, single in enumerate(singles):
        _step(single, x[e : e + 1], y[e : e + 1], optimizer)
        for p, q in zip(ensemble.parameters(), single.parameters(), strict=True):
            assert torch.equal(p[e], q[0])


def test_forward_is_the_two_layer_formula() -> None:
    """``f(x) = Σ_k a_k relu(w_k·x + b_k) + c`` (SPEC A7.6), replica by replica."""
    net = MLP.init(3, 6, 4, seed=2)
    x = torch.randn(3, 10, 6, dtype=torch.float64)
    (W, a), (b, c) = net.weights, net.biases
    for e in range(3):
        expected = torch.relu(x[e] @ W[e] + b[e]) @ a[e] + c[e]
        torch.testing.assert_close(net(x)[e], expected)


@pytest.mark.parametrize(
    ("d_in", "width", "d_out", "depth"), [(16, 8, 1, 1), (40, 64, 4, 1), (5, 3, 2, 3)]
)
def test_count_matches_the_tensors(d_in: int, width: int, d_out: int, depth: int) -> None:
    net = MLP.init(2, d_in, width, d_out, depth)
    on_tensors = sum(p[0].numel() for p in net.parameters())
    assert count(d_in, width, d_out, depth) == net.count() == on_tensors
    assert all(p.shape[0] == 2 for p in net.parameters())


def test_two_layer_count_is_spec_formula() -> None:
    for d, width in [(16, 1), (64, 32), (128, 5)]:
        assert count(d, width) == width * (d + 2) + 1


def test_init_is_pytorch_default_and_per_replica() -> None:
    net = MLP.init(3, 50, 20, 2, seed=0)
    for w, b in zip(net.weights, net.biases, strict=True):
        bound = 1 / math.sqrt(w.shape[1])
        assert w.abs().max() <= bound and b.abs().max() <= bound
        assert w.abs().max() > 0.9 * bound  # uses the whole range
    assert not torch.equal(net.weights[0][0], net.weights[0][1])
    assert torch.equal(MLP.init(3, 50, 20, 2, seed=0).weights[0], net.weights[0])
    assert not torch.equal(MLP.init(3, 50, 20, 2, seed=1).weights[0], net.weights[0])
    as32 = MLP.init(3, 50, 20, 2, seed=0, dtype=torch.float32)
    assert torch.equal(as32.weights[0], net.weights[0].float())


def test_bad_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match="width must be an integer >= 1"):
        MLP.init(2, 4, 0)
    with pytest.raises(ValueError, match="depth"):
        count(4, 3, 1, 0)
