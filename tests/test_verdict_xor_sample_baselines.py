"""Sample baselines (SPEC Part G, item 2b, finding A7.5c): the span probability against
enumeration and simulation, elimination and pair search against brute force, the quantile and
its bootstrap, the online-SGD counts, the finding's numbers on constructed records, and a tiny
run end to end."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from attnsep.exact import gf2
from attnsep.experiments import xor_sample_baselines as sb
from attnsep.experiments.xor_sample_baselines import verdict as sv
from attnsep.metrics import stats
from attnsep.train.fcn_online import OnlineSetup, check_steps, samples_to_success


def _rank(vectors: list[int]) -> int:
    basis: dict[int, int] = {}
    for v in vectors:
        while v:
            top = v.bit_length() - 1
            if top not in basis:
                basis[top] = v
                break
            v ^= basis[top]
    return len(basis)


@pytest.mark.parametrize(("d", "n"), [(2, 2), (3, 3), (3, 4), (3, 5), (2, 4)])
def test_span_probability_by_enumeration(d, n):
    """Every ``n``-tuple of vectors of ``GF(2)^d``: the share that spans is the product."""
    tuples = itertools.product(range(2**d), repeat=n)
    spanning = sum(_rank(list(t)) == d for t in tuples)
    assert spanning / 2 ** (d * n) == pytest.approx(gf2.span_probability(d, n), abs=1e-12)
    assert gf2.span_probability(d, d - 1) == 0.0


def test_elimination_matches_its_law_and_recovers_the_support():
    """4000 replicas at d = 6: the simulated distribution function stays within the DKW 95%
    band of the exact one (a 5% test), and back substitution returns the support every time."""
    d, replicas = 6, 4000
    rng = np.random.default_rng(11)
    runs = [gf2.elimination_samples(rng, d, (1, 4)) for _ in range(replicas)]
    assert all(ok for _, ok in runs)
    record = {"method": "elimination", "d": d, "samples": [n for n, _ in runs], "recovered": 0}
    check = sv.exactness(record)
    assert check["gap"] <= check["band"]
    assert check["exact_n"] == gf2.span_quantile(d, 0.9) == 10


def test_elimination_and_pair_search_against_brute_force():
    """The same random stream read by a direct implementation: the first ``n`` at which the
    inputs have rank ``d`` (and the support is the only solution among all ``2^d`` vectors),
    and the first ``n`` at which one pair is consistent."""
    d, support = 7, (2, 5)
    for seed in range(6):
        n_elim, ok = gf2.elimination_samples(np.random.default_rng(seed), d, support)
        block = np.random.default_rng(seed).integers(0, 2, size=(d + 64, d), dtype=np.uint8)
        ints = [int(sum(int(b) << a for a, b in enumerate(row))) for row in block]
        first = next(n for n in range(1, len(ints) + 1) if _rank(ints[:n]) == d)
        assert n_elim == first and ok
        labels = block[:first, support[0]] ^ block[:first, support[1]]
        solutions = [
            s
            for s in range(2**d)
            if all(
                bin(x & s).count("1") % 2 == y for x, y in zip(ints[:first], labels, strict=True)
            )
        ]
        assert solutions == [(1 << support[0]) | (1 << support[1])]

        n_pairs = gf2.pair_samples(np.random.default_rng(seed), d, support)
        rows = math.ceil(gf2.information_floor(d)) + 8
        block = np.random.default_rng(seed).integers(0, 2, size=(rows, d), dtype=np.uint8)
        for n in range(1, rows + 1):
            y = block[:n, support[0]] ^ block[:n, support[1]]
            alive = [
                p
                for p in itertools.combinations(range(d), 2)
                if np.array_equal(block[:n, p[0]] ^ block[:n, p[1]], y)
            ]
            if len(alive) == 1:
                assert alive == [support] and n_pairs == n
                break


def test_the_quantile_and_its_bootstrap():
    values = np.array([3.0, 9, 1, 7, 5, 2, 8, 4, 6, 10, math.inf, 11])
    n, draws = sv.quantile_draws(values, seed=0)
    assert n == 11.0  # ceil(0.9 * 12) = 11th smallest
    rows = stats.resample_rows(12, np.random.default_rng(0))
    slow = [np.sort(values[r])[10] for r in rows]
    assert np.array_equal(draws, slow)


def records_for(law, ds=(8, 16, 32, 64), replicas=50, none_at=None):
    """Constant counts ``law(d)`` for every replica (the quantile and its bootstrap are then
    exact); ``none_at``: a ``d`` at which 20% of the MLP's replicas are not done."""
    out = []
    for d in ds:
        samples = [int(law(d))] * replicas
        out.append({"method": "elimination", "d": d, "samples": samples, "recovered": replicas})
        mlp: list[int | None] = [int(10 * law(d) ** 1.5)] * replicas
        if d == none_at:
            mlp[: replicas // 5] = [None] * (replicas // 5)
        out.append(
            {
                "method": "mlp",
                "d": d,
                "samples": mlp,
                "budget": 10**7,
                "test_error": [0.0] * replicas,
                "check_error": [0.0] * replicas,
            }
        )
    return out


def test_the_finding_reports_the_numbers_and_intervals():
    claim = sv.verdict(records_for(lambda d: 2 * d), sb.EXPERIMENT.config("quick"))
    json.dumps(claim, allow_nan=False)
    assert claim["verdict"] == stats.FINDING
    by = {e["name"]: e for e in claim["estimates"]}
    assert by["n* elimination (d=16)"]["value"] == 32 == by["n* elimination (d=16)"]["high"]
    assert by["alpha elimination (n* = c d^alpha)"]["value"] == pytest.approx(1.0)
    assert by["alpha mlp (n* = c d^alpha)"]["value"] == pytest.approx(1.5, abs=1e-3)
    assert by["alpha mlp (n* = c d^alpha)"]["low"] == pytest.approx(1.5, abs=1e-3)
    assert by["elimination recovers the support"]["value"] == 1.0
    for e in claim["estimates"]:
        if None not in (e["value"], e["low"], e["high"]):
            assert e["low"] <= e["value"] <= e["high"], e
    late = sv.verdict(records_for(lambda d: 2 * d, none_at=64), sb.EXPERIMENT.config("quick"))
    by = {e["name"]: e for e in late["estimates"]}
    assert by["n* mlp (d=64)"]["value"] is None  # more than 10% not done: n* = inf
    assert by["mlp not done (d=64)"]["value"] == pytest.approx(0.2)
    assert "10/50 not done" in late["measured"]


def test_online_counts_are_per_replica_and_on_the_check_grid():
    """A replica's count does not depend on the others run beside it; counts sit on the
    geometric grid of checks (times the batch); the test error confirms."""
    setup = OnlineSetup(d=8, width=16, replicas=4, batch=4, max_steps=2000)
    both = samples_to_success(setup)
    alone = samples_to_success(OnlineSetup(**{**setup.__dict__, "replicas": 2, "first_replica": 2}))
    assert np.array_equal(both.samples[2:], alone.samples)
    grid = {s * setup.batch for s in check_steps(setup.max_steps, setup.checks_per_octave)}
    assert all(n in grid for n in both.samples)
    assert (both.check_error <= 0.01).all() and (both.test_error <= 0.03).all()
    assert check_steps(16, 2) == [1, 2, 3, 4, 6, 8, 12, 16]


def test_tiny_run_end_to_end(tmp_path):
    config = sb.EXPERIMENT.config(
        "quick", d_values=[6, 8, 12], seeds=40, mlp_seeds=10, max_samples=4096
    )
    jobs = sb.run.split(config)
    assert [j.methods for j in jobs][:3] == [["mlp"]] * 3
    records = [r for job in jobs for r in sb.run.run(job)]
    json.dumps(records, allow_nan=False)
    claim = sb.verdict.verdict(records, config)
    assert claim["verdict"] == stats.FINDING and claim["criterion"] == sv.RULE
    paths = sb.figure.figure(records, config, tmp_path)
    assert paths[0].read_bytes()[:4] == b"\x89PNG"
    for job in jobs:
        assert sb.run.work(job.model_dump()) > 0 and sb.run.peak(job.model_dump()) > 0


def test_bad_configs_are_one_line_errors():
    with pytest.raises(ValueError, match="methods must be"):
        sb.EXPERIMENT.config("quick", methods=["magic"])
    with pytest.raises(ValueError, match="max_samples"):
        sb.EXPERIMENT.config("quick", batch=128, max_samples=64)
    with pytest.raises(ValueError):
        sb.EXPERIMENT.config("quick", d_values=[4096])
