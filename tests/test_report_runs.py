"""The report's Part E parts: a master seed per run, exploratory vs confirmatory verdicts, the
criterion's pre-registered calibration beside each verdict, and companion entries (SPEC Part
E)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from attnsep.engine.store import Store
from attnsep.engine.sweep import run_sweep
from attnsep.experiments import base, load_all, preregistered
from attnsep.metrics import calibration, stats
from attnsep.report.claims import build_claims, planned_jobs
from attnsep.report.html import write_report
from attnsep.report.preregistration import preregister

NAME = "coin-claim"


class CoinConfig(base.ExperimentConfig):
    """Flips ``seeds`` coins of bias 0.9. Criterion: reproduced when the Wilson lower bound of
    the heads rate is >= 0.6, not reproduced when its upper bound is < 0.6."""

    seeds: int = 64


def run(config: CoinConfig) -> list[dict]:
    rng = np.random.default_rng(config.seed)
    return [{"heads": int(h)} for h in rng.random(config.seeds) < 0.9]


def verdict(records: list[dict], config: CoinConfig) -> dict:
    heads = sum(r["heads"] for r in records)
    low, high = stats.wilson(heads, len(records))
    outcome = (
        stats.REPRODUCED
        if low >= 0.6
        else stats.NOT_REPRODUCED
        if high < 0.6
        else stats.INCONCLUSIVE
    )
    side = stats.claim(stats.FINDING, "tails seen", "tails counted", "none", [])
    side.update(claim="X1b", title="Tails", paper="-", section="beyond the papers")
    return stats.claim(
        outcome, "heads rate", f"{heads} heads", "Wilson bound vs 0.6", [], companions=[side]
    )


def coins(bias: float):
    def draw(config: CoinConfig, rng: np.random.Generator) -> list[dict]:
        return [{"heads": int(h)} for h in rng.random(config.seeds) < bias]

    return draw


def hypotheses(records: list[dict], config: CoinConfig) -> calibration.Hypotheses:
    return calibration.Hypotheses(coins(0.9), coins(0.5), "bias 0.9", "bias 0.5", "binomial")


@pytest.fixture
def coin(monkeypatch, tmp_path):
    """The coin experiment, registered, with its error rates pre-registered into a folder of
    its own (``preregistered.FOLDER``) by :func:`register`."""
    monkeypatch.setattr(preregistered, "FOLDER", tmp_path / "calibrations")
    (tmp_path / "calibrations").mkdir()
    exp = base.Experiment(
        name=NAME,
        claim="X1",
        companions=("X1b",),
        title="Coins land heads",
        paper="Coins land heads most of the time.",
        config_type=CoinConfig,
        run=run,
        figure=lambda records, config, out: [],
        verdict=verdict,
        presets={"quick": {"seeds": 64}},
        hypotheses=hypotheses,
        criterion_version=2,
    )
    load_all()
    monkeypatch.setitem(base.REGISTRY, NAME, exp)
    return exp


def register(store: Store, seed: int = 0) -> None:
    """Pre-register the coin experiment's error rates from its quick run on ``seed``."""
    preregister("quick", [NAME], seed=seed, store=store.path, executor="inline")


def judged(store: Store, out: Path, seed: int | None, seeds_run=()) -> list[dict]:
    run_sweep(planned_jobs([NAME], "quick", seed)[NAME], store, "inline")
    return build_claims(store, [NAME], "quick", out, seed, seeds_run=seeds_run)


def test_a_seed_makes_new_jobs_and_none_keeps_the_presets(coin):
    keep = planned_jobs([NAME], "quick")[NAME]
    assert [j.key for j in keep] == [j.key for j in planned_jobs([NAME], "quick", None)[NAME]]
    fresh = planned_jobs([NAME], "quick", 1)[NAME]
    assert {j.key for j in fresh}.isdisjoint(j.key for j in keep)
    assert fresh[0].config["seed"] == 1


def test_claims_carry_calibration_runs_and_companions(coin, tmp_path):
    store = Store(tmp_path / "s.sqlite")
    register(store)
    exploratory = judged(store, tmp_path / "r0", None)
    main, side = exploratory
    assert main["run"] == "exploratory" and main["seed"] == 0 and main["runs"] == []
    assert main["criterion_version"] == 2 and main["verdict"] == stats.REPRODUCED
    cal = main["calibration"]
    assert cal["power"] >= 0.9 and cal["false_pass"] <= 0.05 and cal["meets"]
    assert cal["paper_law"] == "bias 0.9" and cal["rival_law"] == "bias 0.5"
    assert cal["source"] == {"preset": "quick", "seed": 0, "run": "exploratory", **version(2)}
    assert side["claim"] == "X1b" and side["verdict"] == stats.FINDING
    assert side["section"] == "beyond the papers" and side["calibration"] is None
    assert side["name"] == f"{NAME}-x1b" and side["seed"] == 0

    confirmatory = judged(store, tmp_path / "r1", 1, seeds_run=[0, 1])
    main = confirmatory[0]
    assert main["run"] == "confirmatory" and main["seed"] == 1
    assert main["runs"] == [{"seed": 0, "run": "exploratory", "verdict": stats.REPRODUCED}]
    assert "--seed 1" in main["command"]

    index, table = write_report(confirmatory, "quick", tmp_path / "r1")
    page = index.read_text()
    assert "exploratory (seed 0): reproduced" in page and "Error rates" in page
    assert json.loads(table.read_text())["claims"][0]["calibration"]["simulations"] > 0
    store.close()


def test_a_criterion_below_the_goals_says_so_in_its_reason(coin, tmp_path, monkeypatch):
    weak = calibration.Hypotheses(coins(0.62), coins(0.58), "bias 0.62", "bias 0.58", "binomial")
    replaced = dataclasses.replace(coin, hypotheses=lambda records, config: weak)
    monkeypatch.setitem(base.REGISTRY, NAME, replaced)
    store = Store(tmp_path / "s.sqlite")
    register(store)
    main = judged(store, tmp_path / "r", None)[0]
    cal = main["calibration"]
    assert not cal["meets"] and "below the goals" in main["reason"]
    assert [t["config"] for t in cal["tried"]][:2] == ["2x the seeds", "4x the seeds"]
    store.close()


def version(n: int) -> dict:
    return {"criterion_version": n}


def test_a_run_reads_its_error_rates_and_never_fits_them(coin, tmp_path, monkeypatch):
    store = Store(tmp_path / "s.sqlite")
    register(store)
    stored = preregistered.load(NAME)["quick"]
    assert stored["source"]["seed"] == 0 and stored["config"] == {"seeds": 64}

    def refuse(*args):
        raise AssertionError("a judged run must not fit its error rates")

    monkeypatch.setitem(base.REGISTRY, NAME, dataclasses.replace(coin, hypotheses=refuse))
    first = judged(store, tmp_path / "a", 1)[0]["calibration"]
    again = judged(store, tmp_path / "b", 1)[0]["calibration"]
    assert json.dumps(first, sort_keys=True) == json.dumps(again, sort_keys=True)
    assert first == stored["entries"]["X1"]
    store.close()


def test_without_pre_registered_rates_a_claim_says_why(coin, tmp_path, monkeypatch):
    store = Store(tmp_path / "s.sqlite")
    main = judged(store, tmp_path / "r", None)[0]
    assert main["calibration"] is None
    assert "no error rates are pre-registered for coin-claim at the quick preset" in main["reason"]
    register(store)
    newer = dataclasses.replace(coin, criterion_version=3)
    monkeypatch.setitem(base.REGISTRY, NAME, newer)
    main = judged(store, tmp_path / "s", None)[0]
    assert main["calibration"] is None and "belong to criterion version 2, not 3" in main["reason"]
    store.close()


def test_a_confirmatory_seed_is_refused_before_anything_runs(coin, tmp_path):
    store = Store(tmp_path / "s.sqlite")
    with pytest.raises(ValueError, match=f"seed 1 is confirmatory for {NAME}; pre-register"):
        register(store, seed=1)  # the coin criterion was written on seed 0 only
    assert store.rows(NAME) == [] and preregistered.load(NAME) == {}
    store.close()


def test_redrawn_parameters_widen_the_rates(coin):
    """A law fitted to a run redraws its parameter per simulated run (``redrawable``): with a
    coin whose fitted bias sits at the criterion's edge, the power moves towards 1/2."""

    def fitted(records: list[dict], config: CoinConfig) -> calibration.Hypotheses:
        bias = sum(r["heads"] for r in records) / len(records)
        return calibration.Hypotheses(coins(bias), coins(0.5), f"bias {bias}", "0.5", "binomial")

    records = [{"heads": int(i < 48)} for i in range(64)]  # 0.75: Wilson low ~0.63 >= 0.6
    fixed = fitted(records, CoinConfig())
    redrawn = calibration.redrawable(fitted, records, CoinConfig())
    assert redrawn.refit is not None and "redraws the fitted parameters" in redrawn.noise
    draws = [redrawn.redraw(np.random.default_rng(s), []).paper_law for s in range(20)]
    assert len(set(draws)) > 5  # the bias varies from draw to draw
    rates = [
        calibration.calibrate(verdict, laws, CoinConfig(), simulations=400)["power"]
        for laws in (fixed, redrawn)
    ]
    assert rates[1] < rates[0]


def test_more_seeds_scales_every_seed_count():
    class Counts(base.ExperimentConfig):
        seeds: int = 8
        seeds_by_d: dict[int, int] = {64: 16}
        steps: int = 100

    assert base.more_seeds(Counts(), 4) == {"seeds": 32, "seeds_by_d": {64: 64}}
    assert base.more_seeds(CoinConfig(), 2) == {"seeds": 128}


def test_experiments_judged_side_by_side_give_the_same_claims(tmp_path):
    """``workers=2`` judges each experiment in a fresh process reading the store: the claims
    (verdicts, estimates, error rates, figures) are those of the one-process judging."""
    load_all()
    names = ["head-specialization", "kparity-steps"]
    store = Store(tmp_path / "s.sqlite")
    run_sweep(
        [job for jobs in planned_jobs(names, "quick").values() for job in jobs], store, "inline"
    )
    claims = {}
    for workers in (1, 2):
        out = tmp_path / f"r{workers}"
        out.mkdir()
        claims[workers] = build_claims(store, names, "quick", out, workers=workers)
        assert all((out / f).is_file() for claim in claims[workers] for f in claim["figures"])
    store.close()
    assert [c["name"] for c in claims[2]] == [c["name"] for c in claims[1]]
    assert json.dumps(claims[2], default=str) == json.dumps(claims[1], default=str)
    assert all(c["verdict"] != "incomplete" for c in claims[1])
