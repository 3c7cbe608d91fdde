"""The statistics module (SPEC Part D): point summaries, Wilson intervals, the bootstrap over
replicas, thresholds over stored probes, growth-law fits and the two-law comparison.

Tolerances come from the statistics: a Monte Carlo proportion is allowed 4 of its binomial
standard errors, a bootstrap standard deviation 4 of its own standard errors."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from attnsep.metrics import stats
from attnsep.metrics.laws import LINEAR_LOG, POLYLOG, POWER, FixedPower, exponent_draws, parameters
from attnsep.metrics.two_laws import compare_laws, held_out
from attnsep.train.search import probe_matrix, smallest_passing

D = 2.0 ** np.arange(6, 21)  # d = 2^6 ... 2^20, the sizes of SPEC A7.2


# --- point summaries -----------------------------------------------------------------------


def test_median_odd_and_even_counts():
    assert stats.median([3, 1, 2]) == 2.0
    assert stats.median([4, 1, 3, 2]) == 2.5  # the mean of the two middle values
    assert stats.median([7]) == 7.0
    assert stats.median(iter([5.0, -1.0])) == 2.0


def test_median_matches_numpy():
    rng = np.random.default_rng(1)
    for n in (1, 2, 9, 10, 101):
        x = rng.normal(size=n)
        assert stats.median(x) == pytest.approx(float(np.median(x)), abs=1e-12)


def test_mean_se_by_hand_and_numpy():
    mean, se = stats.mean_se([1.0, 2.0, 3.0, 6.0])
    # mean 3; squared deviations 4 + 1 + 0 + 9 = 14; s^2 = 14 / 3; se = sqrt(14 / 12)
    assert mean == pytest.approx(3.0)
    assert se == pytest.approx(math.sqrt(14 / 12))
    x = np.random.default_rng(2).normal(1.5, 2.0, size=37)
    mean, se = stats.mean_se(x)
    assert mean == pytest.approx(float(x.mean()), rel=1e-12)
    assert se == pytest.approx(float(x.std(ddof=1) / math.sqrt(len(x))), rel=1e-12)


def test_mean_se_of_one_value_and_empty_input():
    assert stats.mean_se([4.0]) == (4.0, 0.0)
    with pytest.raises(ValueError):
        stats.mean_se([])
    with pytest.raises(ValueError):
        stats.median([])


# --- Wilson intervals ----------------------------------------------------------------------


@pytest.mark.parametrize("successes,trials", [(1, 3), (5, 10), (58, 64), (300, 1000)])
def test_wilson_contains_the_rate(successes, trials):
    low, high = stats.wilson(successes, trials)
    assert 0.0 <= low < successes / trials < high <= 1.0


def test_wilson_shrinks_with_n():
    widths = [np.subtract(*stats.wilson(n // 2, n)[::-1]) for n in (8, 32, 128, 512)]
    assert all(a > b for a, b in zip(widths, widths[1:], strict=False))
    # for large n the half width approaches z sqrt(p (1 - p) / n)
    low, high = stats.wilson(5000, 10000)
    z = stats.normal_quantile()
    assert (high - low) / 2 == pytest.approx(z * math.sqrt(0.25 / 10000), rel=1e-3)


def test_the_normal_quantile_is_derived_from_the_level():
    # tabulated two-sided standard normal quantiles
    assert stats.normal_quantile(0.95) == pytest.approx(1.959963984540054, abs=1e-12)
    assert stats.normal_quantile(0.99) == pytest.approx(2.5758293035489004, abs=1e-12)
    assert stats.normal_quantile(0.90) == pytest.approx(1.6448536269514722, abs=1e-12)


@pytest.mark.parametrize("successes,trials,level", [(3, 17, 0.95), (58, 64, 0.95), (7, 9, 0.8)])
def test_wilson_ends_are_where_the_score_test_stops_rejecting(successes, trials, level):
    """Independently of its closed form: the Wilson interval holds the p whose score statistic
    ``|phat - p| / sqrt(p (1 - p) / n)`` is at most ``z``; each end found by bisection."""
    z, phat = stats.normal_quantile(level), successes / trials

    def inside(p: float) -> bool:
        return abs(phat - p) <= z * math.sqrt(p * (1 - p) / trials)

    def edge(a: float, b: float) -> float:  # inside(a) != inside(b)
        for _ in range(200):
            mid = (a + b) / 2
            a, b = (mid, b) if inside(mid) == inside(a) else (a, mid)
        return (a + b) / 2

    low, high = stats.wilson(successes, trials, level)
    assert low == pytest.approx(edge(1e-15, phat), abs=1e-12)
    assert high == pytest.approx(edge(phat, 1 - 1e-15), abs=1e-12)


def test_wilson_edge_cases():
    low, high = stats.wilson(0, 10)
    assert low == 0.0 and 0.2 < high < 0.35  # exactly: an estimate's value 0 lies inside
    low, high = stats.wilson(10, 10)
    assert 0.65 < low < 0.8 and high == 1.0
    # zero successes in n trials: high = z^2 / (n + z^2)
    z = stats.normal_quantile()
    assert stats.wilson(0, 10)[1] == pytest.approx(z**2 / (10 + z**2))
    for bad in ((-1, 10), (11, 10), (0, 0)):
        with pytest.raises(ValueError):
            stats.wilson(*bad)


def test_wilson_coverage_by_simulation():
    n, p, draws = 64, 0.9, 2000

    def covers(k: int) -> bool:
        low, high = stats.wilson(k, n)
        return low <= p <= high

    exact = sum(math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1) if covers(k))
    ks = np.random.default_rng(3).binomial(n, p, size=draws)
    simulated = np.mean([covers(int(k)) for k in ks])
    se = math.sqrt(0.95 * 0.05 / draws)
    assert abs(simulated - exact) < 4 * se, (simulated, exact)
    assert simulated > 0.95 - 4 * se, simulated  # no under-coverage
    # Wilson's coverage stays near nominal; at n = 64, p = 0.9 it is 0.967 (conservative),
    # 3.5 standard errors of 2000 draws above 0.95, so the simulation is judged against `exact`
    assert abs(exact - 0.95) < 0.02, exact


# --- estimates and their text --------------------------------------------------------------


def test_estimate_is_json_safe():
    e = stats.estimate("m*", np.float64(12.0), 8, math.inf)
    assert e == {"name": "m*", "value": 12.0, "low": 8.0, "high": None}
    assert type(e["value"]) is float and type(e["low"]) is float
    assert stats.estimate("x", math.nan, -math.inf, None) == {
        "name": "x",
        "value": None,
        "low": None,
        "high": None,
    }
    json.dumps(e, allow_nan=False)


def test_rate_estimate_uses_wilson():
    e = stats.rate_estimate("success", 58, 64)
    low, high = stats.wilson(58, 64)
    assert e == {"name": "success", "value": 58 / 64, "low": low, "high": high}
    json.dumps(stats.rate_estimate("none", 0, 64), allow_nan=False)


def test_fmt_interval():
    assert stats.fmt_interval(0.123456, 0.1, 0.15) == "0.123 [0.1, 0.15]"
    assert stats.fmt_interval(1234.5, 1000, math.inf) == "1.23e+03 [1e+03, inf]"
    assert stats.fmt_interval(None, None, 2.0, digits=2) == "n/a [n/a, 2]"
    assert stats.fmt_interval(2.0 / 3, 0.5, 0.75, digits=5) == "0.66667 [0.5, 0.75]"


def test_fmt_estimate_reads_a_missing_high_as_inf():
    assert stats.fmt_estimate(stats.estimate("m*", 16, 8, math.inf)) == "m* = 16 [8, inf]"
    assert stats.fmt_estimate(stats.estimate("rate", 0.9, 0.8, 0.95)) == "rate = 0.9 [0.8, 0.95]"
    assert stats.fmt_estimate(stats.estimate("x", None, None, None)) == "x = n/a [n/a, n/a]"


# --- the bootstrap -------------------------------------------------------------------------


def mean_of_first(draw: list[np.ndarray]) -> float:
    return float(draw[0].mean())


def test_bootstrap_is_reproducible_for_a_seed():
    x = np.random.default_rng(4).normal(size=30)
    a = stats.bootstrap([x], mean_of_first, resamples=200, seed=7)
    b = stats.bootstrap([x], mean_of_first, resamples=200, seed=7)
    c = stats.bootstrap([x], mean_of_first, resamples=200, seed=8)
    assert a.shape == (200,)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_bootstrap_se_of_a_mean():
    n, resamples = 50, 2000
    x = np.random.default_rng(5).normal(0.0, 3.0, size=n)
    values = stats.bootstrap([x], mean_of_first, resamples=resamples, seed=0)
    expected = x.std(ddof=0) / math.sqrt(n)  # the exact bootstrap s.e. of a mean
    # the s.d. of `resamples` near-normal draws has relative s.e. 1 / sqrt(2 resamples)
    assert values.std(ddof=1) == pytest.approx(expected, rel=4 / math.sqrt(2 * resamples))
    assert values.mean() == pytest.approx(x.mean(), abs=4 * expected / math.sqrt(resamples))
    assert values.std(ddof=1) == pytest.approx(x.std(ddof=1) / math.sqrt(n), rel=0.1)


def test_bootstrap_resamples_each_array_independently_and_keeps_rows():
    x = np.arange(40.0)
    rows = np.column_stack([np.arange(25.0), np.arange(25.0)])

    def stat(draw: list[np.ndarray]) -> float:
        assert draw[0].shape == (40,) and draw[2].shape == (25, 2)
        assert np.array_equal(draw[2][:, 0], draw[2][:, 1]), "rows must be resampled whole"
        return float(draw[0].mean() - draw[1].mean())

    diffs = stats.bootstrap([x, x.copy(), rows], stat, resamples=500, seed=1)
    # shared indices would give 0 always; independent ones give s.d. sqrt(2) s / sqrt(n)
    expected = math.sqrt(2) * x.std() / math.sqrt(len(x))
    assert diffs.std(ddof=1) == pytest.approx(expected, rel=4 / math.sqrt(2 * 500))


# --- percentile intervals ------------------------------------------------------------------


def test_interval_level_095_quantiles():
    values = np.random.default_rng(6).permutation(1000).astype(float)
    low, high = stats.interval(values)
    assert low in (24.0, 25.0) and high in (974.0, 975.0)
    assert np.mean((values >= low) & (values <= high)) >= 0.95
    low, high = stats.interval(values, level=0.5)
    assert 248 <= low <= 250 and 749 <= high <= 751


def test_interval_reads_nan_as_plus_inf():
    values = np.arange(1000.0)
    values[-30:] = np.nan  # 3% never reached: beyond the upper 2.5%
    low, high = stats.interval(values)
    assert math.isfinite(low) and high == math.inf
    values = np.arange(1000.0)
    values[-20:] = np.nan  # 2%: the upper bound is still a reached value
    assert math.isfinite(stats.interval(values)[1])
    assert stats.interval(np.full(10, np.nan)) == (math.inf, math.inf)
    assert stats.interval(np.array([1.0, np.inf, np.inf, np.inf])) == (1.0, math.inf)


# --- thresholds over stored probes ---------------------------------------------------------


def outcomes_with_rates(rates: list[float], replicas: int, seed: int = 0) -> np.ndarray:
    """``replicas x probes`` bool with exactly ``rate x replicas`` successes per probe."""
    rng = np.random.default_rng(seed)
    cols = [rng.permutation(np.arange(replicas) < round(r * replicas)) for r in rates]
    return np.column_stack(cols)


def test_first_passing():
    sizes = [32, 4, 16, 8]  # order of probing need not be sorted
    rates = np.array([0.95, 0.1, 0.9, 0.5])
    assert stats.first_passing(sizes, rates, 0.9) == 16.0
    assert stats.first_passing(sizes, rates, 0.95) == 32.0
    assert stats.first_passing(sizes, rates, 0.05) == 4.0
    assert stats.first_passing(sizes, rates, 0.99) == math.inf
    assert stats.first_passing([8], np.array([0.7]), 0.1 * 7) == 8.0  # 0.7 vs 0.7000000000000001


def test_threshold_equals_the_search_result():
    rng = np.random.default_rng(9)
    need = rng.integers(5, 200, size=64)  # replica r succeeds once size >= need[r]

    def evaluate(size: int) -> list[bool]:
        return list(size >= need)

    found, probes = smallest_passing(evaluate, 0.9, start=4, limit=512)
    sizes, outcomes = probe_matrix([p.as_record() for p in probes])
    point, draws = stats.threshold_draws(sizes, outcomes, 0.9, resamples=300, seed=2)
    assert found is not None and point == found
    assert set(np.unique(draws)) <= set(map(float, sizes)) | {math.inf}
    low, high = stats.interval(draws)
    assert low <= point <= high


def test_threshold_with_a_reference_scales_the_target():
    sizes = [4, 8, 16, 32]
    outcomes = outcomes_with_rates([0.2, 0.5, 0.7, 0.9], replicas=100)
    assert stats.threshold_draws(sizes, outcomes, 0.9, resamples=10)[0] == 32
    reference = outcomes_with_rates([0.6], replicas=100, seed=1)[:, 0]  # goal 0.9 x 0.6 = 0.54
    assert stats.threshold_draws(sizes, outcomes, 0.9, reference, resamples=10)[0] == 16
    reference = outcomes_with_rates([0.5], replicas=100, seed=1)[:, 0]  # goal 0.45
    assert stats.threshold_draws(sizes, outcomes, 0.9, reference, resamples=10)[0] == 8


def test_threshold_draws_resample_outcomes_and_reference_on_the_same_replicas():
    sizes = [4, 8, 16, 32]
    outcomes = outcomes_with_rates([0.2, 0.5, 0.7, 0.9], replicas=40, seed=3)
    reference = outcomes_with_rates([0.6], replicas=40, seed=4)[:, 0]
    _, draws = stats.threshold_draws(sizes, outcomes, 0.9, reference, resamples=200, seed=5)
    rng = np.random.default_rng(5)  # the bootstrap's own draws, one index vector per resample
    by_hand = []
    for _ in range(200):
        idx = rng.integers(0, 40, 40)
        goal = 0.9 * reference[idx].mean()
        by_hand.append(stats.first_passing(sizes, outcomes[idx].mean(axis=0), goal))
    np.testing.assert_array_equal(draws, by_hand)
    assert set(np.unique(draws)) <= {4.0, 8.0, 16.0, 32.0, math.inf}
    assert len(np.unique(draws)) > 1


def test_always_failing_matrix_gives_inf():
    outcomes = np.zeros((32, 3), dtype=bool)
    point, draws = stats.threshold_draws([8, 16, 32], outcomes, 0.9, resamples=50)
    assert point == math.inf and np.all(draws == math.inf)
    assert stats.interval(draws) == (math.inf, math.inf)
    assert stats.estimate("m*", point, *stats.interval(draws))["value"] is None


# --- growth laws ---------------------------------------------------------------------------


def test_power_law_exact_recovery():
    x = np.array([10.0, 20, 50, 100, 1000])
    a, b = POWER.fit(x, 3.0 * x**0.7)
    assert math.exp(a) == pytest.approx(3.0) and b == pytest.approx(0.7)
    np.testing.assert_allclose(POWER.predict((a, b), [5e4]), [3.0 * 5e4**0.7], rtol=1e-9)


def test_polylog_exact_recovery():
    a, p = POLYLOG.fit(D, 1.5 * np.log(D) ** 2.5)
    assert math.exp(a) == pytest.approx(1.5) and p == pytest.approx(2.5)
    big = np.array([2.0**30])
    np.testing.assert_allclose(POLYLOG.predict((a, p), big), 1.5 * np.log(big) ** 2.5)


def test_linear_log_exact_recovery():
    x = np.array([8.0, 16, 64, 256, 1024])
    a, b = LINEAR_LOG.fit(x, 2.0 + 3.0 * np.log(x))
    assert a == pytest.approx(2.0) and b == pytest.approx(3.0)
    assert LINEAR_LOG.predict((a, b), [math.e**4])[0] == pytest.approx(14.0)


def test_min_exponent_holds_the_exponent_at_the_best_constrained_fit():
    x = 2.0 ** np.arange(4, 12)
    y = 2.0 * x**0.1
    assert POWER.fit(x, y, min_exponent=0.05)[1] == pytest.approx(0.1)  # not binding
    a, b = POWER.fit(x, y, min_exponent=0.25)
    assert b == 0.25

    def sse(a: float, b: float) -> float:
        return float(np.sum((np.log(y) - a - b * np.log(x)) ** 2))

    best = sse(a, b)
    for other_b in np.linspace(0.25, 1.0, 16):
        for other_a in np.linspace(a - 1, a + 1, 41):
            assert sse(other_a, other_b) >= best - 1e-12


def test_fit_needs_two_points_and_gives_nan_on_inf():
    with pytest.raises(ValueError):
        POWER.fit([10.0], [1.0])
    params = POWER.fit([10.0, 20, 40], [1.0, math.inf, 3.0])
    assert all(math.isnan(v) for v in params)


def test_exponent_draws():
    x = [64.0, 128, 256, 512]
    rows = np.array([[2 * v**0.5 for v in x], [v**1.0 for v in x], [1.0, 2.0, math.inf, 4.0]])
    b = exponent_draws(POWER, x, rows)
    assert b[:2] == pytest.approx([0.5, 1.0]) and math.isnan(b[2])
    assert stats.interval(b, level=0.5)[1] == math.inf


# --- the two-law comparison ----------------------------------------------------------------


def tight(y: np.ndarray, rel: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    return y * (1 - rel), y * (1 + rel)


def test_held_out_fits_the_smaller_half():
    y = np.log(D) ** 2
    result = held_out(POLYLOG, D, y, *tight(y))
    assert result["fitted_on"] == D[:7].tolist() and result["predicted_at"] == D[7:].tolist()
    np.testing.assert_allclose(result["predicted"], y[7:], rtol=1e-9)
    assert result["inside"] is True and result["min_exponent"] is None
    json.dumps(result, allow_nan=False)
    order = np.random.default_rng(0).permutation(len(D))  # input order does not matter
    shuffled = held_out(POLYLOG, D[order], y[order], *(b[order] for b in tight(y)))
    assert shuffled == result


def test_polylog_data_decide_for_the_paper():
    y = np.log(D) ** 2
    result = compare_laws(POLYLOG, POWER, D, y, *tight(y), 0.25)
    assert result["decided"] == "paper"
    assert result["rival"]["min_exponent"] == 0.25 and result["rival"]["params"][1] >= 0.25
    json.dumps(result, allow_nan=False)


def test_power_data_decide_for_the_rival():
    y = D**0.5
    result = compare_laws(POLYLOG, POWER, D, y, *tight(y), 0.25)
    assert result["decided"] == "rival"
    assert result["rival"]["params"][1] == pytest.approx(0.5)


def test_wide_intervals_fit_both():
    y = np.log(D) ** 2
    result = compare_laws(POLYLOG, POWER, D, y, y / 10, y * 10, 0.25)
    assert result["decided"] == "both"


def test_neither_law_predicts_a_jump():
    y = np.log(D) ** 2
    y[7:] *= 100  # the larger half jumps far above both extrapolations
    result = compare_laws(POLYLOG, POWER, D, y, *tight(y), 0.25)
    assert result["decided"] == "neither"


def test_fewer_than_three_sizes_raise():
    x, y = D[:2], np.log(D[:2]) ** 2
    with pytest.raises(ValueError):
        held_out(POLYLOG, x, y, *tight(y))
    with pytest.raises(ValueError):
        compare_laws(POLYLOG, POWER, x, y, *tight(y), 0.25)
    x, y = D[:3], np.log(D[:3]) ** 2  # three sizes: fit on two, predict one
    assert compare_laws(POLYLOG, POWER, x, y, *tight(y))["decided"] in (
        "paper",
        "both",
    )


def test_an_unreached_large_size_is_never_inside():
    y = np.log(D) ** 2
    low, high = tight(y)
    y[-1], low[-1], high[-1] = math.inf, 1e9, math.inf  # never reached within the limit
    assert compare_laws(POLYLOG, POWER, D, y, low, high)["decided"] == "neither"


def test_compare_laws_is_json_safe_when_a_small_size_is_unreached():
    """A claim's extras are written with ``json.dumps(allow_nan=False)`` (report/html.py)."""
    y = np.log(D) ** 2
    y[0] = math.inf  # m* beyond the search limit at the smallest d (plausible in `quick`)
    result = compare_laws(POLYLOG, POWER, D, y, *tight(y), 0.25)
    assert result["decided"] == "neither"
    json.dumps(result, allow_nan=False)  # nan is stored as None


# --- claims --------------------------------------------------------------------------------


def test_claim_rejects_an_unknown_verdict():
    with pytest.raises(ValueError):
        stats.claim("maybe", "why", "measured", "criterion", [])


def test_claim_carries_estimates_and_extras():
    estimates = [stats.rate_estimate("success", 60, 64), stats.estimate("m*", 32, 16, math.inf)]
    y = np.log(D) ** 2
    laws = compare_laws(POLYLOG, POWER, D, y, *tight(y), 0.25)
    for verdict in stats.OUTCOMES:
        c = stats.claim(verdict, "one sentence.", "m* = 32", "the rule", estimates, laws=laws)
        assert c["verdict"] == verdict and c["estimates"] == estimates and c["laws"] is laws
        assert (c["reason"], c["measured"], c["criterion"]) == (
            "one sentence.",
            "m* = 32",
            "the rule",
        )
        json.dumps(c, allow_nan=False)


@pytest.mark.parametrize("resamples", [None, 200])
def test_vectorized_bootstrap_and_fits_match_their_loops(resamples):
    """``threshold_draws`` (all resamples at once) is the search re-run on each ``bootstrap``
    draw; ``exponent_draws`` of a two-parameter law is ``fit`` row by row."""
    rng = np.random.default_rng(3)
    with stats.resampling(resamples or stats.RESAMPLES):
        for trial in range(20):
            n, k = int(rng.integers(1, 70)), int(rng.integers(1, 12))
            outcomes = rng.random((n, k)) < rng.random(k)
            reference = rng.random(n) < 0.9 if trial % 2 else None
            sizes = rng.permutation(np.arange(1, 40))[:k].tolist()
            point, draws = stats.threshold_draws(sizes, outcomes, 0.9, reference, seed=trial)
            joined = np.column_stack([outcomes, np.ones(n) if reference is None else reference])

            def search(draw, sizes=sizes):
                rows = draw[0]
                goal = 0.9 * rows[:, -1].mean()
                return stats.first_passing(sizes, rows[:, :-1].mean(axis=0), goal)

            loop = stats.bootstrap([joined.astype(float)], search, seed=trial)
            assert point == search([joined.astype(float)]) and np.array_equal(draws, loop)
    xs = [64.0, 128.0, 256.0, 512.0, 1024.0]
    rows = np.round(rng.uniform(10, 30, (300, 5)))
    rows[::40, 4] = np.inf
    for law in (POWER, POLYLOG, LINEAR_LOG):
        loop = [law.fit(xs, r)[1] if np.isfinite(r).all() else math.nan for r in rows]
        np.testing.assert_allclose(
            exponent_draws(law, xs, rows), loop, rtol=1e-9, atol=1e-12, equal_nan=True
        )


def test_fixed_power_fits_one_constant_and_refits_as_it_predicts():
    law = FixedPower(2.0)
    xs = [16.0, 32.0, 64.0]
    params = law.fit(xs, [3 * x**2 for x in xs])
    assert params == (pytest.approx(math.log(3)), 2.0) and law.exponent(params) == 2.0
    assert law.predict(params, [128.0])[0] == pytest.approx(3 * 128**2)
    rows = np.array([[5 * x**2 for x in xs], [7 * x**2 for x in xs]])
    at = np.array([128.0, 256.0])
    refits = law.refit_predict(np.array(xs), rows, at, None)
    expected = [law.predict(law.fit(xs, row), at) for row in rows]
    np.testing.assert_allclose(refits, expected)
    assert parameters(law) == 1 and law.formula == "c·x^2"
    # held out: c d predicts linear data, c d^2 does not
    ds = [16.0, 32.0, 64.0, 128.0, 256.0, 512.0]
    ns = [40 * d for d in ds]
    both = compare_laws(FixedPower(1.0), law, ds, ns, ns, ns, grid="half-octave")
    assert both["decided"] == "paper"


def test_holding_widens_an_interval_to_its_finite_value_only():
    assert stats.holding(5.0, 1.0, 4.0) == (5.0, 1.0, 5.0)
    assert stats.holding(0.5, 1.0, 4.0) == (0.5, 0.5, 4.0)
    assert stats.holding(math.inf, 1.0, 4.0) == (math.inf, 1.0, 4.0)


def test_rate_difference_is_newcombes_hybrid_score_interval():
    a, b = (0.8, *stats.wilson(16, 20)), (0.5, *stats.wilson(10, 20))
    diff, low, high = stats.rate_difference(a, b)
    assert diff == pytest.approx(0.3) and low < diff < high
    assert low == pytest.approx(0.3 - math.hypot(a[0] - a[1], b[2] - b[0]))
