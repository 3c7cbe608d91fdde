"""The curvature test and the held-out errors of ``metrics.growth`` (SPEC Part F)."""

import math

import numpy as np
import pytest

from attnsep.metrics import growth
from attnsep.metrics.laws import POLYLOG, POWER

SIZES = 2.0 ** np.arange(8, 19, 2)


def noisy(values: np.ndarray, spread: float, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return values[None, :] * np.exp(spread * rng.standard_normal((1000, len(values))))


def test_a_polylog_law_bends_and_a_power_law_does_not():
    polylog = 3 * np.log(SIZES)
    bent = growth.curvature(SIZES, polylog, noisy(polylog, 0.03), 0.25)
    # (ln x)^1: local exponent 1 / ln x, about 0.15 on 2^8..2^12 and 0.09 on 2^14..2^18
    assert bent["decided"] == "paper" and bent["change"]["high"] < 0
    assert bent["smaller"]["value"] == pytest.approx(0.146, abs=0.01)
    power = 2 * SIZES**0.3
    straight = growth.curvature(SIZES, power, noisy(power, 0.03), 0.25)
    assert straight["decided"] == "rival"
    assert straight["change"]["low"] < 0 < straight["change"]["high"]
    assert straight["larger"]["value"] == pytest.approx(0.3, abs=1e-9)


def test_too_much_noise_decides_nothing():
    power = 2 * SIZES**0.3
    assert growth.curvature(SIZES, power, noisy(power, 1.0), 0.25)["decided"] == "neither"


def test_a_slow_power_below_the_rivals_least_power_counts_for_the_paper():
    slow = 5 * SIZES**0.05
    assert growth.curvature(SIZES, slow, noisy(slow, 0.01), 0.25)["decided"] == "paper"


def test_unreached_sizes_widen_both_ends():
    power = 2 * SIZES**0.3
    draws = noisy(power, 0.03)
    draws[::10, -1] = math.inf  # a tenth of the draws never reached the largest size
    judged = growth.curvature(SIZES, power, draws, 0.25)
    assert judged["larger"]["high"] is None and judged["decided"] == "neither"


def test_held_out_errors_prefer_the_law_that_made_the_data():
    polylog = 3 * np.log(SIZES) ** 1.5
    errs = growth.held_out_errors(POLYLOG, POWER, SIZES, polylog, noisy(polylog, 0.02))
    assert errs["paper"]["value"] < 1e-9 and errs["difference"]["low"] > 0
    power = 2 * SIZES**0.4
    errs = growth.held_out_errors(POLYLOG, POWER, SIZES, power, noisy(power, 0.02))
    assert errs["rival"]["value"] < 1e-9 and errs["difference"]["high"] < 0
    assert errs["used"] == 1000


def test_fewer_than_four_sizes_is_an_error():
    with pytest.raises(ValueError, match="at least four sizes"):
        growth.curvature(SIZES[:3], SIZES[:3], noisy(SIZES[:3], 0.1), 0.25)


def test_a_measured_value_never_reached_leaves_the_point_estimates_out():
    power = 2 * SIZES**0.4
    measured = power.copy()
    measured[-1] = math.inf
    errs = growth.held_out_errors(POLYLOG, POWER, SIZES, measured, noisy(power, 0.02))
    assert errs["paper"]["value"] is None and errs["difference"]["value"] is None
    assert errs["difference"]["high"] < 0 and errs["used"] == 1000
