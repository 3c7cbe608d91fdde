"""Sweeps killed with SIGKILL resume to the same records; reruns come from the store; two sweeps
can share one store."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import threading
import time

import pytest

from attnsep.engine.jobs import expand_grid, jobs_for
from attnsep.engine.store import Store
from attnsep.engine.sweep import run_sweep
from attnsep.experiments import base
from engine_support import (
    LONG_SET,
    SLOW_FIXED,
    SLOW_SET,
    TINY,
    attnsep,
    peek_done,
    pool_workers,
    raw_rows,
    records_by_hash,
    running,
    spawn,
)

SLOW_JOBS = [
    job for c in expand_grid("one-step", "quick", SLOW_FIXED, {}) for job in jobs_for("one-step", c)
]


REFERENCE: dict[str, object] = {}


def reference(folder) -> dict[str, object]:
    """Records of the slow job set from one uninterrupted inline sweep, per hash (computed once)."""
    if not REFERENCE:
        store = Store(folder / "reference.sqlite")
        outcome = run_sweep(SLOW_JOBS, store, "inline")
        assert (outcome.total, outcome.computed, outcome.failed) == (12, 12, [])
        REFERENCE.update(records_by_hash(store.rows()))
        store.close()
    return REFERENCE


def kill_when_stored(proc, path, rows: int, report: dict) -> None:
    """SIGKILL ``proc``'s whole process group once the store at ``path`` holds ``rows`` rows."""
    deadline = time.monotonic() + 120
    while peek_done(path) < rows:
        if proc.poll() is not None or time.monotonic() > deadline:
            report["error"] = "the sweep ended or stalled before it could be killed"
            return
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)  # the sweep and, for `process`, its workers
    report["killed_at"] = peek_done(path)


@pytest.mark.slow
@pytest.mark.parametrize("executor", ["inline", "process"])
def test_sigkill_mid_sweep_then_rerun_completes_with_the_same_records(tmp_path, executor):
    path = tmp_path / "store.sqlite"
    args = [
        "sweep",
        "one-step",
        *(a for s in SLOW_SET for a in ("--set", s)),
        "--executor",
        executor,
        "--store",
        str(path),
        "--json",
    ]
    proc = spawn(args, tmp_path)
    report: dict = {}
    watcher = threading.Thread(target=kill_when_stored, args=(proc, path, 2, report))
    watcher.start()
    expected = reference(tmp_path)  # the uninterrupted run, on the other core meanwhile
    watcher.join()
    stdout, stderr = proc.communicate(timeout=30)
    assert "error" not in report, (report, stdout, stderr)
    assert proc.returncode == -signal.SIGKILL

    # only whole rows: each one decodes, is done and holds its one record
    rows = raw_rows(path)
    assert 2 <= len(rows) < len(SLOW_JOBS), "kill the sweep between its first and last job"
    assert len({h for h, _, _ in rows}) == len(rows)
    for key, status, records in rows:
        assert status == "done" and key in expected
        assert json.loads(records) == expected[key]
    store = Store(path)  # opens cleanly after the crash
    assert store.done_keys(expected) == {h for h, _, _ in rows}
    store.close()

    rerun = attnsep(*args)  # the same command again (in this process, to save a start-up)
    assert rerun.returncode == 0, rerun.stderr
    summary = rerun.json()
    assert summary["jobs"] == len(SLOW_JOBS)
    assert (summary["cached"], summary["computed"], summary["failed"]) == (
        len(rows),
        len(SLOW_JOBS) - len(rows),
        0,
    )

    store = Store(path)
    final = store.rows()
    store.close()
    assert records_by_hash(final) == expected
    assert all(r["status"] == "done" and r["experiment"] == "one-step" for r in final)

    # a third identical sweep is served from the store (SPEC: stored jobs are never recomputed)
    again = attnsep(*args)
    assert again.returncode == 0, again.stderr
    assert (again.json()["computed"], again.json()["cached"]) == (0, len(SLOW_JOBS))


def test_identical_sweep_computes_nothing_the_second_time(tmp_path, monkeypatch):
    args = [
        "sweep",
        "one-step",
        "--set",
        "seeds=4",
        "--set",
        "m_values=[4]",
        "--set",
        'series=["fixed"]',
        "--grid",
        "d_values=[[16],[32],[16,32]]",
        "--executor",
        "inline",
        "--json",
        "--store",
        str(tmp_path / "s.sqlite"),
    ]
    first = attnsep(*args)
    assert first.returncode == 0, first.stderr
    assert {k: first.json()[k] for k in ("configs", "jobs", "computed", "cached", "failed")} == {
        "configs": 3,
        "jobs": 2,
        "computed": 2,
        "cached": 0,
        "failed": 0,
    }

    def boom(config):
        raise AssertionError("a stored job was recomputed")

    exp = base.get("one-step")
    monkeypatch.setitem(base.REGISTRY, "one-step", dataclasses.replace(exp, run=boom))
    second = attnsep(*args)
    assert second.returncode == 0, second.stderr
    summary = second.json()
    assert (summary["computed"], summary["cached"], summary["jobs"]) == (0, 2, 2)
    assert summary["job_hashes"] == first.json()["job_hashes"]
    store = Store(tmp_path / "s.sqlite")
    assert len(store.rows()) == 2
    store.close()


def test_failed_job_is_stored_and_retried(tmp_path, monkeypatch):
    path = tmp_path / "s.sqlite"
    jobs = [
        job
        for c in expand_grid("one-step", "quick", dict(TINY), {})
        for job in jobs_for("one-step", c)
    ]
    exp = base.get("one-step")
    calls = []

    def flaky(config):
        calls.append(config.d_values[0])
        if config.d_values == [32] and calls.count(32) == 1:
            raise RuntimeError("transient")
        return exp.run(config)

    monkeypatch.setitem(base.REGISTRY, "one-step", dataclasses.replace(exp, run=flaky))
    store = Store(path)
    outcome = run_sweep(jobs, store, "inline")
    assert (outcome.computed, len(outcome.failed)) == (1, 1)
    assert outcome.failed[0]["error"].startswith("RuntimeError: transient")
    assert sorted(r["status"] for r in store.rows()) == ["done", "failed"]
    outcome = run_sweep(jobs, store, "inline")
    assert (outcome.cached, outcome.computed, outcome.failed) == (1, 1, [])
    assert sorted(r["status"] for r in store.rows()) == ["done", "done"]
    assert calls == [32, 16, 32]  # longest first (sweep.longest_first), then the retry
    store.close()


@pytest.mark.slow
def test_two_sweeps_on_one_store_at_once(tmp_path):
    path = tmp_path / "shared.sqlite"
    common = [
        "--set",
        "seeds=32",
        "--set",
        "m_values=[32,48]",
        "--set",
        'series=["fixed"]',
        "--executor",
        "inline",
        "--json",
        "--store",
        str(path),
    ]
    first = spawn(["sweep", "one-step", "--set", "d_values=[2048,4096]", *common], tmp_path)
    second = spawn(["sweep", "one-step", "--set", "d_values=[4096,8192]", *common], tmp_path)
    outs = [p.communicate(timeout=120) for p in (first, second)]
    for proc, (stdout, stderr) in zip((first, second), outs, strict=True):
        assert proc.returncode == 0, stderr
        assert json.loads(stdout)["failed"] == 0
    hashes = [set(json.loads(stdout)["job_hashes"]) for stdout, _ in outs]
    assert len(hashes[0] & hashes[1]) == 2 and len(hashes[0] | hashes[1]) == 6
    # the other processes hash the jobs as this one does
    fixed = {"seeds": 32, "m_values": [32, 48], "d_values": [2048, 4096], "series": ["fixed"]}
    assert hashes[0] == {
        j.key for j in jobs_for("one-step", base.get("one-step").config("quick", **fixed))
    }
    rows = raw_rows(path)
    assert sorted(h for h, _, _ in rows) == sorted(hashes[0] | hashes[1])  # each exactly once
    assert all(status == "done" for _, status, _ in rows)
    # both report every one of their jobs finished (computed by itself or found in the store)
    for stdout, _ in outs:
        summary = json.loads(stdout)
        assert summary["computed"] + summary["cached"] == summary["jobs"] == 4


@pytest.mark.slow
def test_a_dying_pool_worker_stops_the_sweep_cleanly_and_the_rerun_resumes(tmp_path):
    path = tmp_path / "store.sqlite"
    args = [
        "sweep",
        "one-step",
        *(a for s in SLOW_SET for a in ("--set", s)),
        "--executor",
        "process",
        "--store",
        str(path),
        "--json",
    ]
    proc = spawn(args, tmp_path)
    deadline = time.monotonic() + 120
    while peek_done(path) < 1 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    workers = pool_workers(proc.pid)  # not the resource tracker: kill a process running a job
    assert workers, "the pool has workers while the sweep runs"
    os.kill(workers[0], signal.SIGKILL)  # as the out-of-memory killer would
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 1, stderr
    assert stdout == ""
    lines = stderr.strip().splitlines()
    assert lines[-1].startswith("error: a worker process died") and "rerun" in lines[-1]
    assert "running one of one-step [" in lines[-1]  # the jobs in flight, by their keys
    stored = peek_done(path)
    assert 1 <= stored < len(SLOW_JOBS)

    rerun = attnsep(*args)
    assert rerun.returncode == 0, rerun.stderr
    assert rerun.json()["cached"] == stored
    store = Store(path)
    final = store.rows()
    store.close()
    assert records_by_hash(final) == reference(tmp_path)


@pytest.mark.slow
def test_the_workers_stop_when_the_sweep_alone_is_killed(tmp_path):
    # SIGKILL to the sweep only (its workers are not signalled): each worker notices within
    # ORPHAN_POLL (1 s) that its parent is gone and exits, instead of finishing a ~20 s job
    # whose row nobody would store.
    path = tmp_path / "store.sqlite"
    args = ["sweep", "one-step", *(a for s in LONG_SET for a in ("--set", s))]
    proc = spawn([*args, "--executor", "process", "--workers", "2", "--store", str(path)], tmp_path)
    deadline = time.monotonic() + 60
    workers: list[int] = []
    while len(workers) < 2 and time.monotonic() < deadline and proc.poll() is None:
        workers = pool_workers(proc.pid)
        time.sleep(0.05)
    assert len(workers) == 2, f"the pool starts its two workers ({proc.poll()}, {workers})"
    time.sleep(3)  # both take a job (a worker's start-up loads torch)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    gone_by = time.monotonic() + 10
    while any(running(p) for p in workers) and time.monotonic() < gone_by:
        time.sleep(0.05)
    assert not any(running(p) for p in workers)
    assert peek_done(path) == 0  # the jobs were stopped, not finished
