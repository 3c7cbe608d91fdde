"""A3 measured (SPEC Part G, item 3): the CLS-equivalence verdict on synthetic records for its
three outcomes, its error rates, a tiny end-to-end run and the side-by-side trainer's losses
against enumeration of the cube."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attnsep.exact.parity import cube, enumeration_loss
from attnsep.experiments import xor_cls_equivalence as cls_eq
from attnsep.metrics import calibration, stats
from attnsep.models.query_heads import QueryHeads, initial_queries
from attnsep.tasks.parity import SparseParity
from attnsep.train.cls_descent import side_by_side

CONFIG = cls_eq.config.Config(sizes=[(8, 4), (64, 16)], losses=["population"], seeds=16)


def records(dev=1e-15, twin=1e-16, control=0.1, chaotic=0, seeds=16, config=CONFIG):
    rng = np.random.default_rng(0)
    out = []
    for d, m, loss in cls_eq.config.jobs_of(config):
        t = np.full(seeds, twin)
        t[:chaotic] = 1e-8
        out.append(
            {
                "d": d,
                "m": m,
                "loss": loss,
                "seeds": seeds,
                "dev": (dev * rng.uniform(0.5, 1.0, seeds)).tolist(),
                "twin": t.tolist(),
                "control": (control * rng.uniform(1.0, 2.0, seeds)).tolist(),
            }
        )
    return out


def judged(recs, config=CONFIG):
    claim = cls_eq.verdict.verdict(recs, config)
    json.dumps(claim, allow_nan=False)
    for e in claim["estimates"]:
        assert e["low"] <= e["value"] <= e["high"], e
    return claim


def test_rounding_level_deviations_reproduce():
    claim = judged(records())
    assert claim["verdict"] == stats.REPRODUCED, claim["reason"]
    assert "conditioned share (d=64, m=16, population)" in [e["name"] for e in claim["estimates"]]


def test_a_mismatch_on_a_conditioned_replica_fails():
    recs = records()
    recs[1]["dev"][3] = 1e-3
    claim = judged(recs)
    assert claim["verdict"] == stats.NOT_REPRODUCED and "d=64" in claim["reason"]


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"dev": 1e-8}, "above 1e-09"),  # between the tolerance and a mismatch
        ({"chaotic": 10}, "fewer than half"),  # too few conditioned replicas
        ({"control": 1e-9}, "could not show a mismatch"),  # the run could not have failed
    ],
)
def test_undecided_runs_are_inconclusive(kwargs, words):
    claim = judged(records(**kwargs))
    assert claim["verdict"] == stats.INCONCLUSIVE and words in claim["reason"], claim["reason"]


def test_chaotic_replicas_are_reported_not_judged():
    recs = records(chaotic=3)
    for r in recs:
        r["dev"][0] = 1e-3  # a chaotic replica far off: amplified rounding, not a mismatch
    claim = judged(recs)
    assert claim["verdict"] == stats.REPRODUCED and "chaotic max D 0.001" in claim["measured"]


def test_error_rates():
    laws = cls_eq.calibration.hypotheses(records(chaotic=2), CONFIG)
    rates = calibration.error_rates(
        lambda recs: cls_eq.verdict.verdict(recs, CONFIG)["verdict"],
        lambda rng: laws.paper(CONFIG, rng),
        lambda rng: laws.rival(CONFIG, rng),
        simulations=40,
    )
    assert rates["power"] >= 0.8 and rates["false_pass"] <= 0.05, rates


def test_config_bounds():
    with pytest.raises(ValueError, match="cube loss alone"):
        cls_eq.config.Config(sizes=[(16, 4)], losses=["cube"])
    with pytest.raises(ValueError):
        cls_eq.config.Config(sizes=[(100_000, 4)])
    assert [j[2] for j in cls_eq.config.jobs_of(cls_eq.config.Config(sizes=[(6, 3), (16, 4)]))] == [
        "population",
        "cube",
        "population",
    ]


def test_tiny_end_to_end(tmp_path):
    config = cls_eq.EXPERIMENT.config("quick", sizes=[(6, 3), (12, 4)], seeds=3, steps=3)
    jobs = cls_eq.run.split(config)
    assert len(jobs) == 3
    recs = [r for job in jobs for r in cls_eq.run.run(job)]
    json.dumps(recs, allow_nan=False)
    claim = judged(recs, config)
    assert claim["verdict"] in stats.OUTCOMES
    assert max(x for r in recs for x in r["dev"]) < 1e-9  # three steps stay at rounding level
    assert min(x for r in recs for x in r["control"]) > 1e-6  # the wrong map shows at once
    paths = cls_eq.figure.figure(recs, config, tmp_path)
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_losses_match_enumeration_along_the_trajectory():
    """Both losses are the population loss: the closed form and the cube agree step by step, and
    the first equals the enumeration of the cube at the initial queries."""
    d, m, seeds, steps = 6, 3, 4, 4
    pop = side_by_side(5, seeds, d, m, steps, 20.0, "population")
    cub = side_by_side(5, seeds, d, m, steps, 20.0, "cube")
    assert np.abs(pop.loss - cub.loss).max() < 1e-12
    model = QueryHeads.sample(5, seeds, d, m)
    support = SparseParity(d).supports(5, seeds)
    gamma = model.weights(initial_queries(5, seeds, 2, m))
    exact = enumeration_loss(gamma, support).numpy()
    assert np.abs(pop.loss[0] - exact).max() < 1e-12
    assert cube(d).shape == (2**d, d)
    assert pop.loss[-1].mean() < pop.loss[0].mean()  # the steps train
