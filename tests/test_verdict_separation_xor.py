"""The A7.6 verdict on synthetic searches: agreeing, contradicting and undecidable records
(SPEC A7.6, Part D), and the bootstrap of thresholds, parameters and exponents."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from attnsep.experiments import separation_xor
from attnsep.experiments import xor_thresholds as xt
from attnsep.metrics import stats
from attnsep.models.mlp import count
from attnsep.search import smallest_passing

CONFIG = separation_xor.Config()
SIZES = [16, 32, 64, 128, 256, 512, 1024]


def record(model, d, law, seeds=64, spread=(0.8, 1.0), never=0.0, seed=0):
    """A real threshold search over synthetic replicas: replica ``r`` succeeds from knob
    ``law(d) * u_r`` on (``u_r`` uniform in ``spread``, the same at every ``d``); a share
    ``never`` never succeeds. The transformer's search adds its two confirmation probes."""
    rng = np.random.default_rng(seed)
    need = np.ceil(law(d) * rng.uniform(*spread, seeds))
    need[rng.random(seeds) < never] = np.inf

    def evaluate(size):
        return need <= size

    star, probes = smallest_passing(evaluate, xt.TARGET, 2, 4096)
    if model == "transformer":
        probes = xt.confirm(evaluate, star, probes, 4096)
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


def records(transformer, fcn, sizes=SIZES, paired=True, **kwargs):
    """Both models at ``sizes``; unpaired: each size draws its replicas afresh."""
    return [
        record(model, d, law, seed=0 if paired else d, **kwargs)
        for model, law in (("transformer", transformer), ("fcn", fcn))
        for d in sizes
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
    t, f = estimate(claim, "transformer exponent"), estimate(claim, "fcn exponent")
    assert t["low"] <= t["value"] <= t["high"] <= 0.25
    assert 0.8 <= f["low"] <= f["value"] <= f["high"]
    assert "dense first layer" in claim["measured"]
    width = estimate(claim, "fcn d=1024 width_star")
    assert 2 <= width["low"] <= width["value"] <= width["high"] <= 4
    params = estimate(claim, "fcn d=1024 params")
    assert params["value"] == count(1024, int(width["value"]))


def test_a_transformer_growing_like_d_is_not_reproduced():
    claim = judged(records(linear, fcn_width))
    assert claim["verdict"] == stats.NOT_REPRODUCED, claim["reason"]
    assert estimate(claim, "transformer exponent")["low"] >= 0.5
    m = estimate(claim, "transformer d=1024 m_star")
    assert estimate(claim, "transformer d=1024 params")["value"] == 2 * m["value"]


def test_too_few_sizes_are_inconclusive():
    claim = judged(records(polylog, fcn_width, sizes=[64]))
    assert claim["verdict"] == stats.INCONCLUSIVE
    assert "two sizes" in claim["reason"]


def test_noisy_replicas_over_a_narrow_range_are_inconclusive():
    """Unpaired replicas that need between 1x and 4x the typical knob: thresholds scatter in
    the bootstrap, so neither bound is met at d = 16..64."""
    recs = records(polylog, fcn_width, sizes=[16, 32, 64], paired=False, seeds=16, spread=(1, 4))
    claim = judged(recs)
    assert claim["verdict"] == stats.INCONCLUSIVE, claim["measured"]
    t, f = estimate(claim, "transformer exponent"), estimate(claim, "fcn exponent")
    assert t["high"] > 0.25 and t["low"] < 0.5 and f["low"] < f["value"]
    assert "d=256" in claim["reason"]  # twice the log-range: 64 * 64 / 16


def test_a_size_never_reached_is_inconclusive():
    """No threshold within the knob limit: no exponent (a draw without one counts +inf)."""
    recs = records(polylog, fcn_width, sizes=[16, 32, 64])
    recs[0] = record("transformer", 16, polylog, never=0.5)
    t = xt.frontier_of(recs, "transformer")
    assert t.points[0]["m_star"] is None and t.points[0]["params_high"] is None
    value, low, high = t.exponent()
    assert math.isnan(value) and math.isinf(high)
    claim = judged(recs)
    assert claim["verdict"] == stats.INCONCLUSIVE
    assert "transformer at d=16 never reached" in claim["reason"]


def test_bootstrap_points_replay_the_search_and_count_parameters():
    recs = records(polylog, fcn_width, sizes=[16, 64], spread=(0.5, 1.5))
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
    recs = records(polylog, fcn_width, sizes=[16, 64], spread=(0.5, 1.5))
    a = xt.frontier_of(recs, "transformer").draws
    knob_16 = np.array(a[:, 0]) / 2
    knob_64 = np.array(a[:, 1]) / 2
    ratio = polylog(64) / polylog(16)  # the same replicas give knobs in a near-fixed ratio
    assert np.corrcoef(knob_16, knob_64)[0, 1] > 0.5
    assert np.median(knob_64 / knob_16) == pytest.approx(ratio, rel=0.15)
