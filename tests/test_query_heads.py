"""The query-vector model (SPEC A2): initialization, scores, weights, predictions."""

from __future__ import annotations

import math

import pytest
import torch

from attnsep.embeddings import sphere_embeddings
from attnsep.metrics.parity import support_mass
from attnsep.models.query_heads import (
    QueryHeads,
    head_product,
    initial_queries,
    simplex_vertices,
)
from attnsep.tasks.parity import SparseParity


def test_antisymmetric_two_heads() -> None:
    theta = initial_queries(seed=0, replicas=6, heads=2, m=9)
    assert theta.shape == (6, 2, 9) and theta.dtype == torch.float64
    assert torch.equal(theta[:, 1], -theta[:, 0])
    torch.testing.assert_close(theta.norm(dim=2), torch.ones(6, 2, dtype=torch.float64))
    assert not torch.allclose(theta[0], theta[1])


@pytest.mark.parametrize(("heads", "m"), [(3, 2), (3, 8), (4, 3), (4, 10), (5, 6)])
def test_antisymmetric_simplex_for_more_heads(heads: int, m: int) -> None:
    theta = initial_queries(seed=1, replicas=4, heads=heads, m=m)
    assert theta.shape == (4, heads, m)
    gram = theta @ theta.transpose(1, 2)
    expected = torch.full((heads, heads), -1 / (heads - 1), dtype=torch.float64)
    expected.fill_diagonal_(1.0)
    torch.testing.assert_close(gram, expected.expand(4, -1, -1), rtol=0, atol=1e-12)
    torch.testing.assert_close(
        theta.sum(dim=1), torch.zeros(4, m, dtype=torch.float64), rtol=0, atol=1e-12
    )


@pytest.mark.parametrize("heads", [2, 3, 4, 6])
def test_simplex_vertices(heads: int) -> None:
    v = simplex_vertices(heads)
    assert v.shape == (heads, heads - 1)
    gram = v @ v.T
    expected = torch.full((heads, heads), -1 / (heads - 1), dtype=torch.float64)
    expected.fill_diagonal_(1.0)
    torch.testing.assert_close(gram, expected, rtol=0, atol=1e-12)
    torch.testing.assert_close(
        v.sum(dim=0), torch.zeros(heads - 1, dtype=torch.float64), rtol=0, atol=1e-12
    )


def test_independent_init() -> None:
    theta = initial_queries(seed=2, replicas=5, heads=3, m=7, init="independent")
    torch.testing.assert_close(theta.norm(dim=2), torch.ones(5, 3, dtype=torch.float64))
    assert not torch.allclose(theta[:, 1], -theta[:, 0])
    assert (theta.sum(dim=1).norm(dim=1) > 1e-3).all()


@pytest.mark.parametrize(("heads", "m"), [(2, 2), (3, 3), (3, 32), (4, 9)])
def test_orthogonal_init_is_an_orthonormal_frame(heads: int, m: int) -> None:
    theta = initial_queries(seed=4, replicas=5, heads=heads, m=m, init="orthogonal")
    assert theta.shape == (5, heads, m) and theta.dtype == torch.float64
    gram = theta @ theta.transpose(1, 2)
    eye = torch.eye(heads, dtype=torch.float64).expand(5, -1, -1)
    torch.testing.assert_close(gram, eye, rtol=0, atol=1e-12)
    # distinct frames per replica; |sum of heads| = sqrt(H), where the default simplex has 0
    assert not torch.allclose(theta[0], theta[1])
    torch.testing.assert_close(
        theta.sum(dim=1).norm(dim=1), torch.full((5,), math.sqrt(heads), dtype=torch.float64)
    )


@pytest.mark.parametrize("init", ["antisymmetric", "orthogonal"])
def test_first_head_is_uniform_on_the_sphere(init: str) -> None:
    m, replicas = 4, 600
    theta = initial_queries(seed=3, replicas=replicas, heads=3, m=m, init=init)
    for h in range(3):
        # a uniform unit vector has mean 0 and coordinate variance 1/m
        se = math.sqrt(1 / m / replicas)
        assert theta[:, h].mean(dim=0).abs().max() < 5 * se


def test_initial_queries_are_batch_independent_and_seeded() -> None:
    for init in ("antisymmetric", "independent", "orthogonal"):
        all_ = initial_queries(5, 4, 3, 6, init)
        for e in range(4):
            assert torch.equal(initial_queries(5, 1, 3, 6, init, first_replica=e)[0], all_[e])
        assert torch.equal(initial_queries(5, 4, 3, 6, init), all_)
        assert not torch.equal(initial_queries(6, 4, 3, 6, init), all_)


def test_initial_queries_validation() -> None:
    with pytest.raises(ValueError, match=r"needs m >= 2, got m=1"):
        initial_queries(0, 1, heads=3, m=1)
    with pytest.raises(ValueError, match=r"needs m >= 3, got m=2"):
        initial_queries(0, 1, heads=4, m=2)
    with pytest.raises(ValueError, match=r"orthogonal init with 3 heads needs m >= 3, got m=2"):
        initial_queries(0, 1, heads=3, m=2, init="orthogonal")
    with pytest.raises(ValueError, match=r"init must be one of .*'foo'"):
        initial_queries(0, 1, heads=2, m=4, init="foo")
    # independent init has no simplex constraint
    assert initial_queries(0, 1, heads=4, m=1, init="independent").shape == (1, 4, 1)


def distinct_preferences(heads: int, init: str, replicas: int, d: int = 16, m: int = 32):
    """Per replica, whether the heads' largest initial weights among the ``heads`` support bits
    fall on distinct bits (embeddings, supports and queries as a k-parity run draws them)."""
    model = QueryHeads.sample(seed=0, replicas=replicas, d=d, m=m)
    support = SparseParity(d, heads).supports(0, replicas)
    theta = initial_queries(0, replicas, heads, m, init)
    top = support_mass(model.weights(theta), support).argmax(dim=2).sort(dim=1).values
    return (top[:, 1:] != top[:, :-1]).all(dim=1).double()


@pytest.mark.parametrize(("heads", "simplex", "frame"), [(3, 0.51, 0.22), (4, 0.25, 0.09)])
def test_the_simplex_start_prefers_distinct_support_bits_most_often(heads, simplex, frame):
    """A1.k's choice of the simplex (``antisymmetric``) over an orthonormal frame: the heads'
    first preferences among the support bits are a permutation (the starts that rarely collapse)
    about twice as often. ``simplex`` and ``frame`` are the rates of Gaussian projections (2e5
    draws); 2000 replicas give a standard error below 0.012, and 5 of them is the tolerance."""
    n = 2000
    inits = ("antisymmetric", "orthogonal")
    rates = {init: distinct_preferences(heads, init, n).mean().item() for init in inits}
    tol = 5 * math.sqrt(0.25 / n)
    assert rates["antisymmetric"] == pytest.approx(simplex, abs=tol), rates
    assert rates["orthogonal"] == pytest.approx(frame, abs=tol), rates
    assert rates["antisymmetric"] - rates["orthogonal"] > 0.1


def small_model(attention: str = "softmax", sign: int = -1) -> tuple[QueryHeads, torch.Tensor]:
    model = QueryHeads.sample(seed=0, replicas=3, d=8, m=5, attention=attention, sign=sign)
    theta = 3 * initial_queries(seed=0, replicas=3, heads=2, m=5, init="independent")
    return model, theta


def test_sample_model_shapes_and_embeddings() -> None:
    model, theta = small_model()
    assert (model.d, model.m) == (8, 5)
    assert torch.equal(model.V, sphere_embeddings(0, 3, 8, 5))
    torch.testing.assert_close(model.V.norm(dim=2), torch.ones(3, 8, dtype=torch.float64))
    shifted = QueryHeads.sample(seed=0, replicas=2, d=8, m=5, first_replica=1)
    assert torch.equal(shifted.V, model.V[1:])
    assert QueryHeads.trainable_params(2, 32) == 64


@pytest.mark.parametrize("attention", ["softmax", "linear", "erf"])
def test_scores_weights_predict(attention: str) -> None:
    model, theta = small_model(attention)
    s = model.scores(theta)
    assert s.shape == (3, 2, 8)
    for e in range(3):
        for h in range(2):
            torch.testing.assert_close(s[e, h], model.V[e] @ theta[e, h])
    gamma = model.weights(theta)
    if attention == "softmax":
        expected = torch.softmax(s, dim=-1)
        torch.testing.assert_close(gamma.sum(dim=-1), torch.ones(3, 2, dtype=torch.float64))
    elif attention == "linear":
        expected = s / 8
    else:
        expected = torch.erf(s) / 8
    torch.testing.assert_close(gamma, expected)
    gen = torch.Generator().manual_seed(1)
    x = torch.randint(0, 2, (3, 10, 8), generator=gen).double() * 2 - 1
    f = model.predict(theta, x)
    assert f.shape == (3, 10)
    for e in range(3):
        manual = -(x[e] @ gamma[e, 0]) * (x[e] @ gamma[e, 1])
        torch.testing.assert_close(f[e], manual)


def test_head_product_sign_and_three_heads() -> None:
    gen = torch.Generator().manual_seed(2)
    gamma = torch.randn(2, 3, 4, generator=gen, dtype=torch.float64)
    x = torch.randn(2, 5, 4, generator=gen, dtype=torch.float64)
    f = head_product(gamma, x, sign=1)
    manual = torch.einsum("end,ehd->enh", x, gamma).prod(dim=2)
    torch.testing.assert_close(f, manual)
    torch.testing.assert_close(head_product(gamma, x, sign=-1), -manual)


def test_model_validation() -> None:
    with pytest.raises(ValueError, match="attention must be one of"):
        QueryHeads(torch.zeros(1, 3, 2), attention="foo")
    with pytest.raises(ValueError, match=r"V must have shape E x d x m, got \(3, 2\)"):
        QueryHeads(torch.zeros(3, 2))


@pytest.mark.parametrize("sign", [0, 2])
def test_model_rejects_a_bad_output_sign(sign: int) -> None:
    # f = sign * prod_h (gamma_h . x) with sign in {+1, -1} (SPEC A2, as SparseParity checks)
    with pytest.raises(ValueError, match=f"sign must be \\+1 or -1, got {sign}"):
        QueryHeads(torch.zeros(1, 3, 2, dtype=torch.float64), sign=sign)


@pytest.mark.parametrize(("d", "m"), [(20000, 8), (3001, 97)])
def test_row_blocked_scores_are_the_whole_product(d: int, m: int) -> None:
    """The scores taken over row blocks of ``V`` are bitwise those of one product over all
    rows (each score is a dot product over its own row), a partial last block included."""
    from attnsep.embeddings import per_replica_matmul
    from attnsep.models.query_heads import SCORE_ELEMENTS, row_blocked_scores

    assert d > SCORE_ELEMENTS // m  # more than one block
    V = sphere_embeddings(0, 2, d, m)
    theta = torch.randn(2, 3, m, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    whole = per_replica_matmul(theta, V.transpose(1, 2))
    assert torch.equal(row_blocked_scores(theta, V), whole)
