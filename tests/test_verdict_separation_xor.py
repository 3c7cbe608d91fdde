"""The A7.6 verdict on synthetic searches: agreeing, contradicting and undecidable records
(SPEC A7.6, Parts D–F), the FCN check A7.6b, the bootstrap of thresholds, parameters and
exponents, and the criterion's error rates on simulated runs."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from attnsep.experiments import separation_xor
from attnsep.experiments import xor_thresholds as xt
from attnsep.metrics import calibration, growth, stats
from attnsep.metrics.laws import POLYLOG
from attnsep.models.mlp import count
from attnsep.train.search import smallest_passing

CONFIG = separation_xor.config.Config()
SIZES = [64, 128, 256, 512, 1024]
FCN_SIZES = [16, 32, 64, 128, 256, 512, 1024]


def record(model, d, law, seeds=64, spread=(0.8, 1.0), never=0.0, seed=0, plateau=1.0):
    """A real threshold search over synthetic replicas: replica ``r`` succeeds from knob
    ``law(d) * u_r`` on (``u_r`` uniform in ``spread``, the same at every ``d``) unless a probe
    fails it afresh with probability ``1 - plateau``; a share ``never`` never succeeds. The
    transformer's search adds its two confirmation probes."""
    rng = np.random.default_rng(seed)
    need = np.ceil(law(d) * rng.uniform(*spread, seeds))
    need[rng.random(seeds) < never] = np.inf

    def evaluate(size):
        return (need <= size) & (rng.random(seeds) < plateau)

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
    claim = separation_xor.verdict.verdict(recs, CONFIG)
    json.dumps(claim, allow_nan=False)  # the claim is plain, finite JSON
    return claim


def estimate(claim, name):
    return next(e for e in claim["estimates"] if e["name"] == name)


def check(claim):
    """The FCN's companion entry, A7.6b."""
    (entry,) = claim["companions"]
    assert entry["claim"] == "A7.6b" and entry["kind"] == "check"
    return entry


def test_polylog_transformer_with_a_plateau_is_reproduced_and_the_fcn_check_confirmed():
    """The transformer's success saturates at 0.96 (a few replicas fail at every width); the
    main entry is judged on its side only, the FCN's side is the check A7.6b."""
    claim = judged(
        [record("transformer", d, polylog, plateau=0.96) for d in SIZES]
        + [record("fcn", d, fcn_width) for d in FCN_SIZES]
    )
    assert claim["verdict"] == stats.REPRODUCED, claim["reason"]
    assert claim["decided"] == "paper" and claim["kind"] == "claim"
    t = estimate(claim, "transformer exponent")
    assert t["low"] <= t["value"] <= t["high"] < 0.5
    assert "-> paper" in claim["measured"] and "interpolated crossings" in claim["measured"]
    assert not any(e["name"].startswith("fcn") for e in claim["estimates"])
    fcn = check(claim)
    assert fcn["verdict"] == stats.CONFIRMED and fcn["calibration"] is None
    f = estimate(fcn, "fcn exponent")
    assert 0.8 <= f["low"] <= f["value"] + 1e-12 and f["value"] <= f["high"] + 1e-12
    assert "dense first layer" in fcn["measured"] and "dense first layer" in fcn["reason"]
    width = estimate(fcn, "fcn d=1024 width_star")
    assert 2 <= width["low"] <= width["value"] <= width["high"] <= 4
    params = estimate(fcn, "fcn d=1024 params")
    assert params["value"] == count(1024, int(width["value"]))


def test_a_transformer_growing_like_d_is_not_reproduced():
    claim = judged(records(linear, fcn_width))
    assert claim["verdict"] == stats.NOT_REPRODUCED, claim["reason"]
    assert estimate(claim, "transformer exponent")["low"] >= 0.5
    assert claim["decided"] == "rival"
    m = estimate(claim, "transformer d=1024 m_star")
    assert estimate(claim, "transformer d=1024 params")["value"] == 2 * m["value"]


def test_an_fcn_whose_parameters_do_not_grow_fails_the_check():
    """Hidden widths shrinking like 1/d keep the parameters flat: impossible for a dense first
    layer, so the check fails and its reason says a failure means a bug; the claim stands."""
    claim = judged(records(polylog, lambda d: 4096 / d))
    assert claim["verdict"] == stats.REPRODUCED, claim["reason"]
    fcn = check(claim)
    assert fcn["verdict"] == stats.CHECK_FAILED
    assert estimate(fcn, "fcn exponent")["high"] < 0.8
    assert "a failed check means a bug in attnsep" in fcn["reason"]


def test_the_check_needs_two_fcn_sizes():
    claim = judged(records(polylog, fcn_width, fcn_sizes=[64]))
    assert "companions" not in claim and claim["verdict"] == stats.REPRODUCED


def test_too_few_transformer_sizes_are_inconclusive():
    """Criterion v3: the growth rules need four transformer sizes d >= 64."""
    claim = judged(records(polylog, fcn_width, sizes=[64, 128, 256]))
    assert claim["verdict"] == stats.INCONCLUSIVE
    assert "at least 4 values of d" in claim["reason"]


def test_collapse_limited_small_d_are_listed_not_judged():
    """At d = 16, 32 a tenth of the replicas collapse, so m* there is huge or never reached:
    judged at d >= 64 only (criterion v2, kept)."""
    small = [record("transformer", d, polylog, never=0.15) for d in (16, 32)]
    claim = judged(small + records(polylog, fcn_width))
    assert claim["verdict"] == stats.REPRODUCED, claim["reason"]
    assert "d = [16, 32] run but not judged" in claim["measured"]
    assert not any(e["name"].startswith("transformer d=16 ") for e in claim["estimates"])
    assert estimate(claim, "transformer d=64 m_star")["value"] is not None


def test_noisy_replicas_are_inconclusive():
    """Unpaired replicas that need between 1x and 4x the typical knob, 8 per probe: the
    thresholds scatter, so neither growth rule decides and alpha stays below 0.5."""
    recs = records(polylog, fcn_width, paired=False, seeds=8, spread=(1, 4))
    claim = judged(recs)
    assert claim["verdict"] == stats.INCONCLUSIVE, claim["measured"]
    assert claim["decided"] == "neither"
    assert estimate(claim, "transformer exponent")["low"] < 0.5
    assert "the curvature test sides with" in claim["reason"]
    assert f"2^{int(math.log2(claim['separating_d']))}" in claim["reason"]


def test_a_size_never_reached_is_inconclusive():
    """No threshold within the knob limit at the smallest d: the growth rules do not run and
    the exponent's lower bound reads -inf (it can only be lower), so no outcome."""
    recs = records(polylog, fcn_width, sizes=[64, 128, 256, 512])
    recs[0] = record("transformer", 64, polylog, never=0.5)
    t = xt.frontier_of(recs, "transformer")
    assert t.points[0]["m_star"] is None and t.points[0]["params_high"] is None
    value, low, high = t.exponent()
    assert math.isnan(value) and math.isinf(high)
    claim = judged(recs)
    assert claim["verdict"] == stats.INCONCLUSIVE
    assert claim["decided"] == growth.UNREACHED
    assert "transformer never reached the target at d=64" in claim["reason"]
    assert estimate(claim, "transformer exponent")["low"] is None  # -inf


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


def _paper_run(config, spread, plateau=0.95, seed=5):
    """A run at ``config``'s sizes drawn from the polylog law fitted to the seed-3 standard m*
    (14, 18, 15, 16, 21, 23, 20, 25 at d = 64 ... 8192, criterion v2), success plateau 0.95
    (failures fresh at every probe); FCN width* 3 as measured (log-spread 0.15)."""
    ds = [64, 128, 256, 512, 1024, 2048, 4096, 8192]
    law = POLYLOG.fit(ds, [14, 18, 15, 16, 21, 23, 20, 25])
    rng = np.random.default_rng(seed)

    def latent(value, s, quantile=xt.TARGET):
        return calibration.replica_thresholds(value, s, config.seeds, quantile, rng)

    run = [
        xt.simulated_search(
            "transformer",
            d,
            latent(POLYLOG.predict(law, [d])[0], spread, xt.TARGET / plateau),
            plateau,
            rng,
        )
        for d in config.d_values
    ]
    return run + [xt.simulated_search("fcn", d, latent(3.0, 0.15)) for d in config.fcn_d_values]


def test_error_rates_at_the_standard_sizes():
    """Records drawn from the paper's law at the standard preset's sizes, with the seed-3 run's
    replica noise (log-spread about 0.35) and its success plateau (0.95): the criterion's power
    is above 0.3 (200 simulations measured 0.62 on this run, 0.49–0.55 on two others: below the
    goal 0.8, which twice the seeds meet, 0.87 in 100) and its false pass at most 0.15 (measured
    0.005–0.02; with 40 simulations the binomial puts 0.15 over 4 standard errors above)."""
    config = separation_xor.EXPERIMENT.config("standard")
    hyp = separation_xor.calibration.hypotheses(_paper_run(config, 0.35), config)
    assert "(ln d)^" in hyp.paper_law and "d^0.25" in hyp.rival_law
    assert "success plateau" in hyp.noise
    rates = calibration.calibrate(separation_xor.verdict.verdict, hyp, config, simulations=40)
    assert rates["power"] > 0.3, rates
    assert rates["false_pass"] <= 0.15, rates
    assert rates["false_fail"] <= 0.1, rates


def test_simulated_runs_have_the_real_record_format_and_grid():
    """The transformer's side only (the FCN's is a check, not calibrated): the real search's
    probes, one outcome per seed, the plateau's failures below the largest probe's full rate."""
    config = separation_xor.EXPERIMENT.config("quick")
    hyp = separation_xor.calibration.hypotheses(_paper_run(config, 0.35), config)
    for draw in (hyp.paper, hyp.rival):
        recs = draw(config, np.random.default_rng(0))
        assert [(r["model"], r["d"]) for r in recs] == [("transformer", d) for d in config.d_values]
        for r in recs:
            sizes = [p["size"] for p in r["probes"]]
            assert all(isinstance(s, int) for s in sizes) and sizes[0] == 2
            assert all(len(p["outcomes"]) == config.seeds for p in r["probes"])
        claim = separation_xor.verdict.verdict(recs, config)
        assert claim["verdict"] in stats.OUTCOMES and "companions" not in claim


def test_presets_follow_the_spec():
    exp = separation_xor.EXPERIMENT
    assert exp.criterion_version == 3 and exp.hypotheses is separation_xor.calibration.hypotheses
    assert exp.tuned_on == (0, 1, 3)
    for preset in ("quick", "standard", "full"):
        config = exp.config(preset)
        assert min(config.d_values) == separation_xor.config.TRANSFORMER_MIN_D
    standard, full = exp.config("standard"), exp.config("full")
    assert max(standard.fcn_d_values) >= 1024 and standard.seeds >= 64
    assert max(full.d_values) == 2**16
    assert len(exp.split(standard)) == len(standard.d_values) + len(standard.fcn_d_values)


@pytest.mark.parametrize(
    ("interval", "outcome"),
    [
        ((0.9, 1.1), stats.CONFIRMED),
        ((0.4, 1.1), stats.NOT_CHECKED),
        ((0.3, 0.7), stats.CHECK_FAILED),
    ],
)
def test_the_checks_three_outcomes_follow_the_exponents_interval(interval, outcome):
    """Confirmed above 0.8, failed (a bug) below it, not checked when the interval straddles it
    (too narrow a range of d, e.g. the quick preset's one octave)."""
    a = separation_xor.analysis.analyse(records(polylog, fcn_width))
    a["fcn_alpha"] = (sum(interval) / 2, *interval)
    entry = separation_xor.check.fcn_check(a)
    assert entry is not None and entry["verdict"] == outcome and entry["kind"] == "check"
