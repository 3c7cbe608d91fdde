"""Per-replica metrics (SPEC A6): certified error, specialization, collapse, masses."""

from __future__ import annotations

import pytest
import torch

from attnsep.exact.parity import worst_case_error
from attnsep.metrics.parity import (
    assigned_mass,
    best_assignment,
    certified_error,
    collapsed,
    l1_to_targets,
    specialized,
    support_mass,
    top_positions,
)


def supports(replicas: int, d: int, k: int, seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return (
        torch.stack([torch.randperm(d, generator=gen)[:k] for _ in range(replicas)]).sort(1).values
    )


def gamma_near_support(
    support: torch.Tensor,
    d: int,
    spread: float,
    seed: int,
    swap: bool = False,
    signed: bool = False,
) -> torch.Tensor:
    """Each head mostly on one support bit, the rest of its mass spread randomly."""
    E, k = support.shape
    gen = torch.Generator().manual_seed(seed)
    noise = torch.randn(E, k, d, generator=gen, dtype=torch.float64)
    rest = noise if signed else torch.softmax(noise, dim=-1)
    gamma = spread * rest
    order = list(range(k))[::-1] if swap else list(range(k))
    for h in range(k):
        gamma[torch.arange(E), h, support[:, order[h]]] += 1 - spread
    return gamma


def softmax_after_scaling(support: torch.Tensor, d: int, scale: float, seed: int) -> torch.Tensor:
    E, k = support.shape
    gen = torch.Generator().manual_seed(seed)
    s = torch.randn(E, k, d, generator=gen, dtype=torch.float64)
    for h in range(k):
        s[torch.arange(E), h, support[:, h]] += 3.0
    return torch.softmax(scale * s, dim=-1)


CASES = [
    ("near", 0.01),
    ("near", 0.2),
    ("swapped", 0.05),
    ("signed", 0.05),
    ("signed", 0.5),
    ("softmax", 1.0),
    ("softmax", 3.0),
    ("generic", 0.0),
]


@pytest.mark.parametrize(("kind", "param"), CASES)
@pytest.mark.parametrize(("d", "k"), [(6, 2), (10, 2), (8, 3)])
def test_certified_error_bounds_the_worst_case(kind, param, d, k) -> None:
    E = 20
    s = supports(E, d, k, seed=d + k)
    if kind in ("near", "swapped", "signed"):
        gamma = gamma_near_support(
            s, d, param, seed=d, swap=kind == "swapped", signed=kind == "signed"
        )
    elif kind == "softmax":
        gamma = softmax_after_scaling(s, d, param, seed=d)
    else:
        gamma = torch.randn(
            E, k, d, generator=torch.Generator().manual_seed(d), dtype=torch.float64
        )
    for sign in (-1, 1):
        bound = certified_error(gamma, s)
        worst = worst_case_error(gamma, s, sign=sign, task_sign=sign)
        assert bound.shape == (E,)
        assert (worst <= bound * (1 + 1e-12) + 1e-12).all(), (worst, bound)
    if kind in ("near", "swapped"):
        # positive leak of mass `param` per head: eps_h <= 2 param, so the bound is informative
        assert (bound <= (1 + 2 * param) ** k - 1 + 1e-12).all()


def test_exact_one_hot_certifies_zero() -> None:
    s = torch.tensor([[2, 7], [0, 9]])
    gamma = torch.zeros(2, 2, 10, dtype=torch.float64)
    gamma[0, 0, 7] = gamma[0, 1, 2] = 1.0  # swapped heads still certify 0
    gamma[1, 0, 0] = gamma[1, 1, 9] = 1.0
    assert torch.equal(certified_error(gamma, s), torch.zeros(2, dtype=torch.float64))
    assert torch.equal(worst_case_error(gamma, s), torch.zeros(2, dtype=torch.float64))
    _, perm = best_assignment(gamma, s)
    assert perm.tolist() == [[1, 0], [0, 1]]
    assert torch.equal(assigned_mass(gamma, s), torch.ones(2, 2, dtype=torch.float64))


@pytest.mark.parametrize(("a", "b"), [(0.1, 0.0), (0.05, 0.2), (0.3, 0.3)])
def test_certified_error_is_tight_for_signed_leaks(a: float, b: float) -> None:
    # gamma_1 = (1+a) e_i - a e_l, gamma_2 = (1+b) e_j - b e_l': at x_l = -x_i, x_l' = -x_j
    # |f - y| = (1+2a)(1+2b) - 1 = eps_1 + eps_2 + eps_1 eps_2 with eps = 2a, 2b.
    d = 6
    s = torch.tensor([[1, 4]])
    gamma = torch.zeros(1, 2, d, dtype=torch.float64)
    gamma[0, 0, 1], gamma[0, 0, 0] = 1 + a, -a
    gamma[0, 1, 4], gamma[0, 1, 5] = 1 + b, -b
    bound = certified_error(gamma, s)
    torch.testing.assert_close(
        bound, torch.tensor([2 * a + 2 * b + 4 * a * b], dtype=torch.float64)
    )
    torch.testing.assert_close(worst_case_error(gamma, s), bound, rtol=1e-14, atol=1e-15)


def test_certified_error_is_tight_for_one_leaking_head() -> None:
    # softmax-like: gamma_1 = (1-a) e_i + a e_l, gamma_2 = e_j: worst |f - y| = 2a = eps_1
    s = torch.tensor([[0, 3]])
    gamma = torch.zeros(1, 2, 5, dtype=torch.float64)
    gamma[0, 0, 0], gamma[0, 0, 2], gamma[0, 1, 3] = 0.9, 0.1, 1.0
    torch.testing.assert_close(certified_error(gamma, s), torch.tensor([0.2], dtype=torch.float64))
    torch.testing.assert_close(worst_case_error(gamma, s), torch.tensor([0.2], dtype=torch.float64))


def test_l1_to_targets_and_support_mass() -> None:
    s = torch.tensor([[1, 3]])
    gamma = torch.tensor([[[0.1, 0.6, -0.2, 0.3], [0.0, 0.0, 0.5, 0.5]]], dtype=torch.float64)
    mass = support_mass(gamma, s)
    assert torch.equal(mass, torch.tensor([[[0.6, 0.3], [0.0, 0.5]]], dtype=torch.float64))
    eps = l1_to_targets(gamma, s)
    expected = torch.tensor(
        [
            [
                [(gamma[0, h] - torch.eye(4, dtype=torch.float64)[a]).abs().sum() for a in (1, 3)]
                for h in range(2)
            ]
        ]
    )
    torch.testing.assert_close(eps, expected, rtol=0, atol=1e-15)


def test_best_assignment_picks_the_smaller_bound() -> None:
    s = torch.tensor([[0, 1], [0, 1]])
    gamma = torch.tensor(
        [
            [[0.1, 0.9, 0.0], [0.8, 0.1, 0.1]],  # head 0 -> bit 1, head 1 -> bit 0
            [[0.7, 0.3, 0.0], [0.2, 0.8, 0.0]],
        ],
        dtype=torch.float64,
    )
    bound, perm = best_assignment(gamma, s)
    assert perm.tolist() == [[1, 0], [0, 1]]
    eps = l1_to_targets(gamma, s)
    for e in range(2):
        p = perm[e]
        torch.testing.assert_close(bound[e], (1 + eps[e, 0, p[0]]) * (1 + eps[e, 1, p[1]]) - 1)
    torch.testing.assert_close(
        assigned_mass(gamma, s), torch.tensor([[0.9, 0.8], [0.7, 0.8]], dtype=torch.float64)
    )


def test_best_assignment_validation() -> None:
    with pytest.raises(ValueError, match="as many heads as support bits, got 3 and 2"):
        certified_error(torch.zeros(1, 3, 5), torch.tensor([[0, 1]]))


def test_specialized_and_collapsed_by_hand() -> None:
    s = torch.tensor([[1, 3]] * 5)
    gamma = torch.full((5, 2, 5), 0.1, dtype=torch.float64)
    gamma[0, 0, 1] = gamma[0, 1, 3] = 0.9  # specialized
    gamma[1, 0, 3] = gamma[1, 1, 1] = 0.9  # specialized, heads swapped
    gamma[2, 0, 1] = gamma[2, 1, 1] = 0.9  # collapsed on bit 1
    gamma[3, 0, 1] = gamma[3, 1, 4] = 0.9  # one head off the support: neither
    gamma[4, 0, 0] = gamma[4, 1, 0] = 0.9  # both heads on the same non-support bit: neither
    assert top_positions(gamma).tolist() == [[1, 3], [3, 1], [1, 1], [1, 4], [0, 0]]
    assert specialized(gamma, s).tolist() == [True, True, False, False, False]
    assert collapsed(gamma, s).tolist() == [False, False, True, False, False]


def test_top_positions_use_absolute_weights() -> None:
    s = torch.tensor([[0, 2]])
    gamma = torch.tensor([[[-0.9, 0.2, 0.1], [0.1, 0.0, -0.5]]], dtype=torch.float64)
    assert top_positions(gamma).tolist() == [[0, 2]]
    assert specialized(gamma, s).tolist() == [True]


def test_three_head_specialization_and_collapse() -> None:
    s = torch.tensor([[0, 2, 4], [0, 2, 4]])
    gamma = torch.zeros(2, 3, 6, dtype=torch.float64)
    gamma[0, 0, 4] = gamma[0, 1, 0] = gamma[0, 2, 2] = 1.0
    gamma[1, 0, 4] = gamma[1, 1, 4] = gamma[1, 2, 2] = 1.0
    assert specialized(gamma, s).tolist() == [True, False]
    assert collapsed(gamma, s).tolist() == [False, True]
    assert certified_error(gamma, s)[0] == 0.0
    assert certified_error(gamma, s)[1] > 0.0
