"""Timing a few jobs on this machine, for ``--plan`` when the store has no timing for them.

Each experiment's jobs are timed smallest config first (by :func:`size`), one at a time in a
child process (results dropped, the store untouched), while the experiment's calibration has
used less than ``budget`` seconds. A job still running after ``cap`` seconds is stopped
(``capped``: counted at the cap); a job not reached is ``guessed`` as the largest timed job
of its experiment (larger configs usually cost more, so both are usually underestimates). A
job that fails here is ``failed`` (the run would store it as failed) and the rest of its
experiment ``unknown``.

The first job of an experiment runs twice (unless its first run took over ``cap``): the first
run pays one-off costs (lazy imports, first calls into torch), which every worker pays again
on its first job of that experiment, so they are added to the first ``workers`` jobs. The
child's start-up (spawn, imports) is what each worker pays before its first job.
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from typing import TYPE_CHECKING, Any

from ..configs import CALIBRATION_BUDGET

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess

    from .jobs import Job

STORED, STORE, TIMED, CAPPED, GUESSED, FAILED, UNKNOWN = (
    "stored",
    "store",
    "timed",
    "capped",
    "guessed",
    "failed",
    "unknown",
)
ROUGH = (CAPPED, GUESSED)
BUDGET = CALIBRATION_BUDGET
"""Calibration seconds per experiment (``--calibration``; the default lives in ``configs``)."""
CAP = 3.0
"""A job runs at most ``max(CAP, budget)`` seconds in the calibration (its first, cold run of
an experiment twice that)."""


@dataclass(frozen=True)
class JobCost:
    """One job's cost: its stored ``seconds`` if the store holds it, else an estimate."""

    job: Job
    source: str  # STORED (not run again), STORE, TIMED, CAPPED, GUESSED, FAILED or UNKNOWN
    seconds: float | None  # None when UNKNOWN


def size(config: dict[str, Any]) -> float:
    """How big a config is, to time an experiment's jobs cheapest first: the sum of
    ``log(1 + |x|)`` over its numbers (the log of the product of its sizes)."""

    def numbers(value: Any) -> Iterable[float]:
        if isinstance(value, bool) or value is None or isinstance(value, str):
            return
        if isinstance(value, int | float):
            yield abs(float(value))
        elif isinstance(value, list | tuple | dict):
            for item in value.values() if isinstance(value, dict) else value:
                yield from numbers(item)

    return sum(math.log1p(x) for x in numbers(config))


def _timing_child(conn) -> None:
    """Calibration process: load the experiments, then answer each job with its seconds and
    the first line of its error (None when it succeeded)."""
    from ..experiments import load_all
    from .executors import execute

    load_all()
    conn.send("ready")
    while (job := conn.recv()) is not None:
        row = execute(job)
        conn.send((row["seconds"], row["error"] and row["error"].splitlines()[0]))


class CalibrationFailed(RuntimeError):
    """The calibration process died (an import error, a job killed by the system)."""


class Timer:
    """Runs one job at a time in a child process and says how long it took, stopping a job
    that runs past its cap (the child is then replaced). ``startup``: the longest start-up
    seen (spawn to experiments loaded); ``errors``: the first failure of each experiment."""

    def __init__(self) -> None:
        self.child: BaseProcess | None = None
        self.startup = 0.0
        self.errors: dict[str, str] = {}
        self.failed = False  # the last job failed

    def seconds(self, job: Job, cap: float) -> float | None:
        """The job's seconds, or None if it ran past ``cap``."""
        if self.child is None:
            started = time.perf_counter()
            context = get_context("spawn")
            self.conn, there = context.Pipe()
            self.child = context.Process(target=_timing_child, args=(there,), daemon=True)
            self.child.start()
            there.close()  # the child's end: once the child is gone, reading here ends
            self.answer(300, "while starting")
            self.startup = max(self.startup, time.perf_counter() - started)
        doing = f"running a job of {job.experiment}"
        try:
            self.conn.send(job)
        except OSError:
            self.fail(doing)
        self.failed = False
        if self.conn.poll(cap):
            seconds, error = self.answer(0, doing)
            if error is not None:
                self.failed = True
                self.errors.setdefault(job.experiment, error)
            return float(seconds)
        self.close()
        return None

    def answer(self, timeout: float, doing: str):
        """The child's next message (CalibrationFailed if it died or said nothing in time)."""
        try:
            if self.conn.poll(timeout):
                return self.conn.recv()
        except (EOFError, OSError):
            pass
        self.fail(doing)

    def fail(self, doing: str):
        self.close()
        raise CalibrationFailed(f"the calibration process failed {doing} (its error is above)")

    def close(self) -> None:
        if self.child is not None:
            self.child.kill()
            self.child.join()
            self.conn.close()
            self.child = None


def time_first(job: Job, timer: Timer, cap: float) -> tuple[JobCost, float]:
    """An experiment's first job: its cost and its one-off seconds (cold run minus warm run;
    0 when the cold run took over ``cap`` and was not repeated)."""
    cold = timer.seconds(job, 2 * cap)
    if cold is None:
        return JobCost(job, CAPPED, 2 * cap), 0.0
    if timer.failed:
        return JobCost(job, FAILED, cold), 0.0
    if cold > cap:
        return JobCost(job, TIMED, cold), 0.0
    warm = timer.seconds(job, cap)
    warm = cold if warm is None else min(cold, warm)
    return JobCost(job, TIMED, warm), cold - warm


def calibrate_experiment(
    jobs: list[Job], timer: Timer, budget: float, cap: float, workers: int
) -> list[JobCost]:
    """Costs of one experiment's ``jobs`` (in their order), timed smallest config first while
    under ``budget`` seconds and until one is capped; after a failed job the rest are unknown."""
    costs: dict[str, JobCost] = {}
    spent, one_off = 0.0, 0.0
    largest: JobCost | None = None
    most = 0.0  # the seconds of ``largest``
    for job in sorted(jobs, key=lambda j: size(j.config)):
        if any(c.source == FAILED for c in costs.values()):
            costs[job.key] = JobCost(job, UNKNOWN, None)
            continue
        stop = spent >= budget or any(c.source == CAPPED for c in costs.values())
        if largest is not None and stop:  # a larger job would be capped too
            costs[job.key] = JobCost(job, GUESSED, largest.seconds)
            continue
        if largest is None:
            cost, one_off = time_first(job, timer, cap)
        else:
            seconds = timer.seconds(job, cap)
            source = CAPPED if seconds is None else FAILED if timer.failed else TIMED
            cost = JobCost(job, source, cap if seconds is None else seconds)
        costs[job.key] = cost
        seconds = cost.seconds
        assert seconds is not None  # a job that ran: timed, failed or capped (at the cap)
        spent += seconds
        if largest is None or seconds >= most:
            largest, most = cost, seconds
    out = [costs[j.key] for j in jobs]
    for i, cost in enumerate(out[:workers]):  # each worker's first job of this experiment
        if cost.seconds is not None:
            out[i] = dataclasses.replace(cost, seconds=cost.seconds + one_off)
    return out


@dataclass(frozen=True)
class Calibration:
    costs: dict[str, JobCost]  # by job hash
    startup: float | None  # a worker's start-up seconds (None: nothing was timed)
    errors: dict[str, str]  # experiment -> the first line of its first failed job's error


def calibrate(
    groups: dict[str, list[Job]],
    budget: float = BUDGET,
    workers: int = 1,
    parallel: int | None = None,
) -> Calibration:
    """Costs of ``groups`` (experiment -> jobs without a stored timing, in submission order),
    timed in ``parallel`` child processes (default one per CPU), each taking whole
    experiments."""
    cap = max(CAP, budget)
    parallel = max(1, min(parallel or os.cpu_count() or 1, len(groups)))
    shares = [list(groups.values())[i::parallel] for i in range(parallel)]

    def time_share(share: list[list[Job]]) -> tuple[list[JobCost], Timer]:
        timer = Timer()
        try:
            costs = [
                c for jobs in share for c in calibrate_experiment(jobs, timer, budget, cap, workers)
            ]
            return costs, timer
        finally:
            timer.close()

    with ThreadPoolExecutor(parallel) as pool:
        results = list(pool.map(time_share, shares))
    return Calibration(
        {c.job.key: c for share, _ in results for c in share},
        max(timer.startup for _, timer in results),
        {name: error for _, timer in results for name, error in timer.errors.items()},
    )
