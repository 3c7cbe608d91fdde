"""Executors: run a list of jobs in-process, in a local process pool, or on a Ray cluster.

All three call the same ``execute(job)`` and yield ``(job, row)`` as jobs finish; nothing
else in attnsep knows which one runs. Every job runs with ``THREADS_PER_JOB`` torch threads,
so its floating-point results are the same whatever executor ran it.

On Ray, a job whose worker or node is lost is rerun elsewhere up to ``RAY_MAX_RETRIES``
times; past that the sweep stops with :class:`WorkerDied` (finished jobs are already
stored, so rerunning the same command resumes).
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
import traceback
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from typing import Any

from ..core.validate import int_at_least, one_of, require
from ..experiments import base
from .jobs import Job, environment

EXECUTORS = ("inline", "process", "ray")


class WorkerDied(RuntimeError):
    """A worker died (killed, out of memory, its node lost) with jobs unfinished; stored jobs
    are kept."""

    def __init__(
        self, unfinished: int, what: str = "a worker process died (killed or out of memory)"
    ) -> None:
        self.unfinished = unfinished
        super().__init__(
            f"{what} with {unfinished} jobs unfinished; "
            "every finished job is stored: rerun the same command to resume"
        )


THREADS_PER_JOB = 1
RAY_MAX_RETRIES = 3
"""How many times Ray reruns a job whose worker or node was lost (not a job that raised)."""


def execute(job: Job) -> dict[str, Any]:
    """Run one job and return its store row (``status`` ``done`` or ``failed``)."""
    started = time.time()
    try:
        from ..core.device import torch_threads  # torch loads in the worker, not in the CLI

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


def check_reachable(address: str | None) -> None:
    """Fail at once (instead of Ray's minutes of retries) when ``host:port`` does not answer."""
    if address is None or "://" in address or address in ("auto", "local"):
        return
    host, _, port = address.rpartition(":")
    require(
        host != "" and port.isdigit(),
        f"--address must be host:port (e.g. 10.0.0.1:6379), got {address!r}",
    )
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as err:
        raise ValueError(
            f"no Ray cluster answers at {address!r} ({err.strerror or err}); start one with "
            "`ray start --head` and pass the address it prints"
        ) from None


def connect_ray(address: str | None):
    """The ``ray`` module, connected to ``address`` (or a local instance); True if this call
    started the connection (the caller then shuts it down)."""
    try:
        import ray
    except ImportError:
        raise ValueError("executor 'ray' needs Ray: pip install 'attnsep[ray]'") from None
    if ray.is_initialized():
        return ray, False
    check_reachable(address)
    ray.init(
        address=address,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
        ignore_reinit_error=True,
    )
    return ray, True


def run_ray(jobs: list[Job], address: str | None = None) -> Iterator[tuple[Job, dict[str, Any]]]:
    ray, started_here = connect_ray(address)
    from ray import exceptions as lost

    lost_work = (
        lost.WorkerCrashedError,
        lost.NodeDiedError,
        lost.ObjectLostError,
        lost.LocalRayletDiedError,
        lost.OutOfMemoryError,
    )
    pending: dict = {}
    try:
        remote = ray.remote(num_cpus=THREADS_PER_JOB, max_retries=RAY_MAX_RETRIES)(execute)
        pending = {remote.remote(job): job for job in jobs}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                try:
                    row = ray.get(ref)
                except lost_work:
                    raise WorkerDied(
                        len(pending),
                        f"a Ray worker or node was lost and Ray's {RAY_MAX_RETRIES} retries of "
                        "a job ran out",
                    ) from None
                yield pending.pop(ref), row
    finally:
        if started_here:
            ray.shutdown()  # the cluster drops this driver's unfinished jobs
        else:
            for ref in pending:  # a Ray instance we did not start runs on: drop them there
                ray.cancel(ref)


def worker_count(executor: str, workers: int | None = None, address: str | None = None) -> int:
    """How many jobs the executor runs at once: 1 inline, ``workers`` (default: the CPUs) in a
    process pool, the cluster's CPUs over ``THREADS_PER_JOB`` on Ray."""
    one_of("executor", executor, EXECUTORS)
    if executor == "inline":
        return 1
    if executor == "process":
        return int_at_least("workers", workers or os.cpu_count() or 1, 1)
    running = sys.modules.get("ray") is not None and sys.modules["ray"].is_initialized()
    if address is None and "RAY_ADDRESS" not in os.environ and not running:
        return max(1, (os.cpu_count() or 1) // THREADS_PER_JOB)  # the local instance Ray starts
    ray, started_here = connect_ray(address)
    try:
        return max(1, int(ray.cluster_resources().get("CPU", 0)) // THREADS_PER_JOB)
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
