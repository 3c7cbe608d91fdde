"""SPEC Part E: the error rates of a criterion, the affine polylog law and the grid widening."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnsep.metrics import calibration, stats
from attnsep.metrics.laws import AFFINE_POLYLOG, LINEAR_LOG, POLYLOG, POWER
from attnsep.metrics.two_laws import compare_laws, widen
from attnsep.train.search import smallest_passing

# --- error rates against a case computed by hand -------------------------------------------


def binomial_tail(n: int, p: float, k: int) -> float:
    """``P(Bin(n, p) >= k)``."""
    return sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1))


def test_error_rates_recover_a_power_computed_by_hand():
    """A criterion 'reproduced when >= 27 of 30 replicas succeed, not reproduced when <= 20'
    on binomial records: its power, false pass and false fail are binomial tails."""
    n, passing, failing = 30, 27, 20

    def decide(records):
        wins = sum(r["success"] for r in records)
        if wins >= passing:
            return stats.REPRODUCED
        return stats.NOT_REPRODUCED if wins <= failing else stats.INCONCLUSIVE

    def draw(rate):
        return lambda rng: [{"success": bool(s)} for s in rng.random(n) < rate]

    sims = 400
    rates = calibration.error_rates(decide, draw(0.95), draw(0.7), sims, seed=3)
    expected = {
        "power": binomial_tail(n, 0.95, passing),
        "false_pass": binomial_tail(n, 0.7, passing),
        "false_fail": 1 - binomial_tail(n, 0.95, failing + 1),
    }
    for name, p in expected.items():
        se = math.sqrt(p * (1 - p) / sims)
        assert abs(rates[name] - p) <= 4 * se + 1 / sims, (name, rates[name], p)
        low, high = rates["intervals"][name]
        assert low <= rates[name] <= high
    assert rates["simulations"] == sims
    assert rates["meets"] == calibration.meets(rates["power"], rates["false_pass"])


def test_error_rates_are_reproducible_and_seeded():
    def decide(records):
        return stats.REPRODUCED if records[0] > 0.5 else stats.NOT_REPRODUCED

    def draw(rng):
        return [rng.random()]

    a = calibration.error_rates(decide, draw, draw, 50, seed=1)
    assert a == calibration.error_rates(decide, draw, draw, 50, seed=1)
    assert a != calibration.error_rates(decide, draw, draw, 50, seed=2)


# --- a criterion that cannot pass, and its repair --------------------------------------------


def integer_thresholds(rng, sizes, law, replicas=16, target=0.9, spread=0.02):
    """Searched thresholds of replicas whose latent thresholds follow ``law`` (tiny noise, so
    the bootstrap interval of each threshold is usually zero-width)."""
    records = []
    for x in sizes:
        latent = calibration.replica_thresholds(law(x), spread, replicas, target, rng)
        star, probes = smallest_passing(lambda m, t=latent: t <= m, target, 2, 4096)
        records.append({"x": x, "probes": probes})
    return records


def decide_with(grid):
    def decide(records):
        xs, m, lo, hi, rows = [], [], [], [], []
        for r in records:
            sizes = [p.size for p in r["probes"]]
            outcomes = np.array([p.outcomes for p in r["probes"]]).T
            point, draws = stats.threshold_draws(sizes, outcomes, 0.9, seed=1)
            low, high = stats.interval(draws)
            xs.append(r["x"])
            m.append(point)
            lo.append(low)
            hi.append(high)
            rows.append(draws)
        matrix = np.column_stack(rows) if grid != "continuous" else None
        cmp = compare_laws(AFFINE_POLYLOG, POWER, xs, m, lo, hi, 0.3, grid, matrix)
        return stats.REPRODUCED if cmp["decided"] == "paper" else stats.INCONCLUSIVE

    return decide


SIZES = [2.0**k for k in range(5, 17)]


def paper(rng):
    return integer_thresholds(rng, SIZES, lambda x: 3 + 2 * math.log(x) ** 1.5)


def rival(rng):
    return integer_thresholds(rng, SIZES, lambda x: 2.5 * x**0.3)


def test_an_integer_threshold_against_a_zero_width_interval_cannot_pass():
    """SPEC Part E, cause (1): without the grid's resolution the paper's own law, rounded up to
    the integer knob, misses zero-width intervals; widened by ± 1 it predicts them."""
    strict = calibration.error_rates(decide_with("continuous"), paper, rival, 40, seed=0)
    fair = calibration.error_rates(decide_with("integer"), paper, rival, 40, seed=0)
    assert strict["power"] <= 0.2
    assert fair["power"] >= 0.8
    assert fair["false_pass"] <= 0.1


# --- the laws as the papers state them -------------------------------------------------------


def test_affine_polylog_recovers_its_parameters():
    x = 2.0 ** np.arange(5, 17)
    a, b, p = AFFINE_POLYLOG.fit(x, 7.0 + 0.5 * np.log(x) ** 2.0)
    assert p == pytest.approx(2.0) and a == pytest.approx(7.0) and b == pytest.approx(0.5)
    assert AFFINE_POLYLOG.exponent((a, b, p)) == p
    big = [2.0**20]
    assert AFFINE_POLYLOG.predict((a, b, p), big)[0] == pytest.approx(
        7 + 0.5 * 20**2 * 0.4804530139182014
    )


def test_affine_polylog_needs_three_points_and_gives_nan_on_inf():
    with pytest.raises(ValueError):
        AFFINE_POLYLOG.fit([8.0, 16.0], [1.0, 2.0])
    assert all(math.isnan(v) for v in AFFINE_POLYLOG.fit([8.0, 16, 32], [1, math.inf, 3]))


def test_widen_by_the_grid():
    lo, hi = widen([20.0], [20.0], "integer")
    assert (lo[0], hi[0]) == (19.0, 21.0)
    lo, hi = widen([64.0], [128.0], "half-octave")
    assert lo[0] == pytest.approx(64 / math.sqrt(2)) and hi[0] == pytest.approx(128 * math.sqrt(2))
    assert widen([1.0], [2.0], "continuous")[0][0] == 1.0
    with pytest.raises(ValueError, match="grid must be one of"):
        widen([1.0], [2.0], "octave")


def test_compare_laws_fits_both_laws_on_the_same_sizes():
    x = 2.0 ** np.arange(5, 10)  # five sizes: the affine polylog needs three
    y = 3 + np.log(x) ** 1.5
    cmp = compare_laws(AFFINE_POLYLOG, POWER, x, y, y - 0.1, y + 0.1)
    assert cmp["paper"]["fitted_on"] == cmp["rival"]["fitted_on"] == x[:3].tolist()
    assert cmp["decided"] == "paper"


def test_resampling_sets_the_default_count_within_a_block():
    x = np.arange(10.0)
    with stats.resampling(37):
        assert len(stats.bootstrap([x], lambda d: float(d[0].mean()))) == 37
        assert len(stats.threshold_draws([1, 2], np.ones((5, 2), bool), 0.9)[1]) == 37
    assert len(stats.bootstrap([x], lambda d: float(d[0].mean()))) == stats.RESAMPLES


# --- simulation helpers ----------------------------------------------------------------------


def test_replica_thresholds_put_the_target_quantile_at_the_value():
    rng = np.random.default_rng(0)
    t = calibration.replica_thresholds(50.0, 0.3, 20000, 0.9, rng)
    share = np.mean(t <= 50.0)
    assert abs(share - 0.9) <= 4 * math.sqrt(0.09 / 20000)
    assert np.std(np.log(t)) == pytest.approx(0.3, rel=0.03)


def test_log_spread_reads_the_replica_noise_from_probes():
    rng = np.random.default_rng(1)
    latent = calibration.replica_thresholds(200.0, 0.25, 400, 0.9, rng)
    sizes = np.unique(np.round(np.geomspace(20, 2000, 200)))
    outcomes = latent[:, None] <= sizes[None, :]
    assert calibration.log_spread([(sizes, outcomes)]) == pytest.approx(0.25, rel=0.15)
    assert calibration.log_spread([]) == 0.01


def test_summary_names_what_would_meet_the_goals():
    cal = {
        "power": 0.4,
        "false_pass": 0.1,
        "false_fail": 0.0,
        "simulations": 200,
        "meets": False,
        "would_meet": "seeds = 32",
        "tried": [{"config": "seeds = 32", "power": 0.9, "false_pass": 0.02}],
    }
    text = calibration.summary(cal)
    assert "power 0.40" in text and "seeds = 32" in text and "below the goals" in text
    assert calibration.summary(None) == ""


@pytest.mark.parametrize("law", [POWER, POLYLOG, LINEAR_LOG, AFFINE_POLYLOG])
def test_refit_predict_is_fit_then_predict_row_by_row(law):
    rng = np.random.default_rng(4)
    x = 2.0 ** np.arange(5, 11)
    rows = 5 + np.log(x)[None, :] ** 1.7 * rng.uniform(1, 3, (7, 1)) + rng.random((7, 6))
    at = np.array([2.0**12, 2.0**14])
    expected = np.array([law.predict(law.fit(x, r, 0.3), at) for r in rows])
    np.testing.assert_allclose(law.refit_predict(x, rows, at, 0.3), expected, rtol=1e-9)


def test_verdicts_know_when_they_judge_a_simulated_run():
    seen = []

    def decide(records):
        seen.append((calibration.in_simulation(), stats.resample_count()))
        return stats.INCONCLUSIVE

    calibration.error_rates(decide, lambda rng: [], lambda rng: [], 3)
    assert seen == [(True, calibration.CALIBRATION_RESAMPLES)] * 6
    assert not calibration.in_simulation() and stats.resample_count() == stats.RESAMPLES


def test_a_checks_confirmed_counts_as_a_pass_and_its_failure_as_a_fail():
    """A check's error rates (SPEC Part F): ``confirmed`` is its pass, ``check failed`` its fail."""
    import numpy as np

    from attnsep.metrics import calibration, stats

    rates = calibration.error_rates(
        lambda records: stats.CONFIRMED if records[0]["ok"] else stats.CHECK_FAILED,
        lambda rng: [{"ok": True}],
        lambda rng: [{"ok": False}],
        simulations=20,
    )
    assert rates["power"] == 1.0 and rates["false_pass"] == 0.0 and rates["false_fail"] == 0.0
    rates = calibration.error_rates(
        lambda records: stats.CHECK_FAILED, lambda rng: [{}], lambda rng: [{}], simulations=10
    )
    assert rates["false_fail"] == 1.0 and np.isclose(rates["power"], 0.0)


def test_parameter_spread_recovers_the_spread_between_redraws():
    """Blocks of 5 runs sharing a rate drawn from Beta(8, 2) (mean 0.8, 95% range about
    [0.52, 0.97]): the range found from 2000 blocks lies near it; with one shared rate there is
    no spread beyond the binomial noise."""
    rng = np.random.default_rng(5)
    rates = rng.beta(8, 2, 2000)
    outcomes = [bool(x) for p in rates for x in rng.random(5) < p]
    low, high = calibration.parameter_spread(outcomes, 5)
    true_low, true_high = np.quantile(rng.beta(8, 2, 100_000), [0.025, 0.975])
    assert abs(low - true_low) < 0.08 and abs(high - true_high) < 0.04
    fixed = [bool(x) for x in rng.random(10_000) < 0.8]
    assert calibration.parameter_spread(fixed, 5) is None
    widened = calibration.rate(outcomes, 5)
    assert widened["low"] <= low and widened["high"] >= high
