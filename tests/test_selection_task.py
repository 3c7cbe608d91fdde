"""Sparse token selection data (SPEC B1) and its positional encodings (SPEC B2)."""

from __future__ import annotations

import math

import pytest
import torch

from attnsep.positional_encodings import FixedPE, StochasticPE
from attnsep.tasks.selection import TokenSelection, sts, subset_mask


def test_shapes_and_subsets_are_valid() -> None:
    task = TokenSelection(d=4, T=9, q=3)
    data = task.sample(0, replicas=2, batch=50, key=("train", 0))
    assert data.X.shape == (2, 50, 9, 4) and data.X.dtype == torch.float64
    assert data.y.shape == (2, 50, 3) and data.y.dtype == torch.int64
    assert (
        bool((data.y.diff(dim=-1) > 0).all()) and int(data.y.min()) >= 0 and int(data.y.max()) < 9
    )
    assert torch.equal(
        subset_mask(data.y, 9).sum(dim=-1), torch.full((2, 50), 3.0, dtype=torch.float64)
    )
    longer = task.sample(0, 1, 5, ("eval", 40), length=40)
    assert longer.X.shape == (1, 5, 40, 4) and int(longer.y.max()) < 40


def test_sampling_is_deterministic_and_replica_independent() -> None:
    task = TokenSelection(d=3, T=7, q=2)
    a = task.sample(5, 3, 16, ("train", 4))
    b = task.sample(5, 3, 16, ("train", 4))
    assert torch.equal(a.X, b.X) and torch.equal(a.y, b.y)
    alone = task.sample(5, 1, 16, ("train", 4), first_replica=2)
    assert torch.equal(alone.X[0], a.X[2]) and torch.equal(alone.y[0], a.y[2])
    other = task.sample(5, 3, 16, ("train", 5))
    assert not torch.equal(other.X, a.X)


def test_subsets_are_uniform_and_tokens_standard() -> None:
    T, q, n = 6, 2, 30000
    data = TokenSelection(d=2, T=T, q=q).sample(1, 1, n, ("check",))
    mask = subset_mask(data.y, T)[0]
    p = q / T  # each position is chosen with probability q/T
    se = math.sqrt(p * (1 - p) / n)
    assert float((mask.mean(dim=0) - p).abs().max()) < 5 * se
    pair = (mask[:, 0] * mask[:, 1]).mean()  # a fixed pair: 1 / C(T, 2)
    pair_p = 1 / math.comb(T, 2)
    assert abs(float(pair) - pair_p) < 5 * math.sqrt(pair_p * (1 - pair_p) / n)
    X = data.X.flatten(0, 2)
    assert float(X.mean(dim=0).abs().max()) < 5 / math.sqrt(X.shape[0])
    assert float((X.var(dim=0) - 1).abs().max()) < 5 * math.sqrt(2 / X.shape[0])


def test_sts_matches_a_loop() -> None:
    data = TokenSelection(d=3, T=5, q=2).sample(2, 2, 4, ("k",))
    out = sts(data.X, data.y)
    for e in range(2):
        for b in range(4):
            want = sum(data.X[e, b, int(i)] for i in data.y[e, b]) / 2
            assert torch.allclose(out[e, b], want, atol=1e-15)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"d": 0, "T": 5, "q": 2}, "d must be"), ({"d": 2, "T": 3, "q": 4}, "q must be <= T")],
)
def test_bad_task_sizes(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TokenSelection(**kwargs)


def test_length_shorter_than_q_is_refused() -> None:
    with pytest.raises(ValueError, match="length must be >= q"):
        TokenSelection(d=2, T=5, q=3).sample(0, 1, 2, ("k",), length=2)


def test_stochastic_pe_is_unit_fresh_and_seeded() -> None:
    pe = StochasticPE(seed=3, replicas=2, width=16)
    P = pe.draw(("train", 0), 8, 10)
    assert P.shape == (2, 8, 10, 16) and P.dtype == torch.float64
    assert torch.allclose(P.norm(dim=-1), torch.ones(2, 8, 10, dtype=torch.float64), atol=1e-14)
    assert not torch.allclose(P[:, 0], P[:, 1])  # fresh per sequence
    assert torch.equal(P, pe.draw(("train", 0), 8, 10))
    assert not torch.allclose(P, pe.draw(("train", 1), 8, 10))  # fresh per step
    alone = StochasticPE(seed=3, replicas=1, width=16, first_replica=1).draw(("train", 0), 8, 10)
    assert torch.equal(alone[0], P[1])
    assert pe.draw(("eval", 40), 2, 40).shape == (2, 2, 40, 16)  # any length


def test_gaussian_pe_has_unit_norm_on_average() -> None:
    P = StochasticPE(seed=0, replicas=1, width=64, kind="gaussian").draw(("k",), 200, 10)
    sq = P.pow(2).sum(dim=-1).flatten()  # chi2_64 / 64: mean 1, variance 2/64
    assert abs(float(sq.mean()) - 1) < 5 * math.sqrt(2 / 64 / sq.numel())


def test_fixed_pe_is_frozen_prefix_stable_and_bounded() -> None:
    short = FixedPE.drawn(seed=4, replicas=2, positions=20, width=8)
    long = FixedPE.drawn(seed=4, replicas=2, positions=160, width=8)
    assert torch.equal(long.table[:, :20], short.table)
    P = short.draw(("train", 0), 5, 12)
    assert P.shape == (2, 5, 12, 8) and torch.equal(P[:, 0], P[:, 4])
    assert torch.equal(P, short.draw(("train", 99), 5, 12))
    with pytest.raises(ValueError, match="holds 20 positions, asked for length 40"):
        short.draw(("eval", 40), 5, 40)


def test_unknown_pe_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="pe kind must be one of sphere, gaussian"):
        StochasticPE(seed=0, replicas=1, width=4, kind="uniform")


def test_a_sphere_encoding_drawn_exactly_zero_becomes_the_first_axis():
    """At ``m_p = 1`` a float32 normal of exactly 0 (about one in 1.5e7) once made a NaN
    encoding and failed fcn-selection's full-preset evaluation; such a row is ``e_1`` now,
    and every other row is as before."""
    from attnsep.positional_encodings import _encode

    def encoded(rows: list[list[float]]) -> list[list[float]]:
        return _encode(torch.tensor(rows, dtype=torch.float64), "sphere").tolist()

    assert encoded([[0.0], [-2.5], [3.0]]) == [[1.0], [-1.0], [1.0]]
    assert encoded([[0.0, 0.0], [3.0, 4.0], [0.0, -2.0]]) == [[1.0, 0.0], [0.6, 0.8], [0.0, -1.0]]
