"""Executors: run a list of jobs in-process, in a local process pool, or on a Ray cluster.

Each is an :class:`Executor` object owning its options (``ProcessExecutor(workers=8)``,
``RayExecutor(address=...)``); all call the same ``execute(job)`` and yield ``(job, row)`` as
jobs finish, so nothing else in attnsep knows which one runs. Every job runs with
``THREADS_PER_JOB`` torch threads, so its floating-point results are the same whatever executor
ran it.

On Ray, a job whose worker or node is lost is rerun elsewhere up to ``RAY_MAX_RETRIES``
times; past that the sweep stops with :class:`WorkerDied` (finished jobs are already
stored, so rerunning the same command resumes).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import time
import traceback
from abc import ABC, abstractmethod
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from typing import Any, ClassVar

from ..core.resources import keep_releasing_freed_memory, release_freed_memory
from ..core.validate import int_at_least, one_of, require
from ..experiments import base
from .jobs import Job, environment


class WorkerDied(RuntimeError):
    """A worker died (killed, out of memory, its node lost) with jobs unfinished; stored jobs
    are kept. ``running``: the jobs one of which the dead worker ran, when known."""

    def __init__(
        self,
        unfinished: int,
        what: str = "a worker process died (killed or out of memory)",
        running: list[Job] | None = None,
    ) -> None:
        self.unfinished = unfinished
        named = ", ".join(f"{job.experiment} [{job.key[:12]}]" for job in running or [])
        super().__init__(
            f"{what}{f' running one of {named}' if named else ''} with {unfinished} jobs "
            "unfinished; every finished job is stored: rerun the same command to resume"
        )


THREADS_PER_JOB = 1
RAY_MAX_RETRIES = 3
"""How many times Ray reruns a job whose worker or node was lost (not a job that raised)."""


def load(experiment: str) -> base.Experiment[Any]:
    """The experiment, with torch and the experiments loaded: a worker's start-up, paid once per
    process and kept out of its first job's seconds (the plan prices it per worker)."""
    from ..core import device  # noqa: F401  torch loads in the worker, not in the CLI

    return base.get(experiment)


FREEZE_AFTER_JOBS = False
"""Whether this process freezes what survives each job's garbage collection
(``core.resources.release_freed_memory``): a pool worker's does (:func:`start_worker`), this
process running jobs inline does not."""


def execute(job: Job) -> dict[str, Any]:
    """Run one job and return its store row (``status`` ``done`` or ``failed``)."""
    with contextlib.suppress(Exception):  # an unknown name fails below, as the job's error
        load(job.experiment)
    started = time.time()
    try:
        from ..core.device import torch_threads

        exp = load(job.experiment)
        config = base.parse_config(exp.config_type, job.config, job.experiment)
        with torch_threads(THREADS_PER_JOB):
            records, error, status = exp.run(config), None, "done"
        json.dumps(records, allow_nan=False)  # records must be plain, finite JSON
    except Exception as err:  # a failed job is stored with its error and retried next time
        records, status = None, "failed"
        error = f"{type(err).__name__}: {err}\n{traceback.format_exc(limit=5)}"
    finished = time.time()
    # a worker's next job starts from the memory it had before this one
    release_freed_memory(freeze=FREEZE_AFTER_JOBS)
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


Row = dict[str, Any]


class Executor(ABC):
    """Runs jobs (submitit's shape): :meth:`map` yields ``(job, row)`` as each job finishes,
    :meth:`submit` runs one and returns its future. Each backend owns its options; a new
    backend (a Slurm queue, say) is one more subclass in :data:`EXECUTORS`."""

    name: ClassVar[str]
    options: ClassVar[tuple[str, ...]] = ()
    """The keyword options its constructor takes (``--workers``, ``--address``, ...)."""
    local: ClassVar[bool] = True
    """Whether its jobs run on this machine (a cluster's nodes may be other machines)."""

    @abstractmethod
    def map(self, jobs: list[Job]) -> Iterator[tuple[Job, Row]]:
        """Run ``jobs``, yielding ``(job, row)`` in completion order."""

    def submit(self, job: Job) -> Future[Row]:
        """Run one job; its store row as a future (here: run at once)."""
        future: Future[Row] = Future()
        ((_, row),) = self.map([job])
        future.set_result(row)
        return future

    @property
    @abstractmethod
    def workers(self) -> int:
        """How many jobs run at once (for the plan's wall estimate)."""


class InlineExecutor(Executor):
    """Every job in this process, one after another."""

    name = "inline"

    def map(self, jobs: list[Job]) -> Iterator[tuple[Job, Row]]:
        for job in jobs:
            yield job, execute(job)

    @property
    def workers(self) -> int:
        return 1


class ProcessExecutor(Executor):
    """A local pool of ``workers`` processes (default: the CPUs), started fresh (``spawn``)."""

    name = "process"
    options = ("workers",)

    def __init__(self, workers: int | None = None) -> None:
        self._workers = int_at_least("workers", workers or os.cpu_count() or 1, 1)

    @property
    def workers(self) -> int:
        return self._workers

    def map(self, jobs: list[Job]) -> Iterator[tuple[Job, Row]]:
        """Rows as jobs finish. When the sweep stops early (an error, Ctrl-C, the caller
        closing the iterator) the jobs not started are dropped and the running ones stopped;
        when this process dies, its workers stop within :data:`ORPHAN_POLL` seconds."""
        pool = spawn_pool(min(self._workers, max(1, len(jobs))))
        finished = False
        try:
            pending = {pool.submit(execute, job): job for job in jobs}
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    try:
                        row = future.result()
                    except BrokenProcessPool:
                        raise WorkerDied(len(pending), running=self.running(pending)) from None
                    yield pending.pop(future), row
            finished = True
        finally:
            if not finished:  # the pool has no public way to stop a running job (before 3.14)
                for process in list((getattr(pool, "_processes", None) or {}).values()):
                    process.terminate()
            pool.shutdown(wait=True, cancel_futures=not finished)

    def running(self, pending: dict[Future[Row], Job]) -> list[Job]:
        """The jobs the workers were running: the pool hands jobs out in the order they were
        submitted, so they are the first unfinished ones (at most one per worker)."""
        unfinished = [
            job for future, job in pending.items() if not future.done() or future.exception()
        ]
        return unfinished[: self._workers]


ORPHAN_POLL = 1.0
"""Seconds between a pool worker's checks that the process that started it is alive."""

TRIM_PERIOD = 1.0
"""Seconds between a pool worker's hand-backs of the memory its job freed
(``core.resources.keep_releasing_freed_memory``). Measured on an attention-maps job of the full
preset (softmax at temperature 0.03, ``d = 256``), side by side: 141 s and 1.2 GB resident at
the most, against 136 s and 3.9 GB without."""


BLAS_THREADS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
"""The variables that size numpy's BLAS thread pool when it loads."""


def spawn_pool(size: int) -> ProcessPoolExecutor:
    """A pool of ``size`` fresh (``spawn``) processes that exit with this one and hand freed
    memory back (:func:`start_worker`): the sweep's workers, and the report's judges. Their BLAS
    runs ``THREADS_PER_JOB`` threads as their torch does (``BLAS_THREADS`` set in the
    environment they inherit, unless already set): workers that each start one BLAS thread per
    core oversubscribe the cores, which made a least-squares job 6x slower on 2 cores (59 s
    against 10 s, two workers at once)."""
    for name in BLAS_THREADS:
        os.environ.setdefault(name, str(THREADS_PER_JOB))
    return ProcessPoolExecutor(
        size,
        mp_context=get_context("spawn"),
        initializer=start_worker,
        initargs=(os.getpid(),),
    )


def start_worker(parent: int) -> None:
    """A pool worker's initializer: it exits with ``parent`` (:func:`exit_with_parent`) and hands
    freed memory back every :data:`TRIM_PERIOD` seconds, so that its jobs' resident memory is
    what they hold, not what glibc's heap kept of what they freed; the objects that outlive
    a job are frozen, out of the next collections' scan (:data:`FREEZE_AFTER_JOBS`)."""
    global FREEZE_AFTER_JOBS
    FREEZE_AFTER_JOBS = True
    exit_with_parent(parent)
    keep_releasing_freed_memory(TRIM_PERIOD)


def exit_with_parent(parent: int) -> None:
    """A daemon thread ends this worker once ``parent`` is gone (killed, even by SIGKILL),
    instead of letting it finish a job nobody will store."""
    import threading

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(ORPHAN_POLL)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


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


def connect_ray(address: str | None) -> tuple[Any, bool]:
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


class RayExecutor(Executor):
    """A Ray cluster at ``address`` (``host:port``; default: a running or a local instance),
    ``THREADS_PER_JOB`` CPUs per job; lost workers' jobs are retried ``RAY_MAX_RETRIES``
    times. The address is checked when the executor is made: a cluster that does not answer
    fails at once."""

    name = "ray"
    options = ("address",)
    local = False

    def __init__(self, address: str | None = None) -> None:
        check_reachable(address)
        self.address = address

    def map(self, jobs: list[Job]) -> Iterator[tuple[Job, Row]]:
        ray, started_here = connect_ray(self.address)
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
                            f"a Ray worker or node was lost and Ray's {RAY_MAX_RETRIES} "
                            "retries of a job ran out",
                        ) from None
                    yield pending.pop(ref), row
        finally:
            if started_here:
                ray.shutdown()  # the cluster drops this driver's unfinished jobs
            else:
                for ref in pending:  # a Ray instance we did not start runs on: drop them there
                    ray.cancel(ref)

    @property
    def workers(self) -> int:
        """The cluster's CPUs over ``THREADS_PER_JOB`` (a local instance: this machine's)."""
        running = sys.modules.get("ray") is not None and sys.modules["ray"].is_initialized()
        if self.address is None and "RAY_ADDRESS" not in os.environ and not running:
            return max(1, (os.cpu_count() or 1) // THREADS_PER_JOB)
        ray, started_here = connect_ray(self.address)
        try:
            return max(1, int(ray.cluster_resources().get("CPU", 0)) // THREADS_PER_JOB)
        finally:
            if started_here:
                ray.shutdown()


BACKENDS: dict[str, type[Executor]] = {
    cls.name: cls for cls in (InlineExecutor, ProcessExecutor, RayExecutor)
}
"""The backends by name (``--executor``)."""
EXECUTORS: tuple[str, ...] = tuple(BACKENDS)


def make_executor(name: str, **options: Any) -> Executor:
    """The executor ``name`` made with the ``options`` given (``None``: not given); an option
    that only another backend takes is an error naming that backend."""
    one_of("executor", name, EXECUTORS)
    given = {key: value for key, value in options.items() if value is not None}
    backend = BACKENDS[name]
    for key in given:
        if key not in backend.options:
            owners = [b.name for b in BACKENDS.values() if key in b.options]
            raise ValueError(f"--{key} is for --executor {' or '.join(owners)}, not {name!r}")
    return backend(**given)


def as_executor(executor: str | Executor, **options: Any) -> Executor:
    """``executor`` itself (its options its own: none may be given beside it), or the one its
    name and ``options`` make (:func:`make_executor`)."""
    if isinstance(executor, Executor):
        require(
            all(value is None for value in options.values()),
            "workers and address are the executor's own options: give them to it, not beside it",
        )
        return executor
    return make_executor(executor, **options)
