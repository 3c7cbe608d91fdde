"""The A7.5b verdict (``xor_samples_growth``, SPEC A7.5, Part E) on simulated searches: ``c d``
at every width is reproduced, ``c d^2`` is not, disagreeing widths and too few sizes are
inconclusive; its calibration, and its place as A7.5a's companion entry."""

from __future__ import annotations

import json

import numpy as np

from attnsep.experiments import sample_search, xor_samples, xor_samples_growth
from attnsep.metrics import calibration, stats

DS = [2**k for k in range(4, 13)]
CONFIG = xor_samples.Config(d_values=DS, seeds=64, n_max=2**40, surrogate_n_max=2**40)
RATES = {d: (0.9, 0.0) for d in DS}


def run(laws: dict[str, object], config=CONFIG, spread=0.5, seed=0):
    """Simulated records, one search series per width (``laws``: width -> ``n*(d)``)."""
    rng = np.random.default_rng(seed)
    out = []
    for width, law in laws.items():
        searches = sample_search.simulate(law, spread, RATES, config, rng)
        out += sample_search.run_records(searches, width, 32)
    return out


def judged(records, config=CONFIG):
    with calibration.simulating():  # the verdict alone, as a calibration reads it
        claim = xor_samples_growth.verdict(records, config)
    json.dumps(claim, allow_nan=False)
    return claim


def linear(d):
    return 300.0 * d


def quadratic(d):
    return 20.0 * d**2


def test_linear_at_every_width_is_reproduced():
    claim = judged(run({"fixed": linear, "schedule": linear}))
    assert claim["verdict"] == stats.REPRODUCED, claim["reason"]
    assert "fixed: paper, schedule: paper" in claim["reason"]


def test_quadratic_at_every_width_is_not_reproduced():
    claim = judged(run({"fixed": quadratic, "schedule": lambda d: 3 * quadratic(d)}))
    assert claim["verdict"] == stats.NOT_REPRODUCED, claim["reason"]


def test_widths_that_disagree_are_inconclusive():
    claim = judged(run({"fixed": linear, "schedule": quadratic}))
    assert claim["verdict"] == stats.INCONCLUSIVE
    assert "do not agree" in claim["reason"]


def test_growth_between_the_laws_is_inconclusive():
    claim = judged(run({"fixed": lambda d: 80 * d**1.5, "schedule": lambda d: 80 * d**1.5}))
    assert claim["verdict"] == stats.INCONCLUSIVE
    assert "neither c d nor" in claim["reason"]


def test_too_noisy_records_do_not_decide():
    """Quadratic growth seen through 4 replicas with log-spread 4: no verdict either way."""
    config = CONFIG.model_copy(update={"seeds": 4})
    claim = judged(run({"fixed": quadratic, "schedule": quadratic}, config, spread=4.0), config)
    assert claim["verdict"] == stats.INCONCLUSIVE, claim["reason"]


def test_too_few_sizes_are_inconclusive():
    config = CONFIG.model_copy(update={"d_values": DS[:3]})
    claim = judged(run({"fixed": linear}, config), config)
    assert claim["verdict"] == stats.INCONCLUSIVE and "at least 4" in claim["reason"]


def test_calibration_separates_c_d_from_c_d2():
    """40 simulations per law at nine sizes: power > 0.5 and false pass <= 0.2 (a true rate of
    0.05 gives more than 8 of 40 with probability below 1e-3)."""
    records = run({"fixed": linear, "schedule": linear})
    hyp = xor_samples_growth.hypotheses(records, CONFIG)
    simulated = hyp.rival(CONFIG, np.random.default_rng(1))
    assert {r["width"] for r in simulated} == {"fixed", "schedule"}
    rates = calibration.calibrate(xor_samples_growth.verdict, hyp, CONFIG, (), 40)
    assert rates["power"] > 0.5 and rates["false_pass"] <= 0.2, rates


def test_a75a_carries_a75b_as_its_companion():
    config = CONFIG.model_copy(update={"d_values": DS[:5]})
    records = run({"fixed": linear, "schedule": linear}, config)
    claim = xor_samples.verdict(records, config)
    (companion,) = claim["companions"]
    assert companion["claim"] == "A7.5b" and companion["calibration"]["simulations"] > 0
    names = [e["name"] for e in companion["estimates"]]
    assert "n* (test, schedule width, d=16)" in names
    assert "n* (certified, fixed width, d=256)" in names
    json.dumps(claim, allow_nan=False)
