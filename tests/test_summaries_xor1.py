"""The short ``summary`` of every verdict of the one-step, attention-maps, head-specialization,
kparity-steps, finite-samples and sample-baselines experiments (SPEC Part F): per outcome the
deciding fact with its number, within ``stats.SUMMARY_CHARS``, on the synthetic records of each
experiment's own tests."""

from __future__ import annotations

import math

import numpy as np
import pytest

import test_verdict_attention_maps as tm
import test_verdict_attention_properties as tp
import test_verdict_heads as th
import test_verdict_kparity as tk
import test_verdict_one_step as to
import test_verdict_samples as ts
import test_verdict_samples_growth as tg
import test_verdict_xor_sample_baselines as tb
from attnsep.exact import gf2
from attnsep.experiments import xor_attention_maps as maps
from attnsep.experiments import xor_heads, xor_kparity, xor_one_step, xor_samples
from attnsep.experiments.xor_sample_baselines import verdict as sv
from attnsep.metrics import stats


def short(claim: dict) -> str:
    """``claim``'s summary, checked to fit the claims table on one line."""
    text = claim["summary"]
    assert 0 < len(text) <= stats.SUMMARY_CHARS and "\n" not in text and not text.endswith(".")
    return text


# --- A7.1 --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schedule", "fixed", "seeds", "outcome", "want"),
    [
        ([126, 127, 128, 127], [120] * 4, 128, stats.REPRODUCED, "lower bound 0.957 >= 0.9 at "),
        ([128, 127, 125, 122], [128] * 4, 128, stats.INCONCLUSIVE, "failure rate rises with ln d"),
        ([128, 128, 125, 100], [128] * 4, 128, stats.NOT_REPRODUCED, "falls: d=64 low 0.971 > "),
        ([104, 102, 100, 100], [128] * 4, 128, stats.NOT_REPRODUCED, "upper bound 0.844 < 0.9"),
        ([31, 32, 31, 31], [32] * 4, 32, stats.INCONCLUSIVE, "lower bound 0.843 < 0.9 at d="),
        ([29, 29, 29, 28], [32] * 4, 32, stats.INCONCLUSIVE, "rate 0.875 not above 0.9 at d="),
    ],
)
def test_one_step_summaries(schedule, fixed, seeds, outcome, want):
    claim = xor_one_step.verdict.verdict(to.records(schedule, fixed, seeds), to.CONFIG)
    assert claim["verdict"] == outcome
    assert short(claim).startswith(want)
    assert "d=1048576" in short(claim) or "rises" in want  # the largest d, or the drop's end


def test_one_step_summary_of_one_size_and_of_no_schedule():
    one = xor_one_step.verdict.verdict([to.record("schedule", 2**20, 128)], to.CONFIG)
    assert short(one) == "lower bound 0.971 >= 0.9, but one size shows no trend in d"
    rising = xor_one_step.verdict.verdict(to.records([128, 127, 125, 122], [128] * 4), to.CONFIG)
    assert short(rising) == "failure rate rises with ln d (z = 2.90 > 1.96)"
    assert "z = 2.90" in rising["reason"]
    fixed = [r for r in to.records([128] * 4, [128] * 4) if r["series"] == "fixed"]
    assert "was not run" in short(xor_one_step.verdict.verdict(fixed, to.CONFIG))


# --- A7.3, A7.3b, A7.3c ------------------------------------------------------------------------

ONE_SIZE = maps.config.Config(seeds=8, paper_sizes=[])


def test_attention_maps_reproduced_names_softmax_lowest_rate_and_the_companions():
    records = [
        *tm.paper_maps(tm.MAIN, erf_spec=3),
        tm.record("normalized-erf", [20] * 64, 10),
        *tm.paper_maps(tm.SQUARE),
        *tm.paper_maps(tm.SHALLOW),
    ]
    claim = maps.verdict.verdict(records, tm.CONFIG)
    assert claim["verdict"] == stats.REPRODUCED
    assert short(claim) == "softmax 1 step, rate >= 0.969; linear, erf >= 10x steps"
    beyond, shallow = claim["companions"]
    assert short(beyond) == "light tails and normalized weights single them out"
    assert short(shallow) == "d=256, m=32: linear, erf ceilings < half the 0.47 needed"
    assert "half the 0.47 the target needs" in shallow["reason"]


@pytest.mark.parametrize(
    ("records", "config", "outcome", "want"),
    [
        (
            [
                *tm.paper_maps(tm.MAIN),
                tm.softmax(size=tm.SQUARE),
                tm.record("linear", [2] * 64, 60, size=tm.SQUARE),
                tm.record("erf", [None] * 64, 0, size=tm.SQUARE),
            ],
            tm.CONFIG,
            stats.NOT_REPRODUCED,
            "d=64, m=64: linear 2 steps (< 10x), rate 0.938 vs 0.969",
        ),
        (
            [tm.softmax(8, 8), tm.record("linear", [None] * 8, 4), tm.record("erf", [None] * 8, 0)],
            ONE_SIZE,
            stats.INCONCLUSIVE,
            "d=64, m=128: linear >= 10x steps, but rate 0.5 overlaps 1",
        ),
        (
            [
                *tm.paper_maps(tm.MAIN),
                tm.record("softmax", [2] * 64, 62, size=tm.SQUARE),
                *tm.paper_maps(tm.SQUARE)[1:],
            ],
            tm.CONFIG,
            stats.INCONCLUSIVE,
            "d=64, m=64: softmax misses: median steps 2, rate 0.969",
        ),
        (
            [tm.softmax(), tm.record("linear", [3] * 64, 5), tm.record("erf", [None] * 64, 0)],
            ONE_SIZE,
            stats.INCONCLUSIVE,
            "linear 3 steps (< 10x) yet specializes less often",
        ),
        (
            [tm.softmax(), tm.record("erf", [None] * 64, 0)],
            ONE_SIZE,
            stats.INCONCLUSIVE,
            "no rival's ceiling shown to reach the 0.64 needed",
        ),
        (
            [tm.softmax(), {**tm.record("linear", [None] * 64, 0), "best": None}],
            ONE_SIZE,
            stats.INCONCLUSIVE,
            "d=64, m=128: linear diverged at every eta of the grid",
        ),
        (
            tm.paper_maps(tm.SHALLOW),
            maps.config.Config(d=256, m=32, paper_sizes=[]),
            stats.INCONCLUSIVE,
            "no size with m >= d was run",
        ),
    ],
)
def test_attention_maps_summaries(records, config, outcome, want):
    claim = maps.verdict.verdict(records, config)
    assert claim["verdict"] == outcome
    assert short(claim) == want


def test_the_property_finding_names_what_separates_the_maps():
    one = [
        tm.softmax(64, 61),
        tm.record("linear", [None] * 64, 0),
        tm.record("erf", [None] * 64, 0),
        tm.record("normalized-erf", [None] * 64, 0, ceiling_value=0.05),
        tm.record("shifted-erf", [1] * 64, 59),
    ]
    (beyond,) = maps.verdict.verdict(one, ONE_SIZE)["companions"]
    assert short(beyond) == "shift invariance singles out the maps that learn"
    (pair,) = maps.verdict.verdict(tp.learners_and_failers(), tp.CONFIG)["companions"]
    assert short(pair) == "ceiling >= needed and normalized single them out"
    records = [*tp.learners_and_failers(), tp.never("sparsemax")]
    (closest,) = maps.verdict.verdict(records, tp.CONFIG)["companions"]
    assert short(closest) == "no single property or pair separates learners from failers"
    confounded = [
        tm.softmax(),
        tm.record("linear", [None] * 64, 0),
        tm.record("erf", [None] * 64, 0),
        tm.record("shifted-erf", [1] * 64, 59),
    ]
    (many,) = maps.verdict.verdict(confounded, ONE_SIZE)["companions"]
    assert short(many) == "confounded properties single out the maps that learn"


# --- A7.4 --------------------------------------------------------------------------------------


def test_head_specialization_reproduced_gives_a_and_c_with_their_numbers():
    claim = xor_heads.verdict.verdict(th.records([240, 245, 250]), th.CONFIG)
    assert claim["verdict"] == stats.REPRODUCED
    assert short(claim) == "(a) rate >= 0.9 (low >= 0.8); (c) ratio low 1.274 >= 1.2"
    assert "1024: 1.274" in claim["reason"]


def moved_ratio() -> list[dict]:
    """At d = 2^16 a median ratio of 1.23 with lower bound 1.165."""
    rows = th.records([240, 245, 250])
    last = next(r for r in rows if r["series"] == "schedule" and r["d"] == 2**16)
    last["ratio"] = np.linspace(0.73, 1.73, 256).tolist()
    return rows


@pytest.mark.parametrize(
    ("rows", "outcome", "want"),
    [
        (
            th.records([250, 240, 200]),
            stats.NOT_REPRODUCED,
            "(a) on-target upper bound 0.828 < 0.9",
        ),
        (
            th.records([240, 245, 250], medians=[1.3, 1.3, 1.3, 1.25, 1.1]),
            stats.NOT_REPRODUCED,
            "(c) ratio upper bound 1.145 <= 1.2 at d=65536",
        ),
        (
            th.records([240, 245, 250], medians=[1.3, 1.3, 1.15, 1.3, 1.3]),
            stats.INCONCLUSIVE,
            "(c) median ratio 1.176 <= 1.2 at d=4096",
        ),
        (moved_ratio(), stats.INCONCLUSIVE, "(c) ratio lower bound 1.165 < 1.2 at d=65536"),
        (
            th.records([240, 233, 250], indep=[200, 254, 200]),
            stats.INCONCLUSIVE,
            "(b) anti-symmetric below independent at d=1024: -0.082",
        ),
        (th.records([19, 19, 19], seeds=20), stats.INCONCLUSIVE, "(a) lower bound 0.764 < 0.8"),
        (th.records([250, 200, 250]), stats.INCONCLUSIVE, "(a) rate 0.781 < 0.9 at d=1024 but"),
        (
            th.records([64], ds=[64], medians=[1.5], schedule=[256]),
            stats.INCONCLUSIVE,
            "(a) no anti-symmetric fixed-width d >= 256 run",
        ),
        (
            [r for r in th.records([240, 245, 250]) if r["series"] == "fixed"],
            stats.INCONCLUSIVE,
            "(c) no anti-symmetric schedule series run",
        ),
    ],
)
def test_head_specialization_summaries_name_the_condition_that_decides(rows, outcome, want):
    claim = xor_heads.verdict.verdict(rows, th.CONFIG)
    assert claim["verdict"] == outcome
    assert short(claim).startswith(want)


def test_a_missing_independent_series_is_named():
    rows = [
        r
        for r in th.records([240, 245, 250])
        if not (r["init"] == "independent" and r["d"] == 4096)
    ]
    claim = xor_heads.verdict.verdict(rows, th.CONFIG)
    assert short(claim) == "(b) the independent init not run at d=4096"


# --- A1.k --------------------------------------------------------------------------------------


def test_kparity_summary_gives_the_collapse_against_the_target():
    assert short(tk.finding({})) == "collapse: capped step 0.000 <= 0.05, plain GD 0.188"
    missed = tk.finding({32: 5})
    assert short(missed) == "collapse: capped step 0.078 > 0.05, plain GD 0.188"
    assert "at most 0.078" in missed["reason"]
    steps_only = [tk.spread(d=d, k=4, seed=d) for d in (16, 32)]
    claim = xor_kparity.verdict.verdict(steps_only, xor_kparity.config.Config())
    assert short(claim) == "k=4, capped step: median steps to success 4 over d"
    assert short(xor_kparity.verdict.verdict([], xor_kparity.config.Config())) == "no job was run"


# --- A7.5, A7.5b -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("law", "ds", "n_max", "outcome", "want"),
    [
        (lambda d: 600 * d, ts.STANDARD, 2**40, stats.REPRODUCED, "n*'s upper end <= "),
        (
            lambda d: 3 * xor_samples.search.edge(d),
            ts.STANDARD,
            2**40,
            stats.NOT_REPRODUCED,
            "stuck at n >= d^4 (ln d)^2: lower end 0.92 > 0.1 at d=16",
        ),
        (lambda d: 600 * d, [16, 32], 2**40, stats.INCONCLUSIVE, "only 2 values of d; the bound"),
        (
            lambda d: 2 * d**4,
            ts.STANDARD,
            2**40,
            stats.INCONCLUSIVE,
            "n*'s upper end 2 d^4 at d=16, below the guard",
        ),
        (
            lambda d: 600 * d,
            ts.STANDARD,
            2**16,
            stats.INCONCLUSIVE,
            "stuck > 0.1 at d=128, guard below d^4 (ln d)^2",
        ),
    ],
)
def test_finite_samples_summaries(law, ds, n_max, outcome, want):
    spread = (0.2, 1.0) if outcome == stats.REPRODUCED else (0.8, 1.0)
    config = xor_samples.config.Config(n_max=n_max)
    claim = ts.judged(ts.records(law, ds, spread=spread, n_max=n_max), config)
    assert claim["verdict"] == outcome
    assert short(claim).startswith(want)


def test_the_reproduced_bound_names_the_worst_ratio_to_d4():
    claim = ts.judged(ts.records(lambda d: 600 * d, ts.STANDARD, spread=(0.2, 1.0)))
    assert short(claim) == "n*'s upper end <= 0.177 d^4; stuck not shown > 0.1"
    assert "at most 0.177 d^4" in claim["reason"]


def test_growth_summaries_give_both_exponents_and_the_better_law():
    linear = tg.entry(tg.run({"fixed": tg.quadratic}, tg.linear))
    assert short(linear) == "alpha 2 (one step), 1 (4 GD steps); c d better"
    quadratic = tg.entry(tg.run({"fixed": tg.quadratic}, tg.quadratic))
    assert short(quadratic) == "alpha 2 (one step), 1.9 (4 GD steps); c d^2 better"
    one = tg.entry(tg.run({"fixed": tg.linear}, surrogate=10**6))
    assert short(one) == "after one step n* ~ d^alpha, alpha = 1"
    config = tg.CONFIG.model_copy(update={"multistep_d_values": tg.STEP_DS[:2]})
    few = [
        r for r in tg.run({"fixed": tg.linear}, tg.linear) if r.get("steps", 1) == 1 or r["d"] < 64
    ]
    assert short(tg.entry(few, config)) == "alpha 1 (one step), 1 (4 GD steps)"


# --- A7.5c -------------------------------------------------------------------------------------


def lawful(d: int, replicas: int = 50) -> list[int]:
    """Counts at evenly spaced quantiles of elimination's exact law: they agree with it."""
    out = []
    for i in range(replicas):
        n = d
        while gf2.span_probability(d, n) < (i + 0.5) / replicas:
            n += 1
        out.append(n)
    return out


def test_baselines_summary_gives_the_exponents_or_a_departing_elimination():
    config = tb.sb.EXPERIMENT.config("quick")
    records = [
        {"method": "elimination", "d": d, "samples": lawful(d), "recovered": 50}
        for d in (8, 16, 32)
    ]
    records += [
        {"method": "pairs", "d": d, "samples": [int(math.log2(d * (d - 1) / 2)) + 4] * 50}
        for d in (8, 16, 32)
    ]
    claim = sv.verdict(records, config)
    assert short(claim) == "n* ~ d^alpha: elimination 0.79, pairs 0.29"
    assert "elimination alpha = 0.79" in claim["reason"] and "agrees" in claim["reason"]
    departs = sv.verdict(tb.records_for(lambda d: 2 * d), config)
    assert short(departs) == "elimination DEPARTS from its exact law (5.21 x DKW)"
    assert "5.21 x the DKW 95% band" in departs["reason"]
    assert short(sv.verdict([], config)) == "no method was run"
