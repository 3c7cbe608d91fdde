"""Executors: run a list of jobs in-process, in a local process pool, or on a Ray cluster.

All three call the same ``execute(job)`` and yield ``(job, row)`` as jobs finish; nothing
else in attnsep knows which one runs. Every job runs with ``THREADS_PER_JOB`` torch threads,
so its floating-point results are the same whatever executor ran it.
"""

from __future__ import annotations

import json
import os
import time
import traceback
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from typing import Any

from ..device import torch_threads
from ..experiments import base
from ..validate import int_at_least, one_of
from .jobs import Job, environment

EXECUTORS = ("inline", "process", "ray")


class WorkerDied(RuntimeError):
    """A worker process died (killed, out of memory) with jobs unfinished; stored jobs are kept."""

    def __init__(self, unfinished: int) -> None:
        super().__init__(
            f"a worker process died (killed or out of memory) with {unfinished} jobs unfinished; "
            "every finished job is stored: rerun the same command to resume"
        )


THREADS_PER_JOB = 1


def execute(job: Job) -> dict[str, Any]:
    """Run one job and return its store row (``status`` ``done`` or ``failed``)."""
    started = time.time()
    try:
        exp = base.get(job.experiment)
        config = base.parse_config(exp.config_type, job.config, job.experiment)
        with torch_threads(THREADS_PER_JOB):
            records, error, status = exp.run(config), None, "done"
        json.dumps(records, allow_nan=False)  # records must be plain, finite JSON
    except Exception as err:  # a failed job is stored with its error and retried next time
        records, status = None, "failed"
        error = f"{type(err).__name__}: {err}\n{traceback.format_exc(limit=5)}"
    finished = time.time()
    env = environment()
    return {
        "experiment": job.experiment,
        "config_hash": job.key,
        "config": job.config,
        "seed": job.seed,
        "status": status,
        "started": started,
        "finished": finished,
        "seconds": finished - started,
        "versions": env["versions"],
        "git_commit": env["git_commit"],
        "device": env["device"],
        "host": env["host"],
        "records": records,
        "error": error,
    }


def run_inline(jobs: list[Job]) -> Iterator[tuple[Job, dict[str, Any]]]:
    for job in jobs:
        yield job, execute(job)


def run_process(
    jobs: list[Job], workers: int | None = None
) -> Iterator[tuple[Job, dict[str, Any]]]:
    workers = int_at_least("workers", workers or os.cpu_count() or 1, 1)
    with ProcessPoolExecutor(
        max_workers=min(workers, max(1, len(jobs))), mp_context=get_context("spawn")
    ) as pool:
        pending = {pool.submit(execute, job): job for job in jobs}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                try:
                    row = future.result()
                except BrokenProcessPool:
                    raise WorkerDied(len(pending)) from None
                yield pending.pop(future), row


def run_ray(jobs: list[Job], address: str | None = None) -> Iterator[tuple[Job, dict[str, Any]]]:
    try:
        import ray
    except ImportError:
        raise ValueError("executor 'ray' needs Ray: pip install 'attnsep[ray]'") from None
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(
            address=address,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
            ignore_reinit_error=True,
        )
    try:
        remote = ray.remote(num_cpus=THREADS_PER_JOB, max_retries=2)(execute)
        pending = {remote.remote(job): job for job in jobs}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                yield pending.pop(ref), ray.get(ref)
    finally:
        if started_here:
            ray.shutdown()


def run_jobs(
    jobs: list[Job],
    executor: str = "process",
    *,
    workers: int | None = None,
    address: str | None = None,
) -> Iterator[tuple[Job, dict[str, Any]]]:
    """Run ``jobs`` on the named executor, yielding ``(job, row)`` in completion order."""
    one_of("executor", executor, EXECUTORS)
    if executor == "inline":
        return run_inline(jobs)
    if executor == "process":
        return run_process(jobs, workers)
    return run_ray(jobs, address)
