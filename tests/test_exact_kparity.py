"""The grouped exact loss for ``H = k`` heads (SPEC A4) against the partition sum and the cube."""

from __future__ import annotations

import pytest
import torch

from attnsep.exact import kparity, parity


def draw(heads: int, d: int, replicas: int = 4, seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    gamma = torch.softmax(
        2.0 * torch.randn(replicas, heads, d, generator=gen, dtype=torch.float64), -1
    )
    support = torch.stack([torch.randperm(d, generator=gen)[:heads] for _ in range(replicas)])
    return gamma, support.sort(dim=1).values


@pytest.mark.parametrize("heads", [1, 2, 3, 4])
def test_grouped_loss_equals_partition_sum_and_enumeration(heads: int) -> None:
    gamma, support = draw(heads, 9)
    grouped = kparity.population_loss(gamma, support, 0.7)
    torch.testing.assert_close(
        grouped, parity.population_loss(gamma, support, 0.7), rtol=0, atol=1e-13
    )
    by_cube = parity.enumeration_loss(gamma, support, sign=-1, task_sign=-1, noise=0.15)
    torch.testing.assert_close(grouped, by_cube, rtol=0, atol=1e-13)


@pytest.mark.parametrize("heads", [3, 4])
def test_grouped_gradient_equals_the_partition_sum_gradient(heads: int) -> None:
    gamma, support = draw(heads, 12, seed=1)
    signed = gamma - 0.05  # signed weights too (component-wise maps)
    grads = []
    for loss in (kparity.population_loss, parity.population_loss):
        leaf = signed.clone().requires_grad_(True)
        (grad,) = torch.autograd.grad(loss(leaf, support, 1.0).sum(), leaf)
        grads.append(grad)
    torch.testing.assert_close(grads[0], grads[1], rtol=0, atol=1e-13)


def test_cross_term_is_the_permanent() -> None:
    gamma, support = draw(3, 6)
    mass = torch.gather(gamma, 2, support[:, None, :].expand(-1, 3, -1))
    by_hand = sum(
        mass[:, 0, a] * mass[:, 1, b] * mass[:, 2, c]
        for a, b, c in [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
    )
    torch.testing.assert_close(kparity.support_permanent(gamma, support), by_hand)


def test_bad_head_counts_are_refused() -> None:
    gamma, support = draw(3, 8)
    with pytest.raises(ValueError, match="as many heads as support bits"):
        kparity.population_loss(gamma, support[:, :2])
    gamma5, support5 = draw(5, 8)
    with pytest.raises(ValueError, match="at most 4 heads"):
        kparity.population_loss(gamma5, support5)
