"""The growth rule shared by A7.2 and A7.6's transformer (SPEC Part F): the threshold made
continuous by interpolating the crossing, both rules on synthetic thresholds, and the simulated
success plateau (``xor_thresholds``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnsep.experiments import xor_thresholds as xt
from attnsep.experiments.xor_growth_text import growth_reason
from attnsep.metrics import calibration, growth, stats

SIZES = [2.0**k for k in range(8, 19, 2)]


def table(rates_by_size, replicas=100):
    """``replicas x probes`` outcomes whose rate at each size is the one given (the first
    ``round(rate * replicas)`` replicas succeed)."""
    sizes = list(rates_by_size)
    cols = [np.arange(replicas) < round(r * replicas) for r in rates_by_size.values()]
    return sizes, np.column_stack(cols)


def test_the_crossing_is_interpolated_between_the_probe_below_and_the_first_passing():
    sizes, outcomes = table({16: 0.5, 19: 0.8, 20: 0.95, 32: 1.0})
    point, draws = xt.crossing_draws(sizes, outcomes, 0.9)
    assert point == pytest.approx(19 + (0.9 - 0.8) / (0.95 - 0.8))
    # every draw lies in the cell the integer threshold of the same resample leaves it
    first, integer = stats.threshold_draws(sizes, outcomes, 0.9)
    assert first == 20
    below = np.array([max([s for s in sizes if s < v], default=v) for v in integer])
    assert np.all((draws > below - 1e-9) & (draws <= integer + 1e-9))
    assert (draws < integer).mean() > 0.5  # continuous, not on the probes


def test_a_reference_scales_the_goal_and_no_passing_probe_is_inf():
    sizes, outcomes = table({8: 0.5, 16: 0.8, 32: 0.9})
    plateau = outcomes[:, -1]  # rate 0.9: the goal is 0.9 x 0.9 = 0.81
    point, _ = xt.crossing_draws(sizes, outcomes, 0.9, plateau)
    assert point == pytest.approx(16 + (0.81 - 0.8) / (0.9 - 0.8) * 16)
    low_sizes, low = table({8: 0.2, 16: 0.4})
    none, draws = xt.crossing_draws(low_sizes, low, 0.9)
    assert math.isinf(none) and np.isinf(draws).all()
    assert xt.crossing_draws(sizes, outcomes, 0.4)[0] == 8  # the smallest probe passes


def noisy(values, spread=0.02, seed=0):
    rng = np.random.default_rng(seed)
    values = np.asarray(values, dtype=float)
    return values[None, :] * np.exp(spread * rng.standard_normal((400, len(values))))


def test_a_polylog_law_sides_with_the_paper_and_a_power_law_with_the_rival():
    polylog = 6 * np.log(SIZES) ** 0.7
    g = xt.growth_test(SIZES, polylog, noisy(polylog), 0.25)
    assert g["decided"] == "paper" and g["side"] == "paper"
    assert g["curvature"]["larger"]["high"] < 0.25
    assert g["fits"]["paper"][1] == pytest.approx(0.7)
    power = 2 * np.asarray(SIZES) ** 0.4
    g = xt.growth_test(SIZES, power, noisy(power), 0.25)
    assert g["decided"] == "rival" and g["curvature"]["larger"]["low"] >= 0.25
    assert "sides with the power law" in growth_reason(g, len(SIZES), 0.25)


def test_noise_decides_nothing_and_too_few_or_unreached_sizes_are_named():
    polylog = 6 * np.log(SIZES) ** 0.7
    assert xt.growth_test(SIZES, polylog, noisy(polylog, 0.6), 0.25)["decided"] == "neither"
    assert xt.growth_test(SIZES[:3], polylog[:3], noisy(polylog[:3]), 0.25) == {"decided": None}
    opened = polylog.copy()
    opened[-1] = math.inf
    assert xt.growth_test(SIZES, opened, noisy(opened), 0.25)["decided"] == growth.UNREACHED


def test_a_small_misfit_of_the_paper_law_does_not_decide():
    """SPEC Part F: the plateau or a rounding moves every threshold by a few percent; the
    v2 rule (prediction inside the interval ± 1) failed such data, the rules here do not: a
    polylog law rounded to integers with zero-width bootstrap intervals still sides with it."""
    rounded = np.round(5 * np.log(SIZES) ** 0.6)
    draws = np.tile(rounded, (400, 1))
    g = xt.growth_test(SIZES, rounded, draws, 0.25)
    assert g["decided"] == "paper", growth_reason(g, len(SIZES), 0.25)


def test_plateau_failures_are_fresh_at_every_probe():
    """A replica that fails one probe is not more likely to fail the next (as measured at
    d = 1024, 4096: the failing replicas differ from width to width)."""
    rng = np.random.default_rng(0)
    evaluate = xt.plateau_failures(np.zeros(4000), 0.9, rng)
    a, b = ~evaluate(8), ~evaluate(16)
    assert a.mean() == pytest.approx(0.1, abs=0.02) and b.mean() == pytest.approx(0.1, abs=0.02)
    assert (a & b).mean() == pytest.approx(0.01, abs=0.006)
    assert not evaluate(-1).any()  # below the latent thresholds nothing succeeds


def test_a_simulated_search_with_a_plateau_reaches_the_target_at_the_law():
    """Latent quantile 0.9 / plateau on the law's value: the rate there is 0.9, so m* sits near
    the law (within the replica noise), and the largest probes show the plateau."""
    rng = np.random.default_rng(2)
    plateau, stars, tops = 0.95, [], []
    for _ in range(20):
        latent = calibration.replica_thresholds(20.0, 0.2, 256, 0.9 / plateau, rng)
        r = xt.simulated_search("transformer", 1024, latent, plateau, rng)
        stars.append(r["m_star"])
        tops.append(max(r["probes"], key=lambda p: p["size"])["rate"])
    assert 17 <= np.median(stars) <= 23
    assert np.mean(tops) == pytest.approx(plateau, abs=0.02)
    s, t = xt.plateau_of([{"probes": [{"size": 2, "successes": 1, "trials": 4}]}] * 3)
    assert (s, t) == (3, 12)
