"""Resource guards: a run priced before it allocates; refused with one line, or forced."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import attnsep
from attnsep.configs import OneStepConfig, SelectionFCNConfig, SelectionTrainConfig
from attnsep.core import resources
from attnsep.train.memory import fcn_peak, one_step_peak, selection_peak

OVERSIZED = [
    ("--d", "100000000000", "--m", "100000", "--seeds", "100000"),  # memory: terabytes
    ("--d", "3000000", "--m", "2000", "--seeds", "64"),  # time: hours, V streamed
]


@pytest.mark.parametrize("args", OVERSIZED)
def test_oversized_one_step_exits_2_with_one_line_before_loading_torch(args) -> None:
    code = (
        "import sys\nfrom attnsep.cli import main\n"
        f"try:\n    main(['xor', 'one-step', *{list(args)!r}])\n"
        "except SystemExit as done:\n    print(done.code, 'torch' in sys.modules)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.stdout == "2 False\n"  # refused before torch (and any array) is loaded
    assert run.stderr.startswith("error: one step at d=") and run.stderr.count("\n") == 1
    assert "--force" in run.stderr and "lower seeds, m or d" in run.stderr


def test_the_memory_guard_names_the_estimate_and_force_runs_anyway(monkeypatch) -> None:
    monkeypatch.setattr(resources, "available_memory", lambda: 10 * 2**20)  # 10 MB
    with pytest.raises(ValueError, match=r"needs about .* of memory, 10.5 MB is available"):
        attnsep.xor_one_step(d=16, m=4, seeds=2)
    with pytest.raises(ValueError, match="lower seeds, steps, batch, T, pe_dim, eval lengths or"):
        attnsep.train_selector(8, 2, seeds=1, steps=2)
    with pytest.raises(ValueError, match="lower seeds, width, steps or batch"):
        attnsep.train_fcn("xor", d=8, width=4, steps=2)
    assert attnsep.xor_one_step(d=16, m=4, seeds=2, force=True).raw.loss_after.shape == (2,)


def test_the_time_guard_uses_the_plans_price(monkeypatch) -> None:
    from attnsep.engine import published

    monkeypatch.setattr(published, "price", lambda experiment, config: 7200.0)
    with pytest.raises(ValueError, match=r"priced at about 2 h here, over the 1 h"):
        attnsep.xor_one_step(d=16, m=4, seeds=2)
    monkeypatch.setattr(published, "price", lambda experiment, config: 60.0)
    attnsep.xor_one_step(d=16, m=4, seeds=2)


def test_peak_memory_grows_with_each_knob() -> None:
    one = OneStepConfig(d=1000, m=16, seeds=8)
    for bigger in ({"d": 4000}, {"m": 64}, {"seeds": 64}, {"samples": 1000}):
        assert one_step_peak(OneStepConfig(**{**one.model_dump(), **bigger})) > one_step_peak(one)
    assert one_step_peak(one, keep_embeddings=True) > one_step_peak(one)
    base = SelectionTrainConfig()
    assert selection_peak(SelectionTrainConfig(batch=2 * base.batch)) > selection_peak(base)
    fcn = SelectionFCNConfig()
    assert fcn_peak(SelectionFCNConfig(width=2 * fcn.width)) > fcn_peak(fcn)
    assert fcn_peak(SelectionFCNConfig(dtype="float32")) == pytest.approx(fcn_peak(fcn) / 2)


def test_words_for_sizes_and_durations() -> None:
    assert resources.size(1.6e13) == "16 TB" and resources.size(5e8) == "500 MB"
    assert resources.duration(22000) == "6.11 h" and resources.duration(90) == "1.5 min"


def test_a_run_priced_above_the_limit_says_so_as_it_starts(monkeypatch, tmp_path, capsys) -> None:
    """Sweeps and reproductions are resumable: a long one runs, with one ``note:`` line."""
    from attnsep.cli import main
    from attnsep.engine import sweep

    monkeypatch.setattr(sweep, "LONG_COMMAND", 0.0)  # every priced run is "long"
    with pytest.warns(sweep.LongRun, match=r"priced at about .* on 1 inline workers \(2 jobs\)"):
        attnsep.sweep("one-step", {"d_values": [[16]]}, fixed={"seeds": 2}, store=tmp_path / "a")
    with pytest.raises(SystemExit) as done:
        main(["sweep", "one-step", "--set", "d_values=[24]", "--set", "seeds=2", "--quiet",
              "--executor", "inline", "--store", str(tmp_path / "b")])  # fmt: skip
    assert done.value.code == 0
    (note,) = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note:")]
    assert "can be stopped and resumed by the same command" in note


def test_a_sweep_whose_largest_job_cannot_fit_is_refused_before_a_store_exists(
    monkeypatch, tmp_path
) -> None:
    """Its experiment's ``peak``: one-step's is its largest step's, fcn-selection's its widest
    FCN's; a Ray cluster's machines are not checked against this one."""
    from attnsep.engine.executors import make_executor
    from attnsep.engine.jobs import Job
    from attnsep.engine.memory import check_memory
    from attnsep.experiments import base

    free = resources.BASELINE_BYTES + 100 * 2**20  # 100 MB besides the process's own
    monkeypatch.setattr(resources, "available_memory", lambda: free)
    store = tmp_path / "s.sqlite"
    small = {"d_values": [16], "m_values": [4], "seeds": 2, "series": ["fixed"]}
    big = {**small, "d_values": [16, 2**20], "m_values": [4, 64]}  # largest: a kept stream
    with pytest.raises(ValueError, match=r"^a one-step job needs about 1.31 GB of memory, 642 MB"):
        attnsep.sweep("one-step", fixed=big, store=store, executor="inline")
    assert not store.exists()
    attnsep.sweep("one-step", fixed=small, store=store, executor="inline")  # ~1 MB: runs
    job = base.get("one-step").config("quick", **big).model_dump(mode="json")
    largest = max(one_step_peak(OneStepConfig(d=2**20, m=m, seeds=2)) for m in (4, 64))
    assert base.get("one-step").peak(job) == largest
    ray = make_executor("ray")  # its jobs run on the cluster's machines; none is contacted
    check_memory([Job("one-step", job)], ray, "sizes")  # not this machine: no check
    fcn = base.get("fcn-selection").config(
        "quick", settings=[[16, 4, 2]], width_fractions=[0.5, 2], kinds=["fcn"]
    )
    widest = SelectionFCNConfig(d=4, T=16, q=2, width=128, seeds=fcn.fcn_replicas, steps=1)
    assert base.get("fcn-selection").peak(fcn.model_dump(mode="json")) == fcn_peak(widest)


def test_training_is_priced_by_its_own_work() -> None:
    """The selector's and the FCN's training are priced from their work count by the cost
    model of the experiment that times the same loop: above the per-step floor, growing with
    the steps (all but the model's fixed floor in proportion), and a long run is refused before
    it starts."""
    from attnsep.api.fcn import _fcn_seconds
    from attnsep.api.selection import _selector_seconds
    from attnsep.configs import SelectionTrainConfig, XorFCNConfig
    from attnsep.core.resources import STEP_SECONDS

    short = SelectionTrainConfig(d=8, T=64, q=4, pe_dim=64, steps=1000, batch=256, seeds=8)
    long = short.model_copy(update={"steps": 4000})
    assert _selector_seconds(short) > 10 * short.steps * STEP_SECONDS
    assert 3 < _selector_seconds(long) / _selector_seconds(short) <= 4
    fcn = XorFCNConfig(d=64, width=256, seeds=8, steps=1000)
    assert _fcn_seconds(fcn) > 10 * fcn.steps * STEP_SECONDS
    with pytest.raises(ValueError, match=r"selector training .* priced at about"):
        attnsep.train_selector(64, 4, 64, d=8, seeds=64, steps=200_000, batch=256)


@pytest.mark.parametrize(
    "args",
    [
        ["xor", "train", "--d", "8", "--m", "4", "--seeds", "2", "--steps", "2", "--quiet"],
        ["xor", "train-v1", "--n", "6", "--k", "2", "--seeds", "2", "--epochs", "2", "--quiet"],
    ],
)
def test_a_training_command_refused_by_the_guard_runs_with_force(monkeypatch, capsys, args):
    from attnsep.cli import main

    monkeypatch.setattr(resources, "available_memory", lambda: 10 * 2**20)  # 10 MB
    with pytest.raises(SystemExit) as refused:
        main(args)
    err = capsys.readouterr().err
    assert refused.value.code == 2 and err.count("\n") == 1 and "pass --force" in err
    with pytest.raises(SystemExit) as forced:
        main([*args, "--force", "--json"])
    assert forced.value.code == 0 and json.loads(capsys.readouterr().out)["seeds"] == 2
