"""A7.3's verdict on synthetic records (three outcomes) and its GD bookkeeping (SPEC Part D)."""

from __future__ import annotations

import math

import pytest
import torch

from attnsep.experiments import xor_attention_maps as maps
from attnsep.metrics import stats
from attnsep.models.query_heads import QueryHeads, initial_queries
from attnsep.tasks.parity import SparseParity
from attnsep.train.parity import gradient_descent, population_objective

CONFIG = maps.Config(seeds=8, budget=1000, eta_exponents=[4.0, 6.0])


def record(name: str, steps: list[int | None], specialized: int, n: int | None = None) -> dict:
    """One map's record at its best eta: ``steps`` per replica, ``specialized`` of them."""
    n = len(steps) if n is None else n
    spec = [i < specialized for i in range(n)]
    collapsed = [not s for s in spec]
    reached = [s is not None for s in steps]
    best = {
        "exponent": 6.0,
        "eta": 1e6,
        "steps": steps,
        "final_loss": [0.0 if r else 1.0 for r in reached],
        "one_step_losses": [0.0 if s == 1 else 1.0 for s in steps],
        "specialized": spec,
        "collapsed": collapsed,
        "one_step_specialized": spec,
        "one_step_collapsed": collapsed,
    }
    point = {
        "exponent": 6.0,
        "eta": 1e6,
        "diverged": False,
        "diverged_at": None,
        "horizon": 1000,
        "median_steps": None,
        "median_loss": 0.0,
    }
    return {
        "attention": name,
        "budget": 1000,
        "screen_steps": 100,
        "target": 0.01,
        "curve": [point, {**point, "exponent": 8.0, "diverged": True, "median_loss": None}],
        "best": best,
    }


def softmax(n: int = 64, specialized: int = 62) -> dict:
    return record("softmax", [1] * n, specialized)


def test_agreeing_records_reproduce() -> None:
    records = [
        softmax(),
        record("linear", [None] * 64, 0),
        record("erf", [None] * 64, 3),
        record("normalized-erf", [20] * 64, 10),  # 20 >= 10 x 1 step
    ]
    claim = maps.verdict(records, CONFIG)
    assert claim["verdict"] == stats.REPRODUCED, claim["reason"]
    assert claim["criterion"] == maps.CRITERION
    assert "diverged at eta = 10^{8}" in claim["measured"]
    names = {e["name"] for e in claim["estimates"]}
    assert "softmax: median steps to the target" in names
    assert "erf: specialization rate" in names
    never = next(e for e in claim["estimates"] if e["name"] == "linear: median steps to the target")
    assert never["value"] is None  # never reached: infinite, stored as None
    assert claim["best_eta"]["softmax"] == 1e6


def test_a_rival_matching_softmax_does_not_reproduce() -> None:
    records = [softmax(), record("linear", [None] * 64, 0), record("normalized-erf", [2] * 64, 60)]
    claim = maps.verdict(records, CONFIG)
    assert claim["verdict"] == stats.NOT_REPRODUCED
    assert "normalized-erf" in claim["reason"]


def test_overlapping_specialization_with_few_seeds_is_inconclusive() -> None:
    # never reaches the target, but 4 of 8 against 8 of 8: the Wilson intervals overlap
    records = [softmax(8, 8), record("erf", [None] * 8, 4)]
    claim = maps.verdict(records, CONFIG)
    assert claim["verdict"] == stats.INCONCLUSIVE
    assert "erf" in claim["reason"] and "more seeds" in claim["reason"]


def test_softmax_missing_its_own_part_is_inconclusive() -> None:
    records = [record("softmax", [2] * 64, 62), record("linear", [None] * 64, 0)]
    claim = maps.verdict(records, CONFIG)
    assert claim["verdict"] == stats.INCONCLUSIVE and "softmax" in claim["reason"]
    low_rate = [softmax(64, 50), record("linear", [None] * 64, 0)]
    assert maps.verdict(low_rate, CONFIG)["verdict"] == stats.INCONCLUSIVE


def test_fast_but_separated_rival_is_inconclusive() -> None:
    claim = maps.verdict([softmax(), record("erf", [3] * 64, 5)], CONFIG)
    assert claim["verdict"] == stats.INCONCLUSIVE
    assert "erf" in claim["reason"] and "disagree" in claim["reason"]


def test_a_map_diverging_everywhere_is_inconclusive() -> None:
    dead = {**record("linear", [None] * 64, 0), "best": None}
    claim = maps.verdict([softmax(), dead], CONFIG)
    assert claim["verdict"] == stats.INCONCLUSIVE
    assert "linear: diverged at every eta" in claim["measured"]


def test_median_steps_interval_is_a_bootstrap_over_replicas() -> None:
    steps = [1] * 40 + [None] * 24
    summary = maps.summarize(record("softmax", steps, 60))
    assert summary is not None
    value, low, high = summary["steps"]
    assert value == 1 and low == 1 and math.isinf(high)  # a resample can lose the majority
    assert summary["specialized"][1:] == stats.wilson(60, 64)


def test_best_eta_rule() -> None:
    def point(steps: float | None, loss: float) -> dict:
        return {"median_steps": steps, "median_loss": loss}

    ranked = sorted(
        [point(None, 0.0), point(3, 0.5), point(3, 0.1), point(5, 0.0)], key=maps.rank_key
    )
    assert ranked[0] == point(3, 0.1) and ranked[-1] == point(None, 0.0)


# --- the GD bookkeeping ---------------------------------------------------------------------


def setup(name: str, seeds: int = 4, d: int = 16, m: int = 8):
    task = SparseParity(d)
    support = task.supports(0, seeds)
    model = QueryHeads.sample(0, seeds, d, m, attention=name)
    return model, population_objective(model, task, support), initial_queries(0, seeds, 2, m)


@pytest.mark.parametrize("name", ["softmax", "normalized-erf"])
def test_descent_losses_are_the_losses_after_each_step(name: str) -> None:
    _, objective, theta0 = setup(name)
    descent = maps.Descent(objective, theta0, 300.0)
    descent.run_to(2)  # extending a run continues it exactly
    descent.run_to(5)
    theta, before = gradient_descent(objective, theta0, 300.0, 5)
    torch.testing.assert_close(torch.stack(descent.losses[:5]), before, rtol=0, atol=0)
    torch.testing.assert_close(descent.losses[5], objective(theta)[0], rtol=0, atol=0)
    torch.testing.assert_close(descent.theta, theta, rtol=0, atol=0)
    one, _ = gradient_descent(objective, theta0, 300.0, 1)
    torch.testing.assert_close(descent.after_one, one, rtol=0, atol=0)


def test_steps_to_target_per_replica() -> None:
    descent = maps.Descent(lambda t: (t[:, 0, 0], torch.zeros_like(t)), torch.ones(3, 2, 1), 1.0)
    descent.losses = [
        torch.tensor(v, dtype=torch.float64) for v in ([1, 1, 1], [0.5, 1, 1], [0, 1, 0.001])
    ]
    assert descent.steps_to(0.01) == [2, None, 2]
    assert descent.steps_to(0.6) == [1, None, 2]


def test_a_diverging_eta_is_recorded_and_never_chosen() -> None:
    config = maps.Config(d=16, m=8, seeds=3, maps=["linear"], budget=30, eta_exponents=[0.0, 12.0])
    (rec,) = maps.run(config)
    huge = next(p for p in rec["curve"] if p["exponent"] == 12.0)
    assert huge["diverged"] and huge["diverged_at"] is not None and huge["median_loss"] is None
    assert rec["best"]["exponent"] == 0.0


def test_screen_then_refine_runs_the_budget_only_at_the_best_ranked() -> None:
    base = dict(d=16, m=8, seeds=3, maps=["softmax"], budget=12, eta_exponents=[1.0, 3.0, 5.0])
    (screened,) = maps.run(maps.Config(**base, screen_steps=4, refine=1))
    (everything,) = maps.run(maps.Config(**base, screen_steps=None))
    horizons = sorted(p["horizon"] for p in screened["curve"])
    assert horizons == [4, 4, 12]
    refined = next(p for p in screened["curve"] if p["horizon"] == 12)
    same = next(p for p in everything["curve"] if p["exponent"] == refined["exponent"])
    assert refined == same  # continuing from the screen is the same descent
    assert screened["best"]["exponent"] == refined["exponent"]
