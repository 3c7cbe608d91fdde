"""Executors as objects (engine/executors.py): each backend owns its options, ``map`` and
``submit`` give the same rows, and a new backend is one subclass that a sweep accepts."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

from attnsep.engine import executors
from attnsep.engine.executors import (
    Executor,
    InlineExecutor,
    ProcessExecutor,
    RayExecutor,
    make_executor,
)
from attnsep.engine.jobs import jobs_for
from attnsep.engine.store import Store
from attnsep.engine.sweep import run_sweep
from attnsep.experiments import base
from engine_support import LONG_FIXED, pool_workers, running

TINY = {"d_values": [16], "m_values": [4], "seeds": 2, "series": ["fixed"]}


def tiny_jobs(count: int = 2):
    exp = base.get("one-step")
    return [
        job
        for seed in range(count)
        for job in jobs_for("one-step", exp.config("quick", **TINY, seed=seed))
    ]


def records(rows):
    return {job.key: row["records"] for job, row in rows}


def test_each_backend_owns_its_options():
    assert isinstance(make_executor("inline"), InlineExecutor)
    assert make_executor("process", workers=3).workers == 3
    assert make_executor("inline").workers == 1
    with pytest.raises(ValueError, match="executor must be one of inline, process, ray"):
        make_executor("slurm")
    with pytest.raises(ValueError, match="--workers is for --executor process, not 'inline'"):
        make_executor("inline", workers=2)
    with pytest.raises(ValueError, match="--address is for --executor ray, not 'process'"):
        make_executor("process", address="127.0.0.1:1")
    with pytest.raises(ValueError, match="workers must be an integer >= 1"):
        ProcessExecutor(workers=-1)
    with pytest.raises(ValueError, match="--address must be host:port"):
        RayExecutor(address="nowhere")


def test_map_and_submit_give_the_same_rows_on_every_local_backend():
    jobs = tiny_jobs()
    inline = records(InlineExecutor().map(jobs))
    assert set(inline) == {job.key for job in jobs}
    assert records(ProcessExecutor(workers=2).map(jobs)) == inline
    row = InlineExecutor().submit(jobs[0]).result()
    assert row["status"] == "done" and row["records"] == inline[jobs[0].key]


class Reversed(Executor):
    """A toy backend: runs the jobs last to first, in this process."""

    name = "reversed"

    def map(self, jobs) -> Iterator:
        for job in reversed(jobs):
            yield job, executors.execute(job)

    @property
    def workers(self) -> int:
        return 1


def test_a_new_backend_is_one_class_that_a_sweep_accepts(tmp_path):
    jobs = tiny_jobs()
    store = Store(tmp_path / "s.sqlite")
    outcome = run_sweep(jobs, store, Reversed())
    assert (outcome.computed, outcome.cached) == (2, 0)
    stored = {row["config_hash"]: row["records"] for row in store.rows()}
    assert stored == records(InlineExecutor().map(jobs))
    assert run_sweep(jobs, store, Reversed()).cached == 2


def test_the_api_runs_a_sweep_on_an_executor_object(tmp_path):
    from attnsep import api

    result = api.sweep("one-step", fixed=dict(TINY), executor=Reversed(), store=tmp_path / "a.db")
    assert result.summary()["computed"] == 1
    with pytest.raises(ValueError, match="executor's own options"):
        api.executor(Reversed(), workers=2)


@pytest.mark.slow
def test_a_sweep_stopped_early_stops_its_workers_and_runs_nothing_more():
    # One worker: a tiny job, then four of ~20 s. Closing the iterator after the first row
    # (what an error or Ctrl-C in the caller does) stops the running job and drops the queued
    # ones at once; without that, close() waited for every one of them (30 s for two here).
    config = base.get("one-step").config("quick", **{**LONG_FIXED, "m_values": [64, 72, 80, 88]})
    jobs = [tiny_jobs(1)[0], *jobs_for("one-step", config)]
    rows = ProcessExecutor(workers=1).map(jobs)
    job, row = next(rows)
    assert job == jobs[0] and row["status"] == "done"
    workers = pool_workers(os.getpid())
    assert workers
    started = time.monotonic()
    rows.close()
    assert time.monotonic() - started < 15
    assert not any(running(p) for p in workers)


def blas_settings() -> dict[str, str | None]:
    return {name: os.environ.get(name) for name in executors.BLAS_THREADS}


def test_pool_workers_run_one_blas_thread_unless_told_otherwise(monkeypatch):
    for name in executors.BLAS_THREADS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "3")  # a user's own setting is kept
    with executors.spawn_pool(1) as pool:
        seen = pool.submit(blas_settings).result()
    assert seen == {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "3"}


def resident_bytes() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        line = next(line for line in status if line.startswith("VmRSS:"))
    return int(line.split()[1]) * 1024


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads /proc (Linux)")
def test_after_each_job_a_worker_hands_the_memory_it_freed_back(monkeypatch):
    """glibc keeps freed blocks below its mmap threshold in the heap: 128 MB of 64 KB blocks,
    freed but for the last (which pins the heap's top), stay resident until the trim that
    ``execute`` does after every job hands them back."""
    import numpy as np

    from attnsep.core.resources import release_freed_memory

    blocks = [np.ones(8192) for _ in range(2048)]  # 64 KB each, 128 MB, every page touched
    del blocks[:-1]
    held = resident_bytes()
    assert release_freed_memory()
    assert resident_bytes() < held - 100 * 2**20
    trims = []
    monkeypatch.setattr(executors, "release_freed_memory", lambda **_: trims.append(1))
    rows = list(InlineExecutor().map(tiny_jobs(1)))
    assert [row["status"] for _, row in rows] == ["done"] and trims == [1]


def test_a_pool_worker_freezes_what_outlives_a_job_and_this_process_does_not():
    """After a job a pool worker's survivors are frozen, so its next collections scan only new
    objects; jobs run inline leave this process's collector as it was."""
    import gc

    frozen_here = gc.get_freeze_count()
    list(InlineExecutor().map(tiny_jobs(1)))
    assert gc.get_freeze_count() == frozen_here
    with executors.spawn_pool(1) as pool:
        before = pool.submit(gc.get_freeze_count).result()
        row = pool.submit(executors.execute, tiny_jobs(1)[0]).result()
        after = pool.submit(gc.get_freeze_count).result()
    assert row["status"] == "done" and before == 0 and after > 10_000


def test_a_dead_worker_is_named_by_the_jobs_it_may_have_run():
    """The pool hands jobs out in order, so the dead worker ran one of the first unfinished
    jobs (one per worker); a job that finished is not among them."""
    from concurrent.futures import Future

    jobs = tiny_jobs(3)
    futures: list[Future] = [Future() for _ in jobs]
    futures[0].set_result({})
    for future in futures[1:]:
        future.set_exception(RuntimeError("broken"))
    pending = dict(zip(futures, jobs, strict=True))
    assert ProcessExecutor(workers=1).running(pending) == jobs[1:2]
    assert ProcessExecutor(workers=4).running(pending) == jobs[1:]
    message = str(executors.WorkerDied(2, running=jobs[1:]))
    assert message.startswith(
        f"a worker process died (killed or out of memory) running one of one-step "
        f"[{jobs[1].key[:12]}], one-step [{jobs[2].key[:12]}] with 2 jobs unfinished; "
    )


def heap_held(wait: float = 0.0) -> int:
    """Resident bytes still held ``wait`` seconds after twenty 5 MB arrays are freed, each with a
    1 MB block allocated after it and kept (a step's arrays, and what the step keeps)."""
    import numpy as np

    first = np.ones(2 << 20)  # 16 MB, mapped; freeing it raises glibc's own threshold to 16 MB
    del first
    start, big, kept = resident_bytes(), [], []
    for _ in range(20):
        big.append(np.ones(5 << 17))
        kept.append(np.ones(1 << 17))
    del big
    time.sleep(wait)
    return resident_bytes() - start


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads /proc (Linux)")
def test_pool_workers_hand_back_what_a_running_job_freed():
    """Left to glibc, the 100 MB of freed 5 MB arrays stay resident, pinned by the blocks kept
    after them; a pool worker hands them back within ``TRIM_PERIOD`` while its job runs on (20
    MB of kept blocks remain)."""
    from multiprocessing import get_context

    with get_context("spawn").Pool(1) as bare:
        piled = bare.apply(heap_held, (1.5 * executors.TRIM_PERIOD,))
    with executors.spawn_pool(1) as pool:
        held = pool.submit(heap_held, 1.5 * executors.TRIM_PERIOD).result()
    assert piled > 100 * 2**20 and held < 40 * 2**20, (piled, held)


def test_only_a_cluster_runs_its_jobs_on_other_machines():
    """``Executor.local``: the memory guard counts the jobs side by side here only for the
    backends that run them here, and a plan measures this machine's speed only for those."""
    from attnsep.engine import memory

    assert {name: cls.local for name, cls in executors.BACKENDS.items()} == {
        "inline": True,
        "process": True,
        "ray": False,
    }
    assert memory.at_once(executors.make_executor("inline")) == 1
    assert memory.at_once(executors.make_executor("process", workers=3)) == 3
    assert memory.at_once(executors.make_executor("ray")) is None  # no cluster is contacted
