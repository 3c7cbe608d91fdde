"""The A7.1 verdict on synthetic records, the width schedule and the seeds-to-decide rule."""

from __future__ import annotations

import json

import pytest

from attnsep.experiments import base
from attnsep.experiments.xor_one_step import (
    Config,
    schedule_m,
    seeds_to_decide,
    split,
    verdict,
)
from attnsep.metrics import stats

CONFIG = Config()
DS = [2**6, 2**10, 2**14, 2**20]


def record(series: str, d: int, successes: int, seeds: int = 128) -> dict:
    low, high = stats.wilson(successes, seeds)
    m = 32 if series == "fixed" else schedule_m(d, 0.5)
    return {
        "series": series,
        "d": d,
        "m": m,
        "seeds": seeds,
        "successes": successes,
        "rate": successes / seeds,
        "low": low,
        "high": high,
        "collapses": seeds - successes,
        "collapse_rate": (seeds - successes) / seeds,
    }


def records(schedule: list[int], fixed: list[int], seeds: int = 128) -> list[dict]:
    return [record("schedule", d, s, seeds) for d, s in zip(DS, schedule, strict=True)] + [
        record("fixed", d, s, seeds) for d, s in zip(DS, fixed, strict=True)
    ]


def test_agreeing_records_are_reproduced():
    claim = verdict(records([126, 127, 128, 127], [120, 110, 100, 90]), CONFIG)
    assert claim["verdict"] == stats.REPRODUCED
    json.dumps(claim, allow_nan=False)
    assert len(claim["estimates"]) == 16  # success and collapse per series and d
    assert "0.9" in claim["criterion"] and "d=1048576 (m=97)" in claim["measured"]


def test_a_drop_of_the_fixed_width_is_information_only():
    claim = verdict(records([128] * 4, [128, 120, 90, 40]), CONFIG)
    assert claim["verdict"] == stats.REPRODUCED
    assert claim["fixed_drop"][32].startswith("drop from d=64")


def test_an_interval_separated_drop_is_not_reproduced():
    claim = verdict(records([128, 128, 125, 100], [128] * 4), CONFIG)
    assert claim["verdict"] == stats.NOT_REPRODUCED
    assert "falls with d" in claim["reason"]


def test_a_low_rate_at_the_largest_d_is_not_reproduced():
    claim = verdict(records([104, 102, 100, 100], [128] * 4), CONFIG)  # about 0.78 everywhere
    assert claim["verdict"] == stats.NOT_REPRODUCED
    assert "upper bound" in claim["reason"]


def test_too_few_seeds_are_inconclusive_and_say_how_many_would_decide():
    claim = verdict(records([31, 32, 31, 31], [32] * 4, seeds=32), CONFIG)
    assert claim["verdict"] == stats.INCONCLUSIVE
    n = seeds_to_decide(31 / 32, 0.9, "low")
    assert f"about {n} seeds (now 32)" in claim["reason"]


def test_a_rate_at_or_below_the_target_says_no_number_of_seeds_lifts_it():
    claim = verdict(records([28, 29, 29, 29], [32] * 4, seeds=32), CONFIG)  # 0.906 at 2^20
    assert claim["verdict"] == stats.INCONCLUSIVE
    claim = verdict(records([29, 29, 29, 28], [32] * 4, seeds=32), CONFIG)  # 0.875
    assert claim["verdict"] == stats.INCONCLUSIVE
    assert "no number of seeds" in claim["reason"] and "below it" in claim["reason"]


def test_without_the_schedule_series_the_verdict_is_inconclusive():
    only_fixed = [r for r in records([128] * 4, [128] * 4) if r["series"] == "fixed"]
    assert verdict(only_fixed, CONFIG)["verdict"] == stats.INCONCLUSIVE


@pytest.mark.parametrize("rate", [1.0, 0.99, 0.95, 0.93])
def test_seeds_to_decide_is_the_smallest_count_that_lifts_the_lower_bound(rate):
    n = seeds_to_decide(rate, 0.9, "low")
    assert stats.wilson(rate * n, n)[0] >= 0.9 > stats.wilson(rate * (n - 1), n - 1)[0]


@pytest.mark.parametrize("rate", [0.0, 0.5, 0.85, 0.89])
def test_seeds_to_decide_is_the_smallest_count_that_sinks_the_upper_bound(rate):
    n = seeds_to_decide(rate, 0.9, "high")
    assert stats.wilson(rate * n, n)[1] < 0.9
    assert n == 1 or stats.wilson(rate * (n - 1), n - 1)[1] >= 0.9


def test_seeds_to_decide_known_values():
    assert seeds_to_decide(1.0, 0.9, "low") == 35  # n / (n + 1.96^2) >= 0.9
    assert seeds_to_decide(0.9, 0.9, "low") is None
    assert seeds_to_decide(0.95, 0.9, "high") is None


def test_schedule_is_ceil_half_log_squared():
    assert [schedule_m(d, 0.5) for d in (64, 256, 1024, 2**20)] == [9, 16, 25, 97]


def test_split_gives_one_job_per_d_and_series_with_its_own_seeds():
    exp = base.get("one-step")
    config = exp.config("standard")
    jobs = split(config)
    assert len(jobs) == 2 * len(config.d_values)
    assert {(j.d_values[0], j.series[0]) for j in jobs} == {
        (d, s) for d in config.d_values for s in ("fixed", "schedule")
    }
    seeds = {j.d_values[0]: j.seeds for j in jobs}
    assert seeds[2**20] == config.seeds_by_d[2**20] < seeds[2**17] == config.seeds
    assert all(j.seeds_by_d == {} for j in jobs)
    # a config file spells the keys as strings
    assert exp.config("quick", seeds_by_d={"1024": 8}).seeds_by_d == {1024: 8}
