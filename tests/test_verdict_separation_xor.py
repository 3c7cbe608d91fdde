"""The A7.6 verdict on synthetic searches: agreeing, contradicting and undecidable records
(SPEC A7.6, Parts D and E), the bootstrap of thresholds, parameters and exponents, and the
criterion's error rates on simulated runs."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from attnsep.experiments import separation_xor
from attnsep.experiments import xor_thresholds as xt
from attnsep.metrics import calibration, stats
from attnsep.models.mlp import count
from attnsep.train.search import smallest_passing

CONFIG = separation_xor.Config()
SIZES = [64, 128, 256, 512, 1024]
FCN_SIZES = [16, 32, 64, 128, 256, 512, 1024]


def record(model, d, law, seeds=64, spread=(0.8, 1.0), never=0.0, seed=0):
    """A real threshold search over synthetic replicas: replica ``r`` succeeds from knob
    ``law(d) * u_r`` on (``u_r`` uniform in ``spread``, the same at every ``d``); a share
    ``never`` never succeeds. The transformer's search adds its two confirmation probes."""
    rng = np.random.default_rng(seed)
    need = np.ceil(law(d) * rng.uniform(*spread, seeds))
    need[rng.random(seeds) < never] = np.inf

    def evaluate(size):
        return need <= size

    limit = xt.LIMITS[model]
    star, probes = smallest_passing(evaluate, xt.TARGET, 2, limit)
    if model == "transformer":
        probes = xt.confirm(evaluate, star, probes, limit)
    at = next(p for p in probes if p.size == star) if star is not None else probes[-1]
    low, high = stats.wilson(at.successes, at.trials)
    return {
        "model": model,
        "d": d,
        xt.KNOBS[model]: star,
        "success_rate": at.rate,
        "success_low": low,
        "success_high": high,
        "collapse_rate": None,
        "probes": [p.as_record() for p in probes],
    }


def records(transformer, fcn, sizes=SIZES, fcn_sizes=FCN_SIZES, paired=True, **kwargs):
    """The transformer at ``sizes``, the FCN at ``fcn_sizes``; unpaired: each size draws its
    replicas afresh."""
    return [
        record(model, d, law, seed=0 if paired else d, **kwargs)
        for model, law, ds in (("transformer", transformer, sizes), ("fcn", fcn, fcn_sizes))
        for d in ds
    ]


def polylog(d):
    return 6 * math.log(d) ** 0.5


def linear(d):
    return d / 4


def fcn_width(d):
    return 3.5


def judged(recs):
    claim = separation_xor.verdict(recs, CONFIG)
    json.dumps(claim, allow_nan=False)  # the claim is plain, finite JSON
    return claim


def estimate(claim, name):
    return next(e for e in claim["estimates"] if e["name"] == name)


def test_polylog_transformer_against_a_constant_width_fcn_is_reproduced():
    claim = judged(records(polylog, fcn_width))
    assert claim["verdict"] == stats.REPRODUCED, claim["reason"]
    assert claim["decided"] == "paper"
    t, f = estimate(claim, "transformer exponent"), estimate(claim, "fcn exponent")
    assert t["low"] <= t["value"] <= t["high"] < 0.5
    assert 0.8 <= f["low"] <= f["value"] + 1e-12 and f["value"] <= f["high"] + 1e-12
    assert "dense first layer" in claim["measured"] and "structural" in claim["reason"]
    assert "-> paper" in claim["measured"]
    width = estimate(claim, "fcn d=1024 width_star")
    assert 2 <= width["low"] <= width["value"] <= width["high"] <= 4
    params = estimate(claim, "fcn d=1024 params")
    assert params["value"] == count(1024, int(width["value"]))


def test_a_transformer_growing_like_d_is_not_reproduced():
    claim = judged(records(linear, fcn_width))
    assert claim["verdict"] == stats.NOT_REPRODUCED, claim["reason"]
    assert estimate(claim, "transformer exponent")["low"] >= 0.5
    assert claim["decided"] != "paper"
    m = estimate(claim, "transformer d=1024 m_star")
    assert estimate(claim, "transformer d=1024 params")["value"] == 2 * m["value"]


def test_too_few_transformer_sizes_are_inconclusive():
    """Criterion changed (v2): the held-out test needs three transformer sizes d >= 64."""
    claim = judged(records(polylog, fcn_width, sizes=[64, 128]))
    assert claim["verdict"] == stats.INCONCLUSIVE
    assert "at least 3 transformer sizes" in claim["reason"]


def test_collapse_limited_small_d_are_listed_not_judged():
    """Today's defect: at d = 16, 32 a tenth of the replicas collapse, so m* there is huge or
    never reached and the old exponent's upper bound was inf. Criterion v2 judges d >= 64."""
    small = [record("transformer", d, polylog, never=0.15) for d in (16, 32)]
    claim = judged(small + records(polylog, fcn_width))
    assert claim["verdict"] == stats.REPRODUCED, claim["reason"]
    assert "d = [16, 32] run but not judged" in claim["measured"]
    assert not any(e["name"].startswith("transformer d=16 ") for e in claim["estimates"])
    assert estimate(claim, "transformer d=64 m_star")["value"] is not None


def test_noisy_replicas_are_inconclusive():
    """Unpaired replicas that need between 1x and 4x the typical knob, 8 per probe: the
    thresholds scatter, so the held-out test separates neither law and alpha stays below 0.5.
    (With 16 per probe the prediction bands of criterion v2 let the polylog law predict and
    the power law still miss: reproduced.)"""
    recs = records(polylog, fcn_width, paired=False, seeds=8, spread=(1, 4))
    claim = judged(recs)
    assert claim["verdict"] == stats.INCONCLUSIVE, claim["measured"]
    assert claim["decided"] in ("both", "neither")
    assert estimate(claim, "transformer exponent")["low"] < 0.5
    assert f"{claim['decided']} transformer law" in claim["reason"]
    assert f"2^{int(math.log2(claim['separating_d']))}" in claim["reason"]


def test_a_size_never_reached_is_inconclusive():
    """No threshold within the knob limit at the smallest d: the held-out fit has no value
    there and the exponent's lower bound reads -inf (it can only be lower), so no outcome."""
    recs = records(polylog, fcn_width, sizes=[64, 128, 256, 512])
    recs[0] = record("transformer", 64, polylog, never=0.5)
    t = xt.frontier_of(recs, "transformer")
    assert t.points[0]["m_star"] is None and t.points[0]["params_high"] is None
    value, low, high = t.exponent()
    assert math.isnan(value) and math.isinf(high)
    claim = judged(recs)
    assert claim["verdict"] == stats.INCONCLUSIVE
    assert "transformer at d=64 never reached" in claim["reason"]
    assert estimate(claim, "transformer exponent")["low"] is None  # -inf


def test_a_zero_width_integer_interval_missed_by_a_fraction_now_passes():
    """Criterion changed (v2, Part E): every replica needs the same m, so each interval is
    [m*, m*]; the polylog law fitted on the smaller half misses the rounded m* by less than 1,
    outside the raw intervals but inside them widened by ±1 (m is an integer knob)."""
    recs = records(polylog, fcn_width, spread=(1.0, 1.0))
    t = xt.frontier_of(recs, "transformer")
    ds, m, lows, highs = separation_xor.thresholds(t)
    assert lows == m == highs
    raw = stats.compare_laws(stats.POLYLOG, stats.POWER, ds, m, lows, highs, 0.25)
    misses = np.abs(np.array(raw["paper"]["predicted"]) - m[len(raw["paper"]["fitted_on"]) :])
    assert not raw["paper"]["inside"] and 0 < misses.max() < 1
    claim = judged(recs)
    assert claim["verdict"] == stats.REPRODUCED, claim["reason"]


def test_bootstrap_points_replay_the_search_and_count_parameters():
    recs = records(polylog, fcn_width, sizes=[16, 64], fcn_sizes=[16, 64], spread=(0.5, 1.5))
    for model in ("transformer", "fcn"):
        f = xt.frontier_of(recs, model)
        knob = xt.KNOBS[model]
        assert f.draws.shape == (stats.RESAMPLES, 2)
        for p, r, column in zip(
            f.points, [x for x in recs if x["model"] == model], f.draws.T, strict=True
        ):
            assert p[knob] == r[knob]  # the point is the search's answer
            assert p[f"{knob}_low"] <= p[knob] <= p[f"{knob}_high"]
            assert p["params"] == xt.params_at(model, p["d"], p[knob])
            assert p["params_low"] == pytest.approx(stats.interval(column)[0])
            assert p["seeds"] == 64


def test_draws_are_paired_across_sizes():
    """Replica ``e`` shares its streams at every ``d``: the same resampled replicas."""
    recs = records(polylog, fcn_width, sizes=[16, 64], fcn_sizes=[16], spread=(0.5, 1.5))
    a = xt.frontier_of(recs, "transformer").draws
    knob_16 = np.array(a[:, 0]) / 2
    knob_64 = np.array(a[:, 1]) / 2
    ratio = polylog(64) / polylog(16)  # the same replicas give knobs in a near-fixed ratio
    assert np.corrcoef(knob_16, knob_64)[0, 1] > 0.5
    assert np.median(knob_64 / knob_16) == pytest.approx(ratio, rel=0.15)


def _paper_run(config, spread, seed=11):
    """A run at ``config``'s sizes drawn from the polylog law fitted to the seed-0 standard
    m* (13, 15, 14, 16, 19 at d = 64 ... 1024), FCN width* 3 as measured (log-spread 0.15)."""
    law = stats.POLYLOG.fit([64, 128, 256, 512, 1024], [13, 15, 14, 16, 19])
    rng = np.random.default_rng(seed)

    def latent(value, s):
        return calibration.replica_thresholds(value, s, config.seeds, xt.TARGET, rng)

    run = [
        xt.simulated_search("transformer", d, latent(stats.POLYLOG.predict(law, [d])[0], spread))
        for d in config.d_values
    ]
    return run + [xt.simulated_search("fcn", d, latent(3.0, 0.15)) for d in config.fcn_d_values]


def test_error_rates_at_the_standard_sizes():
    """Records drawn from the paper's law at the standard preset's sizes, with the replica noise
    the seed-0 intervals suggest (log-spread 0.2: m*(64) = 13 [12, 16]): the criterion's power is
    above 0.5 (200 simulations measured about 0.76) and its false pass at most 0.2 (measured
    about 0.02; the binomial with 40 simulations puts 0.2 over 5 standard errors above)."""
    config = separation_xor.EXPERIMENT.config("standard")
    run = _paper_run(config, 0.2)
    hyp = separation_xor.hypotheses(run, config)
    assert "(ln d)^" in hyp.paper_law and "d^0.25" in hyp.rival_law
    rates = calibration.calibrate(separation_xor.verdict, hyp, config, simulations=40)
    assert rates["power"] > 0.5, rates
    assert rates["false_pass"] <= 0.2, rates
    assert rates["false_fail"] <= 0.1, rates


def test_simulated_runs_have_the_real_record_format_and_grid():
    config = separation_xor.EXPERIMENT.config("quick")
    run = _paper_run(config, 0.2)
    hyp = separation_xor.hypotheses(run, config)
    for draw in (hyp.paper, hyp.rival):
        recs = draw(config, np.random.default_rng(0))
        assert sorted((r["model"], r["d"]) for r in recs) == sorted(
            [("transformer", d) for d in config.d_values]
            + [("fcn", d) for d in config.fcn_d_values]
        )
        for r in recs:
            sizes = [p["size"] for p in r["probes"]]
            assert all(isinstance(s, int) for s in sizes) and sizes[0] == 2
            assert all(len(p["outcomes"]) == config.seeds for p in r["probes"])
        assert separation_xor.verdict(recs, config)["verdict"] in stats.OUTCOMES


def test_presets_follow_the_spec():
    exp = separation_xor.EXPERIMENT
    assert exp.criterion_version == 2 and exp.hypotheses is separation_xor.hypotheses
    for preset in ("quick", "standard", "full"):
        config = exp.config(preset)
        assert min(config.d_values) == separation_xor.TRANSFORMER_MIN_D
    standard, full = exp.config("standard"), exp.config("full")
    assert max(standard.fcn_d_values) >= 1024 and standard.seeds >= 64
    assert max(full.d_values) == 2**16
    assert len(exp.split(standard)) == len(standard.d_values) + len(standard.fcn_d_values)
