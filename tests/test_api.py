"""The public API (``attnsep.api``): lazy import, the commands' numbers, result shapes, engine."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import attnsep
from attnsep.train.one_step import OneStepConfig, run_one_step
from attnsep.train.xor_train import XorTrainConfig, train_xor
from cli_support import attnsep as cli

TINY = {"d_values": [16, 32], "m_values": [4], "seeds": 4, "series": ["fixed"]}


def test_import_is_lazy_and_torch_free() -> None:
    code = (
        "import sys, attnsep; "
        "print(sorted(m for m in ('torch', 'numpy', 'pandas', 'attnsep.api') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_api_leaves_the_matplotlib_backend_alone() -> None:
    """A notebook's figures keep showing after the experiments are loaded."""
    code = (
        "import matplotlib; matplotlib.use('svg'); import attnsep; "
        "attnsep.list_experiments(); print(matplotlib.get_backend())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "svg", "loading the experiments changed matplotlib's backend"


def test_every_public_name_resolves() -> None:
    for name in attnsep.__all__:
        assert getattr(attnsep, name) is not None, name
    assert set(attnsep.__all__) <= set(dir(attnsep))
    with pytest.raises(AttributeError, match="no_such_name"):
        attnsep.no_such_name  # noqa: B018


def test_xor_one_step_is_the_library_step_and_the_command() -> None:
    step = attnsep.xor_one_step(d=32, m=8, seeds=6, seed=3, keep_embeddings=True)
    direct = run_one_step(OneStepConfig(d=32, m=8, seeds=6, seed=3))
    for name in ("support", "loss_after", "certified_error", "mass_after", "theta_after"):
        np.testing.assert_array_equal(getattr(step.raw, name), getattr(direct, name))
    code, out, err = cli(
        "xor", "one-step", "--d", "32", "--m", "8", "--seeds", "6", "--seed", "3", "--json"
    )
    assert code == 0, err
    command = json.loads(out)
    summary = step.summary()
    assert summary["success_rate"] == command["success_rate"]
    assert summary["loss_after_mean"] == command["loss_after"]["mean"]
    assert summary["certified_error_max"] == command["certified_error"]["max"]
    assert "supports" not in summary and not any(isinstance(v, dict) for v in summary.values())
    frame = step.to_frame()
    assert frame.shape[0] == 6
    assert {"support_0", "support_1", "loss_after", "success", "mass_h0", "mass_h1"} <= set(frame)
    np.testing.assert_array_equal(frame["certified_error"], command["certified_error"]["values"])
    gamma = step.attention()
    assert gamma.shape == (6, 2, 32)
    np.testing.assert_allclose(gamma.sum(axis=-1), 1.0, rtol=1e-12)  # softmax rows
    # each head's weight on its assigned support bit, read off the maps, is the stored mass
    for e, (i, j) in enumerate(step.raw.support):
        assert sorted(gamma[e, :, [i, j]].max(axis=1)) == pytest.approx(
            sorted(step.raw.mass_after[e]), abs=1e-12
        )
    with pytest.raises(ValueError, match="keep_embeddings"):
        attnsep.xor_one_step(d=16, m=4, seeds=2).attention()


def test_train_selector_matches_the_command() -> None:
    args = ["--d", "3", "--T", "6", "--q", "2", "--pe-dim", "8", "--steps", "30", "--batch", "16"]
    code, out, err = cli(
        "select", "train", *args, "--seeds", "2", "--eval-lengths", "6,12", "--json"
    )
    assert code == 0, err
    command = json.loads(out)
    run = attnsep.train_selector(
        T=6, q=2, pe_dim=8, d=3, seeds=2, steps=30, batch=16, eval_lengths=[12]
    )
    for row, ev in zip(command["eval"], run.evals, strict=True):
        assert row["T"] == ev.length
        assert row["per_replica"]["loss"] == ev.loss.tolist()
    frame = run.to_frame()
    assert frame.shape[0] == 2 * 2 and sorted(set(frame["T_eval"])) == [6, 12]
    summary = run.summary()
    assert summary["loss_T12"] == pytest.approx(command["eval"][1]["loss"], rel=1e-12)
    assert run.curve().shape == (30 * 2, 3)
    fixed = attnsep.train_selector(T=6, q=2, pe_dim=8, d=3, pe="fixed", steps=5, eval_lengths=[24])
    assert fixed.config.fixed_positions == 24 and fixed.to_frame().shape[0] == 2


def test_train_fcn_reports_what_the_commands_print() -> None:
    code, out, err = cli(
        "fcn", "xor", "--d", "8", "--width", "4", "--seeds", "2", "--steps", "20", "--json"
    )
    assert code == 0, err
    run = attnsep.train_fcn("xor", d=8, width=4, seeds=2, steps=20)
    assert json.loads(json.dumps(run.report())) == json.loads(out)
    assert run.to_frame().shape[0] == 2 and "test_error_mean" in run.summary()
    code, out, err = cli(
        "fcn", "select", "--d", "2", "--T", "4", "--q", "2", "--width", "3", "--seeds", "2",
        "--steps", "20", "--json",
    )  # fmt: skip
    assert code == 0, err
    run = attnsep.train_fcn("select", d=2, T=4, q=2, width=3, seeds=2, steps=20)
    assert json.loads(json.dumps(run.report())) == json.loads(out)
    frame = run.to_frame()
    assert list(frame["loss"]) == json.loads(out)["loss"]["values"]


def test_xor_train_is_the_training_library() -> None:
    run = attnsep.xor_train(d=8, m=4, seeds=2, steps=5)
    direct = train_xor(XorTrainConfig(d=8, m=4, seeds=2, steps=5))
    np.testing.assert_array_equal(run.raw.population_loss, direct.population_loss)
    assert run.to_frame().shape[0] == 2 * (5 + 1)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: attnsep.xor_one_step(d=16, bogus=1), "unknown field 'bogus'; allowed: d, m,"),
        (lambda: attnsep.train_selector(T=6, q=2, m_p=8), "unknown field 'm_p'"),
        (
            lambda: attnsep.train_selector(T=6, q=2, pe="fixed", fixed_positions=30),
            "'fixed_positions' is set by this function",
        ),
        (lambda: attnsep.train_selector(T=6, q=2, eval_lengths=[1]), "eval length"),
        (lambda: attnsep.train_fcn("cnn"), "task must be one of"),
        (lambda: attnsep.run_experiment("no-such"), "experiment must be one of"),
        (lambda: attnsep.run_experiment("one-step", preset="huge"), "preset"),
        (lambda: attnsep.run_experiment("one-step", config={"seeds": 0}), "seeds"),
        (lambda: attnsep.sweep("one-step", grid={"seeds": []}), "seeds"),
    ],
)
def test_bad_input_is_one_line(call, message: str) -> None:
    with pytest.raises(ValueError, match=message) as err:
        call()
    assert "\n" not in str(err.value)


def test_load_runs_of_a_missing_store_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        attnsep.load_runs(tmp_path / "none.sqlite")
    assert list(tmp_path.iterdir()) == []


def test_run_experiment_and_sweep_share_the_engine(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    first = attnsep.run_experiment("one-step", config=TINY, store=store)
    assert (first.computed, first.cached) == (2, 0)
    assert first.verdict in ("reproduced", "not reproduced", "inconclusive")
    assert first.summary()["claim"] == "A7.1" and len(first.records) == 2
    again = attnsep.run_experiment("one-step", config=TINY, store=store)
    assert (again.computed, again.cached) == (0, 2) and again.records == first.records
    stored = attnsep.load_runs(store, "one-step")  # in the order the jobs finished (longest first)

    def by_job(frame: pd.DataFrame) -> pd.DataFrame:
        return frame.sort_values("job_id", kind="stable").reset_index(drop=True)

    pd.testing.assert_frame_equal(by_job(first.to_frame()), by_job(stored))
    # the same points as a sweep: the same jobs (hashes), all served from the store
    fixed = {key: value for key, value in TINY.items() if key != "d_values"}
    grid = {"d_values": [[16], [32]]}
    swept = attnsep.sweep("one-step", grid, fixed=fixed, store=store)
    assert swept.summary()["configs"] == 2 and (swept.computed, swept.cached) == (0, 2)
    code, out, err = cli(
        "sweep", "one-step", "--grid", "d_values=[[16],[32]]",
        *[f"--set={key}={json.dumps(value)}" for key, value in fixed.items()],
        "--executor", "inline", "--store", str(store), "--json",
    )  # fmt: skip
    assert code == 0, err
    assert list(swept.job_hashes) == json.loads(out)["job_hashes"]
    assert json.loads(out)["cached"] == 2
    assert swept.to_frame().shape == first.to_frame().shape
    paths = first.figures(tmp_path / "figures")
    assert paths and all(p.exists() for p in paths)


def test_a_failed_job_makes_the_verdict_incomplete(tmp_path: Path, monkeypatch) -> None:
    from attnsep.experiments import base

    def broken(config):
        raise RuntimeError("no records today")

    experiment = base.get("one-step")
    monkeypatch.setitem(base.REGISTRY, "one-step", dataclasses.replace(experiment, run=broken))
    result = attnsep.run_experiment("one-step", config=TINY, store=tmp_path / "runs.sqlite")
    summary = result.summary()
    assert result.verdict == "incomplete" and summary["failed"] == 2
    assert "RuntimeError: no records today" in summary["reason"]
    assert result.records == [] and result.to_frame().empty
    with pytest.raises(ValueError, match="no finished job"):
        result.figures(tmp_path / "figures")
