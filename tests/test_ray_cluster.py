"""``--executor ray --address`` against a real multi-node Ray cluster on this machine (a head and
two worker nodes of one CPU each): the same records as inline, each job stored once; a worker
node lost mid-sweep is survived (Ray reruns its job); past Ray's retries the sweep stops with one
line and the rerun resumes."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time

import pytest

from attnsep.engine import executors
from attnsep.engine.jobs import expand_grid, jobs_for
from attnsep.engine.store import Store
from attnsep.engine.sweep import run_sweep
from engine_support import attnsep, child_pids, one_line, peek_done, records_by_hash

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402

pytestmark = pytest.mark.slow

# Six one-step jobs of 0.2 to 0.8 s each (one alone on an idle core): a node is lost mid-job.
SLOW = {"seeds": 96, "d_values": [16384, 32768], "m_values": [32, 48, 64], "series": ["fixed"]}
"""Jobs long enough (about a second each) that, once the first is stored, a worker node is still
running one when the tests that lose a node look for it (24 seeds raced past it at times)."""
SMALL = {"seeds": 4, "d_values": [16, 32, 64], "m_values": [4], "series": ["fixed"]}


def as_options(fields: dict) -> list[str]:
    return [a for k, v in fields.items() for a in ("--set", f"{k}={json.dumps(v)}")]


def jobs_of(fields: dict):
    return [
        j for c in expand_grid("one-step", "quick", fields, {}) for j in jobs_for("one-step", c)
    ]


def inline_records(fields: dict, folder) -> dict:
    store = Store(folder / "inline.sqlite")
    try:
        outcome = run_sweep(jobs_of(fields), store, "inline")
        assert outcome.failed == [] and outcome.computed == len(jobs_of(fields))
        return records_by_hash(store.rows())
    finally:
        store.close()


def stored(path) -> dict:
    store = Store(path)
    try:
        rows = store.rows()
        assert all(r["status"] == "done" for r in rows)
        return records_by_hash(rows)  # fails if a job is stored twice
    finally:
        store.close()


@pytest.fixture(scope="module")
def cluster():
    """A head and two worker nodes, one CPU each, torn down even if a test fails."""
    made = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        workers = [made.add_node(num_cpus=1) for _ in range(2)]
        made.wait_for_nodes()
        made.workers = workers  # the worker nodes still alive, for the tests that remove one
        yield made
    finally:
        made.shutdown()


@pytest.fixture(scope="module")
def driver(cluster):
    """This process connected to the cluster, so that the sweeps after the first one find its
    workers started (``RayExecutor.map`` uses a connection that is already there)."""
    ray.init(
        address=cluster.address, include_dashboard=False, log_to_driver=False,
        configure_logging=False,
    )  # fmt: skip
    try:
        yield cluster
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def slow_reference(tmp_path_factory):
    return inline_records(SLOW, tmp_path_factory.mktemp("reference"))


def sweep_args(fields: dict, cluster, path) -> list[str]:
    return [
        "sweep", "one-step", *as_options(fields), "--executor", "ray",
        "--address", cluster.address, "--store", str(path), "--json", "--quiet",
    ]  # fmt: skip


def node_workers(node) -> list[int]:
    """The node's Ray worker processes (children of its raylet)."""
    return child_pids(node.all_processes["raylet"][0].process.pid)


def running_a_job(node) -> bool:
    """Whether one of the node's Ray workers is running ``execute`` (its process title)."""
    for pid in node_workers(node):
        try:
            with open(f"/proc/{pid}/cmdline") as handle:
                if handle.read().startswith("ray::execute"):
                    return True
        except OSError:
            continue
    return False


def remove_busy_worker(cluster, path, finished: threading.Event, report: dict) -> None:
    """Once a job is stored, lose a worker node while it runs a job: its raylet and object
    store are killed (no graceful exit), then its worker processes, as when a machine dies."""
    while not finished.is_set():
        busy = [node for node in cluster.workers if running_a_job(node)]
        if peek_done(path) >= 1 and busy:
            break
        time.sleep(0.005)
    else:
        report["error"] = "the sweep ended before a worker node was seen running a job"
        return
    node = busy[0]
    report["stored_before"] = peek_done(path)
    workers = node_workers(node)
    cluster.remove_node(node, allow_graceful=False)
    for pid in workers:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    cluster.workers.remove(node)
    report["removed"] = True


def sweep_losing_a_node(args: list[str], cluster, path) -> tuple:
    report: dict = {}
    finished = threading.Event()
    killer = threading.Thread(target=remove_busy_worker, args=(cluster, path, finished, report))
    killer.start()
    try:
        result = attnsep(*args)
    finally:
        finished.set()
        killer.join()
    assert "error" not in report, (report, result.stderr)
    assert report.get("removed"), (report, result.stderr)
    return result, report


def test_sweep_on_the_cluster_stores_the_inline_records_once(cluster, tmp_path):
    """The command joins the cluster at ``--address`` itself (this process is not connected)."""
    assert not ray.is_initialized()
    path = tmp_path / "ray.sqlite"
    result = attnsep(*sweep_args(SMALL, cluster, path))
    assert result.returncode == 0, result.stderr
    summary = result.json()
    assert (summary["jobs"], summary["computed"], summary["failed"]) == (3, 3, 0)
    assert stored(path) == inline_records(SMALL, tmp_path)
    assert not ray.is_initialized()  # the command disconnected from the cluster it joined

    again = attnsep(*sweep_args(SMALL, cluster, path))
    assert again.returncode == 0, again.stderr
    assert (again.json()["computed"], again.json()["cached"]) == (0, 3)

    plan = attnsep(*sweep_args(SMALL, cluster, path), "--plan")  # the workers: the cluster's CPUs
    assert plan.returncode == 0, plan.stderr
    assert (plan.json()["workers"], plan.json()["stored"], plan.json()["to_run"]) == (3, 3, 0)
    assert not ray.is_initialized()


def test_a_worker_node_lost_mid_sweep_is_survived(driver, tmp_path, slow_reference):
    """Guaranteed outcome: Ray reruns the lost job on a live node (``RAY_MAX_RETRIES``), so
    the sweep completes, exit 0, every job stored once with the inline records."""
    path = tmp_path / "ray.sqlite"
    args = sweep_args(SLOW, driver, path)
    result, report = sweep_losing_a_node(args, driver, path)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    summary = result.json()
    assert (summary["jobs"], summary["computed"], summary["failed"]) == (6, 6, 0)
    assert report["stored_before"] < 6
    assert stored(path) == slow_reference

    rerun = attnsep(*args)
    assert rerun.returncode == 0, rerun.stderr
    assert (rerun.json()["computed"], rerun.json()["cached"]) == (0, 6)
    assert stored(path) == slow_reference


def test_past_the_retries_the_sweep_stops_with_one_line_and_the_rerun_resumes(
    driver, tmp_path, slow_reference, monkeypatch
):
    """With no retries left the lost job stops the sweep: exit 1, one line naming the unfinished
    jobs; the same command then computes exactly those."""
    path = tmp_path / "ray.sqlite"
    args = sweep_args(SLOW, driver, path)
    monkeypatch.setattr(executors, "RAY_MAX_RETRIES", 0)
    result, report = sweep_losing_a_node(args, driver, path)
    assert result.returncode == 1 and result.stdout == ""
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and one_line(errors[0]), result.stderr
    assert "a Ray worker or node was lost" in errors[0] and "rerun the same command" in errors[0]
    unfinished = int(errors[0].split(" jobs unfinished")[0].rsplit(" ", 1)[1])
    done = peek_done(path)
    assert 1 <= report["stored_before"] <= done and done + unfinished == 6

    monkeypatch.setattr(executors, "RAY_MAX_RETRIES", 3)
    rerun = attnsep(*args)
    assert rerun.returncode == 0, rerun.stderr
    assert (rerun.json()["cached"], rerun.json()["computed"]) == (done, unfinished)
    assert stored(path) == slow_reference


def test_a_slice_of_the_full_preset_runs_on_the_cluster(cluster, tmp_path):
    """The four jobs of ``reproduce --full`` the plan prices cheapest (real full-preset jobs of
    one-step and polylog-width), run on the cluster through the API: each stored once, with the
    records the inline executor gives."""
    from attnsep.engine.plan import make_plan
    from attnsep.report.claims import planned_jobs

    groups = planned_jobs(["one-step", "polylog-width"], "full")
    priced = make_plan(groups, None, "inline", 1, budget=0).to_run
    cheapest = sorted((c for c in priced if c.seconds is not None), key=lambda c: c.seconds)[:4]
    jobs = [c.job for c in cheapest]
    assert {j.experiment for j in jobs} <= {"one-step", "polylog-width"} and len(jobs) == 4
    results = {}
    for name, engine in (("ray", executors.make_executor("ray", address=cluster.address)),
                         ("inline", "inline")):  # fmt: skip
        store = Store(tmp_path / f"{name}.sqlite")
        try:
            outcome = run_sweep(jobs, store, engine)
            assert (outcome.computed, outcome.failed) == (4, [])
            results[name] = records_by_hash(store.rows())
        finally:
            store.close()
    assert results["ray"] == results["inline"]
