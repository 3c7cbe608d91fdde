"""The A7.5 verdict on synthetic searches: agreeing, contradicting and undecidable records
(SPEC A7.5, Part D); the half-octave search, the exponent's bounds with unreached draws, and the
fast empirical gradient's pieces (the other heads' product, the byte-drawn samples)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from attnsep.experiments import xor_samples
from attnsep.metrics import stats
from attnsep.tasks.parity import BYTE_SIGNS, SparseParity
from attnsep.train.parity import other_heads

CONFIG = xor_samples.Config(n_max=2**40)


def records(law, ds, seeds=64, spread=(0.8, 1.0), collapse=0.2, n_max=2**40, seed=0):
    """Real searches over synthetic replicas: a fraction ``collapse`` fails the population step
    and every empirical one; the others succeed from ``n >= law(d) * u_r`` on (``u_r`` uniform
    in ``spread``, drawn afresh at every ``d``, so ``n*`` follows ``law`` up to the grid and the
    replicas' spread)."""
    config = xor_samples.Config(n_max=n_max)
    out = []
    for d in ds:
        rng = np.random.default_rng([seed, d])
        need = law(d) * rng.uniform(*spread, seeds)
        population = rng.random(seeds) >= collapse
        goal = config.target * population.mean() - 1e-12

        def evaluate(n, need=need, population=population):
            return population & (need <= n)

        n_star, probes = xor_samples.search_samples(
            evaluate, goal, *xor_samples.search_range(d, config)
        )
        out.append(
            {
                "d": d,
                "n_star": n_star,
                "target": config.target,
                "n_max": n_max,
                "population": xor_samples.outcomes_record(population),
                "probes": [p.as_record() for p in probes],
            }
        )
    return out


def judged(recs, config=CONFIG):
    claim = xor_samples.verdict(recs, config)
    json.dumps(claim, allow_nan=False)  # the claim is plain, finite JSON
    json.dumps(recs, allow_nan=False)
    return claim


STANDARD = [16, 32, 64, 128, 256]


def alpha_of(claim):
    return next(e for e in claim["estimates"] if e["name"].startswith("exponent"))


def test_linear_records_are_reproduced_and_contain_1():
    claim = judged(records(lambda d: 600 * d, STANDARD, spread=(0.2, 1.0)))
    assert claim["verdict"] == stats.REPRODUCED, claim["reason"]
    alpha = alpha_of(claim)
    assert alpha["low"] <= 1 <= alpha["high"] < 4
    assert alpha["value"] == pytest.approx(1, abs=0.1)
    assert "contains the paper's empirical exponent 1" in claim["reason"]
    names = [e["name"] for e in claim["estimates"]]
    assert names[:5] == [f"n*(d={d})" for d in STANDARD]
    assert names[5] == "population success rate (d=16)"


def test_quadratic_records_are_reproduced_and_exclude_1():
    claim = judged(records(lambda d: 4 * d**2, STANDARD))
    assert claim["verdict"] == stats.REPRODUCED, claim["reason"]
    assert 1 < alpha_of(claim)["low"] and "excludes" in claim["reason"]


def test_faster_than_d4_is_not_reproduced():
    claim = judged(records(lambda d: 0.05 * d**5, STANDARD))
    assert claim["verdict"] == stats.NOT_REPRODUCED, claim["reason"]
    alpha = alpha_of(claim)
    assert 4 < alpha["low"] <= alpha["value"] == pytest.approx(5, abs=0.15)


def test_too_few_sizes_is_inconclusive():
    claim = judged(records(lambda d: 600 * d, [16, 32]))
    assert claim["verdict"] == stats.INCONCLUSIVE
    assert "at least 3 values of d" in claim["reason"]


def test_noisy_records_near_d4_are_inconclusive_and_say_what_decides():
    recs = records(lambda d: 0.02 * d**4, [16, 18, 20], seeds=16, spread=(0.1, 1.0))
    claim = judged(recs)
    assert claim["verdict"] == stats.INCONCLUSIVE, claim["reason"]
    alpha = alpha_of(claim)
    assert alpha["low"] < 4 < alpha["high"]
    assert "seeds" in claim["reason"] and "d up to about" in claim["reason"]


def test_unreached_n_star_is_open_upwards_not_dropped():
    recs = records(lambda d: 600 * d, STANDARD, n_max=2**16)  # 600 * 128 > 2^16
    claim = judged(recs, xor_samples.Config(n_max=2**16))
    assert claim["verdict"] == stats.INCONCLUSIVE
    assert "beyond n_max = 65536 at d = [128, 256]" in claim["reason"]
    stars = {e["name"]: e for e in claim["estimates"]}
    assert stars["n*(d=256)"]["value"] is None and stars["n*(d=256)"]["high"] is None
    assert stars["n*(d=16)"]["value"] is not None


# --- the search --------------------------------------------------------------------------


def test_grid_and_search_range():
    assert [xor_samples.grid_n(k) for k in range(2, 9)] == [2, 3, 4, 6, 8, 11, 16]
    config = xor_samples.Config(n_start_per_d=16, n_max=2**20)
    assert xor_samples.search_range(64, config) == (20, 40)  # 1024 .. 2^20
    assert xor_samples.search_range(2**20, config) == (40, 40)  # start clamped to the limit
    assert xor_samples.grid_n(41) > 2**20 >= xor_samples.grid_n(40)


@pytest.mark.parametrize("threshold", [1000, 1024, 1449, 5000, 30000, 2**20])
def test_search_finds_the_smallest_passing_grid_point(threshold):
    """One replica that succeeds from ``threshold`` on: ``n*`` is the first grid point at or
    above it, every probe is on the grid, and a guard probe follows an ``n*`` at the top."""
    n_star, probes = xor_samples.search_samples(lambda n: [n >= threshold], 0.5, 19, 40)
    grid = [xor_samples.grid_n(k) for k in range(19, 41)]
    assert n_star == min(n for n in grid if n >= threshold)
    sizes = [p.size for p in probes]
    assert set(sizes) <= set(grid) and sizes == sorted(sizes)
    assert all(p.outcomes == (p.size >= threshold,) for p in probes)
    if n_star < grid[-1]:
        assert max(sizes) > n_star  # a probe (or the guard) above n*


def test_search_beyond_the_limit_returns_none():
    n_star, probes = xor_samples.search_samples(lambda n: [False], 0.5, 10, 20)
    assert n_star is None and probes[-1].size == xor_samples.grid_n(20)


def test_exponent_bounds_with_unreached_draws():
    ds = [16.0, 64.0, 256.0]
    exact = np.array([[100.0, 400.0, 1600.0]] * 100)  # alpha = 1
    low, high = xor_samples.exponent_bounds(ds, exact, [1e6] * 3)
    assert low == pytest.approx(1) and high == pytest.approx(1)
    # unreached above the mean ln d in 10% of draws: the upper bound is open, the lower bound
    # uses the largest probe (a slope that can only be larger)
    above = exact.copy()
    above[:10, 2] = np.inf
    low, high = xor_samples.exponent_bounds(ds, above, [1e6] * 3)
    assert math.isinf(high) and high > 0 and low == pytest.approx(1)
    # unreached below it: the lower bound is open downwards
    below = exact.copy()
    below[:10, 0] = np.inf
    low, high = xor_samples.exponent_bounds(ds, below, [1e6] * 3)
    assert math.isinf(low) and low < 0 and high == pytest.approx(1)


# --- the fast empirical gradient's pieces ------------------------------------------------


@pytest.mark.parametrize("heads", [1, 2, 3, 4])
def test_other_heads_is_the_product_of_the_others(heads):
    proj = torch.randn(7, heads, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    proj[0, 0] = 0.0  # no division by a projection
    expected = torch.stack(
        [torch.prod(proj[:, [j for j in range(heads) if j != h]], dim=1) for h in range(heads)],
        dim=1,
    )
    torch.testing.assert_close(other_heads(proj), expected, rtol=1e-15, atol=0)


def test_byte_signs_are_the_bits_of_each_byte():
    for b in (0, 1, 2, 128, 255, 0b10110010):
        assert BYTE_SIGNS[b].tolist() == [1.0 if b >> k & 1 else -1.0 for k in range(8)]


@pytest.mark.parametrize("d", [12, 20])
def test_byte_drawn_coordinates_are_pairwise_uncorrelated(d):
    """Coordinates from the same byte and from different bytes: ``E[x_i x_j] = 0`` within 5
    standard errors (``1/sqrt(n)`` for ±1 products)."""
    task = SparseParity(d, 2)
    support = task.supports(0, 1)
    n = 20000
    x = torch.cat([c[0] for c in task.samples(7, support, n)], dim=1)[0]
    assert x.shape == (n, d)
    corr = (x.T @ x) / n
    off = corr - torch.eye(d, dtype=torch.float64)
    assert off.abs().max() < 5 / math.sqrt(n)
    assert x.mean(dim=0).abs().max() < 5 / math.sqrt(n)
