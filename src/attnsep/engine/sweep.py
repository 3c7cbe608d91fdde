"""Run jobs through an executor into the store, skipping the ones already there; check the
executor's options and a plan's calibration budget."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.resources import LONG_COMMAND, duration
from .jobs import Job, unique
from .store import Store
from .store_state import inspect

if TYPE_CHECKING:
    from .executors import Executor


@dataclass
class SweepOutcome:
    total: int = 0
    cached: int = 0
    computed: int = 0
    failed: list[dict[str, Any]] = field(default_factory=list)


def run_sweep(
    jobs: list[Job],
    store: Store,
    executor: str | Executor = "process",
    *,
    workers: int | None = None,
    address: str | None = None,
    on_start: Callable[[int, int], None] | None = None,
    on_done: Callable[[Job, dict[str, Any]], None] | None = None,
) -> SweepOutcome:
    """Compute every job missing from ``store`` on ``executor`` (an :class:`Executor`, or a
    backend's name with ``workers`` / ``address``); each finished job is stored at once.

    ``on_start(to_run, cached)`` and ``on_done(job, row)`` report progress.
    """
    jobs = unique(jobs)
    done = store.done_keys(job.key for job in jobs)
    todo = [job for job in jobs if job.key not in done]
    outcome = SweepOutcome(total=len(jobs), cached=len(jobs) - len(todo))
    if on_start is not None:
        on_start(len(todo), outcome.cached)
    if todo:
        engine = executor_for(executor, workers, address)
        todo = longest_first(todo, store, engine)
        for job, row in engine.map(todo):
            store.put(row)
            if row["status"] == "done":
                outcome.computed += 1
            else:
                outcome.failed.append(row)
            if on_done is not None:
                on_done(job, row)
    return outcome


def executor_for(
    executor: str | Executor, workers: int | None = None, address: str | None = None
) -> Executor:
    """The executor to run on, checked once: ``executor`` itself, or the backend its name
    makes with ``workers`` / ``address`` (``executors.make_executor``: each backend checks its
    own options; a Ray address must answer). The process machinery loads only here."""
    from .executors import as_executor

    return as_executor(executor, workers=workers, address=address)


class LongRun(UserWarning):
    """A run the plan prices above ``core.resources.LONG_COMMAND``: said as it starts."""


def longest_first(todo: list[Job], store: Store, engine: Executor) -> list[Job]:
    """``todo`` in the order the workers take it: by the plan's estimate, longest first (jobs
    it cannot price first of all, in their order), so that a long job does not start last and
    run alone; the wall estimate (``plan.Plan.wall``) assumes that order. Warns
    (:class:`LongRun`) when the plan prices the run above an hour of wall time on ``engine``
    (a lower bound: jobs it cannot price count as nothing)."""
    from .plan import list_schedule, make_plan

    groups: dict[str, list[Job]] = {}
    for job in todo:
        groups.setdefault(job.experiment, []).append(job)
    found = make_plan(groups, store, engine.name, engine.workers, budget=0)
    priced = {c.job.key: c.seconds for c in found.to_run}

    def longest(job: Job) -> float:
        seconds = priced.get(job.key)
        return -math.inf if seconds is None else -seconds

    ordered = sorted(todo, key=longest)
    seconds = [s for job in ordered if (s := priced.get(job.key)) is not None]
    wall = (found.startup or 0.0) + list_schedule(seconds, engine.workers) if seconds else 0.0
    if wall > LONG_COMMAND:
        warnings.warn(
            f"this run is priced at about {duration(wall)} on {engine.workers} "
            f"{engine.name} workers ({len(todo)} jobs); each finished job is stored, so it can "
            "be stopped and resumed by the same command",
            LongRun,
            stacklevel=2,
        )
    return ordered


def run_into(
    jobs: list[Job], path: str | Path, executor: Executor, **engine: Any
) -> tuple[Path, tuple[dict[str, Any], ...], SweepOutcome]:
    """Run ``jobs`` into the store at ``path`` (created if missing, in a folder that exists;
    another program's file is refused untouched; stored jobs are skipped; jobs that cannot fit
    this machine's memory are refused first, ``memory.check_memory``): the store's path, the
    stored rows of the jobs in job order, and what was run. ``engine``: :func:`run_sweep`'s
    keywords."""
    from .memory import check_memory

    check_memory(jobs, executor, "the sizes set (--set, --grid) or the workers")
    store = Store(path)
    try:
        outcome = run_sweep(jobs, store, executor, **engine)
        found = {row["config_hash"]: row for row in store.rows(keys=[job.key for job in jobs])}
    finally:
        store.close()
    rows = tuple(found[key] for key in dict.fromkeys(job.key for job in jobs) if key in found)
    return store.path, rows, outcome


def not_stored(jobs: list[Job], path: str | Path) -> list[Job]:
    """The jobs the store at ``path`` does not hold finished (all of them when there is no
    store there); the file is only read."""
    if inspect(path) not in ("current", "unstamped"):
        return jobs
    store = Store.open_read(path)
    try:
        done = store.done_keys(job.key for job in jobs)
    finally:
        store.close()
    return [job for job in jobs if job.key not in done]
