"""The A7.1 verdict on synthetic records, the failure-rate trend test, the criterion's error
rates (SPEC Part E), the width schedule and the seeds-to-decide rule."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from attnsep.experiments import base
from attnsep.experiments.xor_one_step import EXPERIMENT
from attnsep.experiments.xor_one_step.calibration import RIVAL_END
from attnsep.experiments.xor_one_step.config import Config, schedule_m
from attnsep.experiments.xor_one_step.run import split
from attnsep.experiments.xor_one_step.verdict import failure_trend, seeds_to_decide, verdict
from attnsep.metrics import calibration, stats

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
    # success and collapse per series and d, the schedule's failure rate per d, its trend
    assert len(claim["estimates"]) == 16 + 4 + 1
    assert "0.9" in claim["criterion"] and "d=1048576 (m=97)" in claim["measured"]
    assert "shows no rise" in claim["reason"] and not claim["failure_trend"]["rises"]


def test_a_rising_failure_rate_is_no_longer_reproduced():
    """The Part D criterion passed these (lower bound 0.902 at 2^20, no interval-separated
    drop); Part E also asks that 1 - rate does not rise with d: 0, 1, 3, 6 failures in 128 do."""
    claim = verdict(records([128, 127, 125, 122], [128] * 4), CONFIG)
    assert claim["verdict"] == stats.INCONCLUSIVE
    assert "failure rate rises" in claim["reason"]
    assert claim["failure_trend"]["z"] > 1.96 and claim["failure_trend"]["low"] > 0


def test_one_schedule_size_cannot_show_the_trend():
    one = [record("schedule", 2**20, 128)]
    claim = verdict(one, CONFIG)
    assert claim["verdict"] == stats.INCONCLUSIVE
    assert "one size" in claim["reason"]


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


# --- the failure-rate trend test -----------------------------------------------------------


def trend_rows(failures: list[int], seeds: list[int]) -> list[dict]:
    return [
        {"d": d, "seeds": n, "successes": n - f}
        for d, f, n in zip(DS, failures, seeds, strict=True)
    ]


def test_the_trend_is_the_weighted_slope_over_its_standard_error_under_a_constant_rate():
    failures, seeds = [10, 6, 3, 1], [128, 128, 128, 64]
    trend = failure_trend(trend_rows(failures, seeds))
    x, n = np.log(DS), np.array(seeds, dtype=float)
    rate = np.array(failures) / n
    slope = np.polyfit(x, rate, 1, w=np.sqrt(n))[0]  # least squares weighted by the seeds
    pooled = sum(failures) / n.sum()
    se = math.sqrt(pooled * (1 - pooled) / (n * (x - np.average(x, weights=n)) ** 2).sum())
    assert trend["slope"] == pytest.approx(slope) and trend["se"] == pytest.approx(se)
    assert trend["z"] == pytest.approx(slope / se) and not trend["rises"]
    assert trend["low"] == pytest.approx(slope - 1.959964 * se)


def test_no_failures_or_no_failing_trend_is_not_a_rise():
    assert failure_trend(trend_rows([0, 0, 0, 0], [128] * 4))["z"] == 0.0
    assert not failure_trend(trend_rows([5, 5, 5, 5], [128] * 4))["rises"]


def test_a_constant_failure_rate_is_taken_for_a_rise_about_two_and_a_half_percent_of_the_time():
    rng = np.random.default_rng(11)
    sims, seeds = 2000, [128, 128, 128, 64]
    rises = sum(
        failure_trend(trend_rows(list(rng.binomial(seeds, 0.1)), seeds))["rises"]
        for _ in range(sims)
    )
    se = math.sqrt(0.025 * 0.975 / sims)
    assert abs(rises / sims - 0.025) <= 4 * se


# --- the criterion's error rates (SPEC Part E) ----------------------------------------------


def standard_run() -> list[dict]:
    """The schedule series as the seed-0 standard run measured it (docs/claims.md)."""
    config = EXPERIMENT.config("standard")
    successes = [89, 109, 119, 122, 120, 125, 63]
    collapses = [8, 3, 5, 2, 2, 0, 0]
    rows = []
    for d, s, c in zip(config.d_values, successes, collapses, strict=True):
        row = record("schedule", d, s, config.seeds_by_d.get(d, config.seeds))
        rows.append({**row, "collapses": c, "collapse_rate": c / row["seeds"]})
    return rows


def test_the_hypotheses_simulate_the_measured_rates_and_a_falling_rival():
    config = EXPERIMENT.config("standard")
    real = standard_run()
    h = EXPERIMENT.hypotheses(real, config)
    rng = np.random.default_rng(5)
    paper = [h.paper(config, rng) for _ in range(300)]
    rival = [h.rival(config, rng) for _ in range(300)]
    for i, r in enumerate(real):
        n = r["seeds"]
        got = np.mean([sim[i]["successes"] for sim in paper]) / n
        assert abs(got - r["rate"]) <= 4 * math.sqrt(r["rate"] * (1 - r["rate"]) / (300 * n))
    first = np.mean([sim[0]["rate"] for sim in rival])
    last = np.mean([sim[-1]["rate"] for sim in rival])
    assert first == pytest.approx(max(r["rate"] for r in real), abs=0.01)
    assert last == pytest.approx(RIVAL_END, abs=0.02)
    assert [r["d"] for r in paper[0]] == config.d_values


def test_the_criterion_has_power_and_a_small_false_pass_at_the_standard_sizes():
    """40 simulations per law: power > 0.5 (about 0.75 expected: 64 seeds at d = 2^20 reach a
    lower bound >= 0.9 only with 63 or 64 successes); false pass <= 0.2 (binomial bound for a
    true rate near 0: the rival ends at 0.85)."""
    config = EXPERIMENT.config("standard")
    h = EXPERIMENT.hypotheses(standard_run(), config)
    rates = calibration.error_rates(
        lambda records: verdict(records, config)["verdict"],
        lambda rng: h.paper(config, rng),
        lambda rng: h.rival(config, rng),
        simulations=40,
        seed=3,
    )
    assert rates["power"] > 0.5
    assert rates["false_pass"] <= 0.2
    assert rates["false_fail"] <= 0.2


def test_calibrate_runs_through_the_experiment():
    config = EXPERIMENT.config("standard")
    out = EXPERIMENT.calibrate(standard_run(), config, simulations=20)
    assert {"power", "false_pass", "false_fail", "paper_law", "rival_law", "noise"} <= set(out)
    assert "0.85" in out["rival_law"] and EXPERIMENT.criterion_version == 2
