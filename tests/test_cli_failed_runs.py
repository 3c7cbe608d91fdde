"""A run that fails (a dead worker, a dead calibration) is one ``error:`` line and exit code 1,
written by ``cli.main`` alone (DESIGN.md: one line per error); a failed job is its own ``job
failed`` line and exit code 1, the other jobs stored; any other exception is a bug and keeps its
traceback. A progress bar (``common.steps_bar``) is taken away by a failure."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import sqlite3

import pytest

from attnsep import api
from attnsep.engine.calibration import CalibrationFailed
from attnsep.engine.executors import WorkerDied
from attnsep.experiments import base
from engine_support import TINY, attnsep


def raising(error: BaseException):
    def call(*args, **kwargs):
        raise error

    return call


@pytest.mark.parametrize(
    "function, args, error",
    [
        ("sweep_plan", ["--plan"], CalibrationFailed("the calibration process died")),
        ("reproduce_plan", ["--plan"], CalibrationFailed("the calibration process died")),
        ("sweep", [], WorkerDied(3)),
        ("reproduce", [], WorkerDied(3)),
    ],
)
def test_a_failed_run_is_one_error_line_and_exit_code_1(
    monkeypatch, tmp_path, function, args, error
):
    monkeypatch.setattr(api, function, raising(error))
    command = ["sweep", "one-step"] if function.startswith("sweep") else ["reproduce"]
    code, out, err = attnsep(*command, *args, "--store", str(tmp_path / "s.sqlite"))
    assert (code, out) == (1, "")
    assert err.splitlines() == [f"error: {error}"]
    assert not (tmp_path / "s.sqlite").exists()


def test_a_failed_job_is_its_line_and_exit_code_1_and_the_other_jobs_are_stored(
    monkeypatch, tmp_path
):
    experiment = base.get("one-step")

    def failing(config):
        if config.d_values == [32]:
            raise RuntimeError("this job fails")
        return experiment.run(config)

    monkeypatch.setitem(base.REGISTRY, "one-step", dataclasses.replace(experiment, run=failing))
    store = tmp_path / "s.sqlite"
    sets = [f"--set={key}={json.dumps(value)}" for key, value in TINY.items()]  # d = 16 and 32
    code, out, err = attnsep(
        "sweep", "one-step", *sets, "--executor", "inline", "--store", str(store)
    )
    assert code == 1
    failed = [line for line in err.splitlines() if line.startswith("job failed")]
    assert failed == ["job failed one-step RuntimeError: this job fails"], err
    assert "error:" not in err
    with contextlib.closing(sqlite3.connect(store)) as db:
        rows = db.execute("select status, error from jobs order by status").fetchall()
    assert [status for status, _ in rows] == ["done", "failed"]
    assert "this job fails" in rows[1][1]


def test_another_error_is_not_taken_for_a_failed_run(monkeypatch, tmp_path):
    monkeypatch.setattr(api, "sweep", raising(RuntimeError("a bug")))
    with pytest.raises(RuntimeError, match="a bug"):
        attnsep("sweep", "one-step", "--store", str(tmp_path / "s.sqlite"))


def bar_output(started: bool, fails: bool, quiet: bool) -> str:
    """What ``common.steps_bar`` leaves on stderr (not a terminal)."""
    from attnsep.cli.common import steps_bar

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.suppress(ValueError):
        with steps_bar("jobs", quiet) as progress:
            if started:
                progress(0, 3, " (1 from the store)")
                progress(None)
                progress(2)
            if fails:
                raise ValueError("bad")
    return err.getvalue()


def test_a_progress_bar_is_shown_once_and_a_failure_leaves_its_error_line_alone():
    finished = bar_output(started=True, fails=False, quiet=False)
    assert finished.startswith("jobs (1 from the store) ") and "2/3" in finished
    assert finished.count("\n") == 1
    assert bar_output(started=True, fails=True, quiet=False) == ""  # the bar is taken away
    for started, fails in [(False, False), (False, True)]:  # no bar before the first step
        assert bar_output(started, fails, quiet=False) == ""
    for started, fails in [(True, False), (True, True)]:
        assert bar_output(started, fails, quiet=True) == ""
