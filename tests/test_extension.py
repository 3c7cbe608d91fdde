"""An experiment registered from outside attnsep's own modules (``base.register``, as in the
tutorial "Add your own claim") is listed and run by the API like a built-in one, inline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import Field

import attnsep
from attnsep import api
from attnsep.experiments import MODULES, built_in, catalog, load_all, unregister
from attnsep.experiments.base import REGISTRY, Experiment, ExperimentConfig, Positive, register
from attnsep.metrics import stats

NAME = "toy-extension"


class ToyConfig(ExperimentConfig):
    """Counts to ``n``; reproduced when the count reaches ``target``."""

    n_values: list[Positive] = Field(default=[2, 3], min_length=1)
    target: int = 3


def split(config: ToyConfig) -> list[ToyConfig]:
    return [config.model_copy(update={"n_values": [n]}) for n in config.n_values]


def run(config: ToyConfig) -> list[dict]:
    return [{"n": n, "count": n + config.seed} for n in config.n_values]


def verdict(records: list[dict], config: ToyConfig) -> dict:
    top = max(r["count"] for r in records)
    outcome = stats.REPRODUCED if top >= config.target else stats.NOT_REPRODUCED
    return stats.claim(outcome, f"the count reached {top}", f"counts {top}", "count >= target", [])


def figure(records: list[dict], config: ToyConfig, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    path = out / "toy.txt"
    path.write_text(json.dumps(records))
    return [path]


@pytest.fixture
def toy():
    experiment = register(
        Experiment(
            name=NAME,
            claim="X9",
            title="A toy claim",
            paper="Counting reaches the target.",
            config_type=ToyConfig,
            run=run,
            figure=figure,
            verdict=verdict,
            split=split,
            presets={"quick": {}, "standard": {"n_values": [2, 3, 4]}},
            work=lambda c: float(sum(c["n_values"])),
            section="my claims",
        )
    )
    try:
        yield experiment
    finally:
        if NAME in REGISTRY:
            unregister(NAME)


def test_a_registered_experiment_is_listed(toy) -> None:
    names = [item["name"] for item in catalog()]
    assert names[-1] == NAME and len(names) == len(MODULES) + 1
    frame = attnsep.list_experiments()
    row = frame[frame["name"] == NAME].iloc[0]
    assert (row["claim"], row["title"]) == ("X9", "A toy claim")


def test_run_experiment_and_sweep_run_it_inline(toy, tmp_path) -> None:
    store = tmp_path / "runs.sqlite"
    result = attnsep.run_experiment(NAME, store=store, executor="inline")
    assert result.verdict == "reproduced" and result.computed == 2
    assert sorted(r["count"] for r in result.records) == [2, 3]
    failing = attnsep.run_experiment(NAME, config={"target": 9}, store=store, executor="inline")
    assert failing.verdict == "not reproduced" and failing.outcome["reason"] == (
        "the count reached 3"
    )
    swept = attnsep.sweep(NAME, {"n_values": [[5], [6]]}, store=store, executor="inline")
    assert swept.computed == 2 and len(swept.rows) == 2


def test_reproduce_only_it_writes_its_claim(toy, tmp_path) -> None:
    store, out = tmp_path / "runs.sqlite", tmp_path / "report"
    done = api.reproduce("quick", names=[NAME], executor="inline", out=out, store=store)
    assert done.names == (NAME,) and done.failed == 0 and done.computed == 2
    ((claim,),) = [done.claims]
    assert (claim["claim"], claim["verdict"], claim["section"]) == ("X9", "reproduced", "my claims")
    assert claim["figures"] == ["figures/toy.txt"] and (out / "figures" / "toy.txt").exists()
    written = json.loads((out / "claims.json").read_text())["claims"]
    assert [c["name"] for c in written] == [NAME] and (out / "index.html").exists()
    again = api.reproduce("quick", names=[NAME], executor="inline", out=out, store=store)
    assert again.cached == 2 and again.computed == 0
    plan = api.reproduce_plan("quick", names=[NAME], executor="inline", store=store, calibration=0)
    assert [e.name for e in plan.experiments] == [NAME] and plan.to_run == []


def test_it_is_gone_once_unregistered(toy, tmp_path) -> None:
    unregister(NAME)
    assert NAME not in [item["name"] for item in catalog()]
    with pytest.raises(ValueError, match="experiment must be one of"):
        attnsep.run_experiment(NAME, store=tmp_path / "runs.sqlite", executor="inline")
    with pytest.raises(ValueError, match="experiment must be one of"):
        api.reproduce("quick", names=[NAME], executor="inline", out=tmp_path, store=tmp_path / "s")


def test_a_built_in_experiment_cannot_be_unregistered() -> None:
    load_all()
    with pytest.raises(ValueError, match="is built in"):
        unregister(built_in()[0]["name"])


def test_process_workers_do_not_know_it(toy, tmp_path) -> None:
    """A ``process`` worker starts a fresh interpreter that loads only the built-in modules
    (not this test module): the run stops with a one-line error naming the way out."""
    from attnsep.engine.executors import ProcessExecutor

    with pytest.raises(ValueError, match=f"got '{NAME}'.*run it inline"):
        attnsep.run_experiment(
            NAME, config={"n_values": [2]}, store=tmp_path / "s.sqlite", executor=ProcessExecutor(1)
        )
