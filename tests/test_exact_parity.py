"""Exact population loss (SPEC A4): closed form vs enumeration vs Monte Carlo."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnsep.exact.parity import (
    MAX_ENUMERATION_D,
    RADEMACHER_CUMULANTS,
    cube,
    enumeration_loss,
    enumeration_terms,
    even_partitions,
    population_loss,
    rademacher_moment,
    two_head_loss,
)
from attnsep.models.query_heads import head_product
from attnsep.tasks.parity import SparseParity


def weights(kind: str, replicas: int, heads: int, d: int, seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    z = torch.randn(replicas, heads, d, generator=gen, dtype=torch.float64)
    if kind == "softmax":
        return torch.softmax(2.5 * z, dim=-1)
    if kind == "positive":
        return torch.rand(replicas, heads, d, generator=gen, dtype=torch.float64)
    return z  # signed


def random_supports(replicas: int, d: int, k: int, seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return (
        torch.stack([torch.randperm(d, generator=gen)[:k] for _ in range(replicas)]).sort(1).values
    )


def double_factorial(n: int) -> int:
    return math.prod(range(n, 0, -2))


# --- even partitions and Rademacher cumulants ----------------------------------------------


@pytest.mark.parametrize(("n", "count"), [(0, 1), (2, 1), (4, 4), (6, 31), (8, 379), (10, 6556)])
def test_even_partition_counts(n: int, count: int) -> None:
    parts = even_partitions(n)
    assert len(parts) == count
    canonical = {tuple(sorted(tuple(sorted(b)) for b in p)) for p in parts}
    assert len(canonical) == count  # no partition listed twice
    for p in parts:
        assert sorted(i for block in p for i in block) == list(range(n))
        assert all(len(block) % 2 == 0 and len(block) > 0 for block in p)
    pairings = [p for p in parts if all(len(b) == 2 for b in p)]
    assert len(pairings) == double_factorial(n - 1)  # (2j-1)!! pairings of 2j items


@pytest.mark.parametrize("n", [1, 3, 5, 7])
def test_odd_counts_have_no_even_partition(n: int) -> None:
    assert even_partitions(n) == ()


def test_rademacher_cumulants_match_log_cosh() -> None:
    # kappa_{2n} = 2^{2n} (2^{2n} - 1) B_{2n} / (2n); Bernoulli numbers B_2..B_12
    bernoulli = {2: 1 / 6, 4: -1 / 30, 6: 1 / 42, 8: -1 / 30, 10: 5 / 66, 12: -691 / 2730}
    for order, b in bernoulli.items():
        expected = 2**order * (2**order - 1) * b / order
        assert RADEMACHER_CUMULANTS[order] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("count", [1, 2, 3, 4, 5, 6, 8])
def test_rademacher_moment_equals_enumeration(count: int) -> None:
    d = 6
    gen = torch.Generator().manual_seed(count)
    forms = list(torch.randn(count, 3, d, generator=gen, dtype=torch.float64))
    got = rademacher_moment(forms)
    x = cube(d)
    expected = torch.stack([(x @ f.T) for f in forms]).prod(dim=0).mean(dim=0)  # (3,)
    assert got.shape == (3,)
    torch.testing.assert_close(got, expected, rtol=1e-11, atol=1e-11)


def test_rademacher_moment_single_coordinate_powers() -> None:
    # E[x^2n] = 1 for a single Rademacher coordinate: all cumulant expansions must sum to 1.
    e0 = torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64)
    for count in (2, 4, 6, 8, 10):  # 12 forms (150349 partitions) is slow
        assert rademacher_moment([e0] * count).item() == pytest.approx(1.0, abs=1e-9)


def test_rademacher_moment_refuses_too_many_forms() -> None:
    with pytest.raises(ValueError, match="at most 12 forms"):
        rademacher_moment([torch.ones(2, dtype=torch.float64)] * 13)


# --- the loss: closed form vs enumeration --------------------------------------------------


@pytest.mark.parametrize("d", [4, 5, 7, 10])
@pytest.mark.parametrize("kind", ["positive", "softmax", "signed"])
@pytest.mark.parametrize(
    ("sign", "task_sign", "noise"), [(-1, -1, 0.0), (1, -1, 0.0), (1, 1, 0.25), (-1, 1, 0.1)]
)
def test_two_head_loss_equals_enumeration(d, kind, sign, task_sign, noise) -> None:
    gamma = weights(kind, 4, 2, d, seed=d)
    support = random_supports(4, d, 2, seed=d)
    corr = sign * task_sign * (1 - 2 * noise)
    got = population_loss(gamma, support, corr)
    expected = enumeration_loss(gamma, support, sign, task_sign, noise)
    torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-12)
    assert (got >= -1e-12).all()


@pytest.mark.parametrize(("heads", "k"), [(3, 3), (4, 4), (2, 3), (3, 2), (2, 1), (1, 1)])
@pytest.mark.parametrize("d", [4, 7, 10])
@pytest.mark.parametrize("kind", ["positive", "softmax", "signed"])
@pytest.mark.parametrize(("sign", "task_sign", "noise"), [(-1, -1, 0.0), (1, -1, 0.2)])
def test_cumulant_path_equals_enumeration(heads, k, d, kind, sign, task_sign, noise) -> None:
    gamma = weights(kind, 3, heads, d, seed=10 * heads + k + d)
    support = random_supports(3, d, k, seed=k + d)
    got = population_loss(gamma, support, sign * task_sign * (1 - 2 * noise))
    expected = enumeration_loss(gamma, support, sign, task_sign, noise)
    torch.testing.assert_close(got, expected, rtol=1e-11, atol=1e-11)


def test_population_loss_refuses_too_many_heads() -> None:
    gamma = torch.full((1, 7, 8), 1 / 8, dtype=torch.float64)
    with pytest.raises(ValueError, match="got 7"):
        population_loss(gamma, torch.arange(7)[None])


@pytest.mark.parametrize("corr", [1.0, -1.0, 0.4])
def test_two_head_fast_path_equals_cumulant_formula(corr: float) -> None:
    gamma = weights("signed", 5, 2, 9, seed=3)
    support = random_supports(5, 9, 2, seed=3)
    g, h = gamma[:, 0], gamma[:, 1]
    bits = [torch.zeros_like(g).scatter_(1, support[:, a : a + 1], 1.0) for a in range(2)]
    general = rademacher_moment([g, g, h, h]) - 2 * corr * rademacher_moment([g, h, *bits]) + 1
    torch.testing.assert_close(two_head_loss(gamma, support, corr), general, rtol=1e-12, atol=1e-12)


def test_loss_at_the_solution_and_at_zero() -> None:
    d = 6
    support = torch.tensor([[1, 4], [0, 5]])
    gamma = torch.zeros(2, 2, d, dtype=torch.float64)
    assert torch.equal(population_loss(gamma, support), torch.ones(2, dtype=torch.float64))
    gamma[torch.arange(2), 0, support[:, 0]] = 1.0
    gamma[torch.arange(2), 1, support[:, 1]] = 1.0
    torch.testing.assert_close(population_loss(gamma, support), torch.zeros(2, dtype=torch.float64))
    # wrong overall sign: f = -y everywhere, loss 4
    torch.testing.assert_close(
        population_loss(gamma, support, -1.0), torch.full((2,), 4.0, dtype=torch.float64)
    )
    # collapse: both heads on the same support bit, f = -1 constant, loss 2
    collapsed = gamma.clone()
    collapsed[:, 1] = collapsed[:, 0]
    torch.testing.assert_close(
        population_loss(collapsed, support), torch.full((2,), 2.0, dtype=torch.float64)
    )


@st.composite
def loss_cases(draw):
    heads = draw(st.sampled_from([2, 2, 3]))
    d = draw(st.integers(min_value=heads, max_value=8))
    values = st.floats(min_value=-3, max_value=3, allow_nan=False, allow_infinity=False)
    flat = draw(st.lists(values, min_size=heads * d, max_size=heads * d))
    support = draw(st.lists(st.integers(0, d - 1), min_size=heads, max_size=heads, unique=True))
    sign = draw(st.sampled_from([-1, 1]))
    task_sign = draw(st.sampled_from([-1, 1]))
    noise = draw(st.sampled_from([0.0, 0.1, 0.45]))
    return d, heads, flat, support, sign, task_sign, noise


@settings(max_examples=80, deadline=None)
@given(loss_cases())
def test_property_closed_form_equals_enumeration(case) -> None:
    d, heads, flat, support, sign, task_sign, noise = case
    gamma = torch.tensor(flat, dtype=torch.float64).reshape(1, heads, d)
    s = torch.tensor([sorted(support)])
    got = population_loss(gamma, s, sign * task_sign * (1 - 2 * noise))
    expected = enumeration_loss(gamma, s, sign, task_sign, noise)
    scale = 1 + float(gamma.abs().sum(dim=2).prod())  # |f| <= prod_h |gamma_h|_1
    assert abs(float(got - expected)) <= 1e-12 * scale**2
    assert float(got) >= -1e-12 * scale**2


# --- Monte Carlo ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("heads", "sign", "noise", "kind"),
    [(2, -1, 0.0, "softmax"), (2, -1, 0.2, "near"), (2, 1, 0.1, "signed"), (3, 1, 0.0, "softmax")],
)
def test_population_loss_matches_monte_carlo(heads, sign, noise, kind) -> None:
    d, replicas, n = 50, 3, 20000
    task = SparseParity(d, heads, sign, noise)
    support = task.supports(seed=7, replicas=replicas)
    if kind == "near":  # close to the solution: small loss, dominated by label noise
        gamma = 0.02 * torch.softmax(weights("signed", replicas, heads, d, 1), dim=-1)
        for h in range(heads):
            gamma[torch.arange(replicas), h, support[:, h]] += 0.98
    elif kind == "signed":
        gamma = weights("signed", replicas, heads, d, seed=2) / math.sqrt(d)
    else:
        gamma = weights("softmax", replicas, heads, d, seed=2)
    model_sign = -1
    exact = population_loss(gamma, support, model_sign * sign * (1 - 2 * noise))
    sq = torch.cat(
        [(head_product(gamma, x, model_sign) - y) ** 2 for x, y in task.samples(11, support, n)],
        dim=1,
    )
    mean, se = sq.mean(dim=1), sq.std(dim=1) / math.sqrt(n)
    assert (se > 0).all()
    assert ((mean - exact).abs() < 5 * se).all(), (mean, exact, se)


# --- enumeration helpers --------------------------------------------------------------------


def test_cube_is_the_whole_hypercube() -> None:
    x = cube(5)
    assert x.shape == (32, 5) and x.dtype == torch.float64
    assert set(x.unique().tolist()) == {-1.0, 1.0}
    assert len({tuple(r) for r in x.tolist()}) == 32
    with pytest.raises(ValueError, match=f"d <= {MAX_ENUMERATION_D}, got d=23"):
        cube(23)


def test_enumeration_terms_are_the_model_and_the_labels() -> None:
    gamma = weights("signed", 2, 2, 4, seed=0)
    support = torch.tensor([[0, 3], [1, 2]])
    f, y = enumeration_terms(gamma, support, sign=-1, task_sign=1)
    x = cube(4)
    for e in range(2):
        torch.testing.assert_close(f[e], -(x @ gamma[e, 0]) * (x @ gamma[e, 1]))
        assert torch.equal(y[e], x[:, support[e, 0]] * x[:, support[e, 1]])
