"""FFNN width (SPEC Part G, item 2a, claim A7.8): the verdict on synthetic threshold searches
that agree with the paper, contradict it or cannot tell, the bootstrap of ``w*`` and ``P*``, the
parameter count against the net's tensors, the criterion's error rates, and a tiny run end to
end."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from attnsep.experiments import xor_ffnn_width as fw
from attnsep.experiments import xor_thresholds as xt
from attnsep.experiments.xor_ffnn_width import calibration as fc
from attnsep.experiments.xor_ffnn_width import verdict as fv
from attnsep.metrics import calibration, stats
from attnsep.models.mlp import MLP, count
from attnsep.train.search import probe_matrix, smallest_passing

STANDARD = [16, 32, 64, 128, 256, 512, 1024]


def record(d, law, seeds=20, spread=0.2, seed=0, plateau=1.0):
    """The real search (doubling from 2, bisection, probes at 2 w* and 4 w*) over replicas with
    log-normal latent widths whose 90% quantile is ``law(d)``; failures at ``1 - plateau``."""
    rng = np.random.default_rng([seed, d])
    latent = calibration.replica_thresholds(law(d), spread, seeds, 0.9, rng)

    def evaluate(width):
        return (latent <= width) & (rng.random(seeds) < plateau)

    star, probes = smallest_passing(evaluate, xt.TARGET, 2, 4096)
    probes = xt.confirm(evaluate, star, probes, 4096)
    return {"model": "fcn", "d": d, "width_star": star, "probes": [p.as_record() for p in probes]}


def judged(recs, **config):
    cfg = fw.EXPERIMENT.config("standard", **config)
    claim = fv.verdict(recs, cfg)
    json.dumps(claim, allow_nan=False)
    for e in claim["estimates"]:
        if None not in (e["value"], e["low"], e["high"]):
            assert e["low"] <= e["value"] <= e["high"], e
    return claim


def test_a_flat_width_is_reproduced():
    claim = judged([record(d, lambda d: 3.0) for d in STANDARD])
    assert claim["verdict"] == stats.REPRODUCED, claim["reason"]
    alpha_w = next(e for e in claim["estimates"] if e["name"].startswith("alpha_w"))
    alpha_p = next(e for e in claim["estimates"] if e["name"].startswith("alpha_P"))
    assert alpha_w["high"] < 0.5 and alpha_p["low"] >= 0.8
    assert "first layer" in claim["reason"]


def test_a_growing_width_is_not_reproduced():
    """``w* = 0.5 d^0.8``: the width itself grows."""
    claim = judged([record(d, lambda d: 0.5 * d**0.8) for d in STANDARD])
    assert claim["verdict"] == stats.NOT_REPRODUCED, claim["reason"]
    assert "the width itself grows" in claim["reason"]


def test_fewer_than_linear_parameters_is_not_reproduced():
    """``w*`` falling like ``d^-0.5`` from 64 (the architecture makes this all but unreachable:
    a synthetic case, widths far above the floor of 2)."""
    recs = [record(d, lambda d: 64 * 16**0.5 / d**0.5) for d in (16, 64, 256, 1024)]
    claim = judged(recs)
    assert claim["verdict"] == stats.NOT_REPRODUCED, claim["reason"]
    assert "fewer than linear" in claim["reason"]


def test_too_few_sizes_a_narrow_range_or_a_half_way_law_are_inconclusive():
    two = judged([record(d, lambda d: 3.0) for d in (16, 1024)])
    assert two["verdict"] == stats.INCONCLUSIVE and "at least 3" in two["reason"]
    narrow = judged([record(d, lambda d: 3.0, seeds=10, spread=0.5) for d in (16, 20, 24)])
    assert narrow["verdict"] == stats.INCONCLUSIVE, narrow["reason"]
    assert "would decide" in narrow["reason"]
    half = judged([record(d, lambda d: 1.5 * d**0.45, seeds=20) for d in (16, 32, 64, 128)])
    assert half["verdict"] == stats.INCONCLUSIVE, half["reason"]


def test_a_width_not_reached_is_not_reproduced_or_inconclusive():
    recs = [record(d, lambda d: 3.0) for d in STANDARD[:-1]]
    recs.append(record(1024, lambda d: 1e5))  # beyond the limit: every probe fails
    claim = judged(recs)
    assert recs[-1]["width_star"] is None
    assert claim["verdict"] in (stats.NOT_REPRODUCED, stats.INCONCLUSIVE)
    assert claim["verdict"] != stats.REPRODUCED


def test_thresholds_parameters_and_their_bootstrap():
    """``w*`` is the search's, ``P* = w*(d+2)+1`` is the net's own parameter count, and each
    bootstrap draw re-runs the search on resampled replicas."""
    recs = [record(d, lambda d: 3.0, spread=0.4) for d in (16, 64, 256)]
    a = fv.analyse(recs)
    for r, w, p, d in zip(recs, a["w"], a["P"], a["d"], strict=True):
        assert w == r["width_star"]
        assert p == count(int(d), int(w)) == MLP.init(1, int(d), int(w)).count()
    sizes, table = probe_matrix(recs[0]["probes"])
    weights = stats.resample_weights(len(table), stats.resample_count(), xt.BOOTSTRAP_SEED)
    for b in (1, 7, 100):
        rates = weights[b] @ table
        first = min((s for s, r in zip(sizes, rates, strict=True) if r >= 0.9 - 1e-12), default=0)
        assert a["w_draws"][b - 1, 0] == (first or math.inf)
        assert a["P_draws"][b - 1, 0] == pytest.approx(a["w_draws"][b - 1, 0] * 18 + 1)


def test_deciding_d_names_a_larger_range():
    a = {"d": [16.0, 64.0], "alpha_w": (0.1, -0.5, 0.7)}
    where = fv.deciding_d(a)
    assert where is not None and where > 64
    assert fv.deciding_d({"d": [16.0, 64.0], "alpha_w": (0.5, 0.2, 0.8)}) is None


def test_error_rates_at_the_standard_sizes():
    """Hypotheses fitted to a flat run like the measured standard one (master seed 0: w* = 2-3,
    replicas' log-spread 0.198, plateau 140/140 at the largest probes; its own records gave power
    0.98 and false pass 0 over 60 simulations): power >= 0.8 and false pass <= 0.05 over 40."""
    config = fw.EXPERIMENT.config("standard")
    real = [record(d, lambda d: 3.0, seed=3) for d in config.d_values]
    hyp = fc.hypotheses(real, config)
    assert "at every d" in hyp.paper_law and "d^0.5" in hyp.rival_law and hyp.redraws_itself
    rates = calibration.calibrate(fv.verdict, hyp, config, simulations=40)
    assert rates["power"] >= 0.8, rates
    assert rates["false_pass"] <= 0.05, rates
    simulated = hyp.rival(config, np.random.default_rng(0))
    assert [r["d"] for r in simulated] == config.d_values
    assert all(len(p["outcomes"]) == config.seeds for r in simulated for p in r["probes"])


def test_tiny_run_end_to_end(tmp_path):
    config = fw.EXPERIMENT.config("quick", d_values=[8, 10, 12], seeds=3, steps=100, width_limit=4)
    jobs = fw.run.split(config)
    assert [j.d_values for j in jobs] == [[12], [10], [8]]
    records = [r for job in jobs for r in fw.run.run(job)]
    json.dumps(records, allow_nan=False)
    claim = fw.verdict.verdict(records, config)
    assert claim["verdict"] in stats.OUTCOMES and claim["criterion"] == fv.CRITERION
    paths = fw.figure.figure(records, config, tmp_path)
    assert paths[0].read_bytes()[:4] == b"\x89PNG"
    assert fw.run.work(jobs[0].model_dump()) > 0 and fw.run.peak(jobs[0].model_dump()) > 0


def test_bad_configs_are_one_line_errors():
    with pytest.raises(ValueError, match="distinct"):
        fw.EXPERIMENT.config("quick", d_values=[16, 16, 32])
    with pytest.raises(ValueError):
        fw.EXPERIMENT.config("quick", seeds=10**6)
    with pytest.raises(ValueError):
        fw.EXPERIMENT.config("quick", d_values=[1])


def test_no_size_is_named_when_an_interval_all_but_touches_its_bound():
    from attnsep.experiments.xor_ffnn_width.verdict import deciding_d

    near = {"d": [16, 32, 64], "alpha_w": (0.3, 0.25 - 1e-12, 0.4), "alpha_P": (1, 0.9, 1.1)}
    assert deciding_d(near) is None  # once an OverflowError
    clear = {"d": [16, 32, 64], "alpha_w": (0.0, -0.3, 0.3), "alpha_P": (1.0, 0.9, 1.1)}
    assert deciding_d(clear) == 128.0
