"""The A7.5a verdict on synthetic searches: agreeing, contradicting and undecidable records
(SPEC A7.5, Part E, F), with and without stuck replicas, and its calibration; the half-octave
search, its refinement without the stuck replicas, the stuck rate, the exponent's bounds with
unreached draws, and the fast empirical gradient's pieces (the other heads' product, the
byte-drawn samples)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from attnsep.experiments import xor_samples
from attnsep.experiments.xor_samples import search as sample_search
from attnsep.metrics import calibration, stats
from attnsep.tasks.parity import BYTE_SIGNS, SparseParity
from attnsep.train.parity import other_heads

CONFIG = xor_samples.config.Config(n_max=2**40)
EDGE = sample_search.edge
"""A7.5a's searches end at a guard on ``d^4 (ln d)^2``."""


def records(law, ds, seeds=64, spread=(0.8, 1.0), collapse=0.2, n_max=2**40, seed=0, stuck=0):
    """Real searches (``search_record``) over synthetic replicas: a fraction ``collapse`` fails
    the population step and every empirical one; ``stuck`` of the others fail every empirical
    step; the rest succeed from ``n >= law(d) * u_r`` on (``u_r`` uniform in ``spread``, drawn
    afresh at every ``d``, so ``n*`` follows ``law`` up to the grid and the replicas' spread)."""
    config = xor_samples.config.Config(n_max=n_max)
    out = []
    for d in ds:
        rng = np.random.default_rng([seed, d])
        need = law(d) * rng.uniform(*spread, seeds)
        population = rng.random(seeds) >= collapse
        need[np.flatnonzero(population)[:stuck]] = math.inf

        def evaluate(n, need=need, population=population):
            return population & (need <= n)

        out.append(sample_search.search_record(evaluate, population, d, config, EDGE))
    return out


def judged(recs, config=CONFIG):
    recs = sample_search.run_records(recs, "fixed", config.m)
    claim = xor_samples.verdict.bound_claim(recs, config)
    json.dumps(claim, allow_nan=False)  # the claim is plain, finite JSON
    json.dumps(recs, allow_nan=False)
    return claim


STANDARD = [16, 32, 64, 128, 256]


def alpha_of(claim):
    return next(e for e in claim["estimates"] if e["name"].startswith("exponent"))


def test_linear_records_are_reproduced():
    claim = judged(records(lambda d: 600 * d, STANDARD, spread=(0.2, 1.0)))
    assert claim["verdict"] == stats.REPRODUCED, claim["reason"]
    assert "at every d n*'s upper end is <= d^4" in claim["reason"]
    assert "stuck share is not shown above 0.1" in claim["reason"]
    alpha = alpha_of(claim)  # reported, not judged
    assert alpha["low"] <= 1 <= alpha["high"] < 4
    assert alpha["value"] == pytest.approx(1, abs=0.1)
    assert "the interval contains 1" in claim["measured"]
    names = [e["name"] for e in claim["estimates"]]
    assert names[:5] == [f"n*(d={d})" for d in STANDARD]
    assert names[5:10] == [f"n*/d^4 (d={d})" for d in STANDARD]
    assert names[10] == "population success rate (d=16)"
    ratio = next(e for e in claim["estimates"] if e["name"] == "n*/d^4 (d=64)")
    star = next(e for e in claim["estimates"] if e["name"] == "n*(d=64)")
    assert ratio["value"] == pytest.approx(star["value"] / 64**4)


def test_quadratic_records_are_reproduced_and_exclude_1():
    claim = judged(records(lambda d: 4 * d**2, STANDARD))
    assert claim["verdict"] == stats.REPRODUCED, claim["reason"]
    assert 1 < alpha_of(claim)["low"] and "excludes 1" in claim["measured"]


def test_above_d4_ln2_is_not_reproduced():
    """Every replica needs three times ``d^4 (ln d)^2``: every population success fails at the
    guard (stuck), a share far above 0.1."""
    claim = judged(records(lambda d: 3 * xor_samples.search.edge(d), STANDARD))
    assert claim["verdict"] == stats.NOT_REPRODUCED, claim["reason"]
    assert "at d=16" in claim["reason"] and ">= d^4 (ln d)^2" in claim["reason"]
    assert stuck_of(claim, 16)["value"] == 1


def test_n_star_at_the_guard_above_the_line_is_not_a_contradiction():
    """``n*`` at the guard, the first grid point above ``d^4 (ln d)^2``, in every replica: its
    lower end is above the line, but every replica passes there (none stuck) and the true
    crossing may lie just above the grid point below the line (version 3 widened the lower end
    by ``sqrt 2`` for this reason), so this is inconclusive, not a contradiction."""

    def at_the_guard(d):
        return 0.99 * sample_search.grid_n(sample_search.search_range(d, CONFIG, EDGE)[2])

    near = records(at_the_guard, STANDARD, spread=(0.99, 1.0))
    a = sample_search.analyse(near, CONFIG)
    assert all(lo > xor_samples.search.edge(d) for d, lo in zip(a["d"], a["low"], strict=True))
    assert all(s["stuck"] == 0 for s in a["stuck"])
    claim = judged(near)
    assert claim["verdict"] == stats.INCONCLUSIVE, claim["reason"]
    assert "exceeds d^4" in claim["reason"]


def test_too_few_sizes_is_inconclusive():
    claim = judged(records(lambda d: 600 * d, [16, 32]))
    assert claim["verdict"] == stats.INCONCLUSIVE
    assert "at least 3 values of d" in claim["reason"]


def test_between_the_bound_and_its_polylog_is_inconclusive():
    claim = judged(records(lambda d: 2 * d**4, STANDARD))
    assert claim["verdict"] == stats.INCONCLUSIVE, claim["reason"]
    assert "upper end exceeds d^4" in claim["reason"] and "more seeds" in claim["reason"]


def test_unreached_n_star_is_open_upwards_not_dropped():
    """``600 d``: at ``d = 256`` every replica needs more than ``n_max = 2^16`` (all stuck: open
    upwards); at ``d = 128`` only those needing more are stuck (reported). Both stuck shares are
    far above 0.1, but at a guard that ``n_max`` stops below ``d^4 (ln d)^2``: inconclusive."""
    recs = records(lambda d: 600 * d, STANDARD, n_max=2**16)  # 600 * 128 * 0.8 < 2^16 < 600 * 256
    claim = judged(recs, xor_samples.config.Config(n_max=2**16))
    assert claim["verdict"] == stats.INCONCLUSIVE
    assert "at d = [128, 256] the stuck share exceeds 0.1 at a guard that n_max" in claim["reason"]
    assert "larger n_max" in claim["reason"]
    stars = {e["name"]: e for e in claim["estimates"]}
    assert stars["n*(d=256)"]["value"] is None and stars["n*(d=256)"]["high"] is None
    assert stars["stuck rate (d=256)"]["value"] == 1
    assert 0 < stars["stuck rate (d=128)"]["value"] < 1
    assert stars["n*(d=128)"]["high"] <= 2**16 and stars["n*(d=16)"]["value"] is not None


@pytest.mark.parametrize("slow, stuck", [(2.0**15, 0), (2.0**18, 0), (2.0**20, 9)])
def test_the_guard_at_d4_ln2_decides_which_replicas_are_stuck(slow, stuck):
    """9 of 128 replicas at ``d = 16`` need ``slow`` samples, the others about 4000. Guard
    probes climb two octaves at a time from the search's largest probe, through ``d^4 = 2^16``,
    to the guard ``2^19``, the first grid point at or above ``d^4 (ln d)^2 = 503,316``. ``2^15``:
    they pass by ``d^4``, none stuck, ``n*``'s interval closes below ``d^4``. ``2^18`` (version
    3's guard at ``d^4`` left them stuck): they pass a guard probe, none stuck, and a tenth of
    the resamples lack the target at ``d^4``, so ``n*``'s upper end lies above it. ``2^20``
    (above the line): they fail at ``2^19``, stuck, 9 of 128 reported, ``n*`` of the others
    below ``d^4``."""
    config = xor_samples.config.Config(n_max=2**22)
    rng = np.random.default_rng(5)
    need = np.where(np.arange(128) < 9, slow, 4000 * rng.uniform(0.5, 1.0, 128))
    population = np.ones(128, dtype=bool)

    def evaluate(n):
        return need <= n

    rec = sample_search.search_record(evaluate, population, 16, config, EDGE)
    assert rec["n_guard"] == 2**19
    sizes = [p["size"] for p in rec["probes"]]
    assert max(sizes) <= 2**19  # never a probe beyond the guard
    if slow > 2**16:  # the climb stops once every replica passes, and does not skip d^4
        assert max(sizes) == min(2**19, slow) and 2**16 in sizes
    else:
        assert slow <= max(sizes) <= 2**16
    below = dict(rec, probes=[p for p in rec["probes"] if p["size"] <= 2**16])
    assert sample_search.stuck_rate(below)["stuck"] == (0 if slow < 2**16 else 9)
    a = sample_search.analyse([rec], config)
    assert a["stuck"][0]["stuck"] == stuck and a["stuck"][0]["trials"] == 128
    assert (a["high"][0] <= 2**16) == (slow != 2**18)
    assert a["high"][0] <= 2**19


# --- stuck replicas (SPEC Part F) ---------------------------------------------------------


def stuck_of(claim, d):
    return next(e for e in claim["estimates"] if e["name"] == f"stuck rate (d={d})")


def test_stuck_replicas_are_left_out_and_the_bound_is_reproduced():
    """``600 d`` with 8 of about 100 population successes stuck at every ``d``: counted in, they
    leave over 2.5% of the resamples below the target at every probe (the interval open, the old
    defect); left out, every ``d``'s interval closes below ``d^4``, and their rate is
    reported."""
    recs = records(lambda d: 600 * d, STANDARD, seeds=128, stuck=8)
    claim = judged(recs)
    assert claim["verdict"] == stats.REPRODUCED, claim["reason"]
    assert "not stuck" in claim["reason"] and "d=16: 8/" in claim["reason"]
    rate = stuck_of(claim, 64)
    trials = recs[2]["population"]["successes"]
    assert rate["value"] == pytest.approx(8 / trials)
    assert (rate["low"], rate["high"]) == pytest.approx(stats.wilson(8, trials))
    counted = []  # the thresholds with the stuck replicas counted in
    for rec in recs:
        sizes, outcomes = sample_search.probe_matrix(rec["probes"])
        reference = np.array(rec["population"]["outcomes"], dtype=bool)
        _, boot = stats.threshold_draws(sizes, outcomes, 0.9, reference=reference)
        counted.append(stats.interval(boot)[1])
    assert all(math.isinf(h) for h in counted)


def test_stuck_replicas_and_n_star_above_the_edge_are_not_reproduced():
    recs = records(lambda d: 3 * xor_samples.search.edge(d), STANDARD, seeds=128, stuck=4)
    claim = judged(recs)
    assert claim["verdict"] == stats.NOT_REPRODUCED, claim["reason"]
    assert stuck_of(claim, 16)["value"] > 0


def test_stuck_replicas_and_n_star_between_the_bound_and_its_polylog_are_inconclusive():
    recs = records(lambda d: 2 * d**4, STANDARD, seeds=128, stuck=4)
    claim = judged(recs)
    assert claim["verdict"] == stats.INCONCLUSIVE, claim["reason"]
    assert "upper end exceeds d^4" in claim["reason"] and "stuck replicas" in claim["reason"]


def test_the_stuck_rate_counts_population_successes_failing_every_probe():
    population = np.array([1, 1, 1, 1, 0, 1], dtype=bool)
    probes = [
        {"size": 100, "outcomes": [0, 0, 1, 0, 0, 0]},
        {"size": 400, "outcomes": [1, 0, 1, 0, 0, 1]},
        {"size": 200, "outcomes": [1, 1, 1, 0, 0, 0]},  # replica 1 passes only below the top
    ]
    rec = {"probes": probes, "population": sample_search.outcomes_record(population)}
    rate = sample_search.stuck_rate(rec)
    assert (rate["stuck"], rate["trials"]) == (2, 5)  # replicas 1 and 3; replica 4 collapsed
    assert (rate["low"], rate["high"]) == stats.wilson(2, 5)


def test_refine_makes_n_star_of_the_others_exact_on_the_grid():
    """Five of 64 replicas stuck, 53 succeeding from ``n = 1000``, one from ``2896 = n_23``, five
    from ``32768 = n_30``. All counted, the search needs 58 passes: ``n* = n_30``. Without the
    stuck ones 54 of 59 suffice, first reached at ``n_23``, which the search skipped (its
    doubling probed ``n_21`` and ``n_25``): the refined probes find it (checked against every
    grid point; the search's probes alone would give ``n_25``)."""
    config = xor_samples.config.Config(n_max=2**24)
    need = np.array([math.inf] * 5 + [1000.0] * 53 + [2896.0] + [32768.0] * 5)
    population = np.ones(64, dtype=bool)

    def evaluate(n):
        return need <= n

    rec = sample_search.search_record(evaluate, population, 32, config)
    assert rec["n_star"] == sample_search.grid_n(30)
    point = sample_search.analyse([rec], config)["n"][0]
    k_start, k_limit, _ = sample_search.search_range(32, config)
    grid = [sample_search.grid_n(k) for k in range(k_start, k_limit + 1)]
    kept = np.isfinite(need)
    direct = next(n for n in grid if (need[kept] <= n).mean() >= 0.9 - 1e-12)
    assert point == direct == sample_search.grid_n(23)
    refined = {sample_search.grid_n(22), sample_search.grid_n(23)}
    unrefined = dict(rec, probes=[p for p in rec["probes"] if p["size"] not in refined])
    assert len(unrefined["probes"]) == len(rec["probes"]) - 2
    assert sample_search.analyse([unrefined], config)["n"][0] == sample_search.grid_n(25)


def test_simulated_runs_carry_stuck_replicas_at_the_measured_rate():
    """10 of 100 population successes stuck: simulated runs at 128 seeds show about that share,
    spread wider than a fixed rate's binomial (the rate is redrawn from its Beta posterior
    every run: sd 0.030 from the posterior, 0.029 binomial, 0.042 together)."""
    config = xor_samples.config.Config(d_values=[64], seeds=128, n_max=2**30)
    rng = np.random.default_rng(0)
    shares = []
    for _ in range(200):
        (rec,) = sample_search.simulate(lambda d: 100.0 * d, 0.5, {64: (0.9, 10, 100)}, config, rng)
        rate = sample_search.stuck_rate(rec)
        shares.append(rate["stuck"] / rate["trials"])
    assert np.mean(shares) == pytest.approx(10.5 / 101, abs=0.01)
    assert 0.036 < np.std(shares) < 0.05


# --- calibration (SPEC Part E) -----------------------------------------------------------

RATES = {
    16: (0.84, 0, 108),
    32: (0.84, 0, 108),
    64: (0.86, 1, 110),
    128: (0.91, 2, 116),
    256: (0.93, 0, 119),
}
"""The standard run's population rates per d, stuck replicas and population successes."""


def test_calibration_at_the_standard_sizes():
    """Records from the paper's side (the standard run's growth, about ``17 d^2``, log-spread 1)
    at the standard sizes, 40 simulations per law: power > 0.5 and a false pass <= 0.2 (a true
    rate of 0.05 gives more than 8 of 40 with probability below 1e-3); the rival's stuck share
    is 0.25 (9 values of d, about 110 population successes each: mean within 0.03)."""
    config = xor_samples.EXPERIMENT.config("standard")
    rng = np.random.default_rng(0)
    searches = sample_search.simulate(lambda d: 17.0 * d**2, 1.0, RATES, config, rng)
    recs = sample_search.run_records(searches, "fixed", config.m)
    hyp = xor_samples.calibration.hypotheses(recs, config)
    assert "d^4 (ln d)^2" in hyp.rival_law and "log-spread" in hyp.noise
    assert "Beta(s + 1/2" in hyp.noise
    rates = calibration.calibrate(xor_samples.verdict.verdict, hyp, config, (), 40)
    assert rates["power"] > 0.5 and rates["false_pass"] <= 0.2, rates
    rival = hyp.rival(config, rng)
    assert [r["d"] for r in rival] == config.d_values
    shares = [sample_search.stuck_rate(r["certified"])["rate"] for r in rival]
    assert np.mean(shares) == pytest.approx(xor_samples.calibration.RIVAL_STUCK, abs=0.03)


# --- the search --------------------------------------------------------------------------


def test_grid_and_search_range():
    assert [sample_search.grid_n(k) for k in range(2, 9)] == [2, 3, 4, 6, 8, 11, 16]
    config = xor_samples.config.Config(n_start_per_d=16, n_max=2**20)
    assert sample_search.search_range(64, config) == (20, 40, 40)  # 1024 .. 2^20; d^4 = 2^24
    assert sample_search.search_range(2**20, config) == (40, 40, 40)  # start clamped to the limit
    assert sample_search.search_range(16, config) == (16, 40, 32)  # the guard at d^4 = 2^16
    assert sample_search.search_range(16, config, EDGE) == (16, 40, 38)  # 2^19 >= 503,316
    for d in (16, 32, 64, 4096):  # A7.5a's guard, where n_max allows: first n_k >= d^4 (ln d)^2
        k = sample_search.search_range(d, xor_samples.config.Config(n_max=2**60), EDGE)[2]
        assert sample_search.grid_n(k - 1) < xor_samples.search.edge(d) <= sample_search.grid_n(k)
    assert sample_search.grid_n(41) > 2**20 >= sample_search.grid_n(40)


@pytest.mark.parametrize("threshold", [1000, 1024, 1449, 5000, 30000, 2**20])
def test_search_finds_the_smallest_passing_grid_point(threshold):
    """One replica that succeeds from ``threshold`` on: ``n*`` is the first grid point at or
    above it, every probe is on the grid, and a guard probe follows an ``n*`` at the top."""
    n_star, probes = sample_search.search_samples(lambda n: [n >= threshold], 0.5, 19, 40)
    grid = [sample_search.grid_n(k) for k in range(19, 41)]
    assert n_star == min(n for n in grid if n >= threshold)
    sizes = [p.size for p in probes]
    assert set(sizes) <= set(grid) and sizes == sorted(sizes)
    assert all(p.outcomes == (p.size >= threshold,) for p in probes)
    assert probes[-1].outcomes == (True,)  # the replica passes the largest probe: no guard


def test_guard_probes_climb_two_octaves_to_the_guard():
    """Two replicas, one never succeeds: after the search (``n* = 1024``, an octave-above guard
    at ``2048 = n_22``) guard probes climb four grid steps at a time, ``n_26, n_30``, and end at
    the guard ``n_32``, not past it; where every replica passes, no guard probe."""
    n_star, probes = sample_search.search_samples(lambda n: [n >= 1000, False], 0.5, 19, 32)
    assert n_star == 1024
    assert [p.size for p in probes if p.size > 1024] == [
        sample_search.grid_n(k) for k in (22, 26, 30, 32)
    ]
    _, probes = sample_search.search_samples(lambda n: [n >= 1000, n >= 3000], 0.5, 19, 32)
    assert probes[-1].size == sample_search.grid_n(26) and all(probes[-1].outcomes)


def test_search_beyond_the_limit_returns_none():
    n_star, probes = sample_search.search_samples(lambda n: [False], 0.5, 10, 20)
    assert n_star is None and probes[-1].size == sample_search.grid_n(20)


def test_exponent_bounds_with_unreached_draws():
    ds = [16.0, 64.0, 256.0]
    exact = np.array([[100.0, 400.0, 1600.0]] * 100)  # alpha = 1
    low, high = sample_search.exponent_bounds(ds, exact, [1e6] * 3)
    assert low == pytest.approx(1) and high == pytest.approx(1)
    # unreached above the mean ln d in 10% of draws: the upper bound is open, the lower bound
    # uses the largest probe (a slope that can only be larger)
    above = exact.copy()
    above[:10, 2] = np.inf
    low, high = sample_search.exponent_bounds(ds, above, [1e6] * 3)
    assert math.isinf(high) and high > 0 and low == pytest.approx(1)
    # unreached below it: the lower bound is open downwards
    below = exact.copy()
    below[:10, 0] = np.inf
    low, high = sample_search.exponent_bounds(ds, below, [1e6] * 3)
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
