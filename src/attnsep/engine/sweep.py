"""Run jobs through an executor into the store, skipping the ones already there; check the
executor's options and a plan's calibration budget."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.validate import require
from .jobs import Job
from .store import Store

if TYPE_CHECKING:
    from .executors import Executor


@dataclass
class SweepOutcome:
    total: int = 0
    cached: int = 0
    computed: int = 0
    failed: list[dict[str, Any]] = field(default_factory=list)


def unique(jobs: list[Job]) -> list[Job]:
    """``jobs`` without repeats (same hash), in their first order."""
    seen: dict[str, Job] = {}
    for job in jobs:
        seen.setdefault(job.key, job)
    return list(seen.values())


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


def run_into(
    jobs: list[Job], path: str | Path, executor: str | Executor, **engine: Any
) -> tuple[Path, tuple[dict[str, Any], ...], SweepOutcome]:
    """Run ``jobs`` into the store at ``path`` (created if missing, in a folder that exists;
    another program's file is refused untouched; stored jobs are skipped):
    the store's path, the stored rows of the jobs in job order, and what was run.
    ``engine``: :func:`run_sweep`'s keywords."""
    store = Store(path)
    try:
        outcome = run_sweep(jobs, store, executor, **engine)
        found = {row["config_hash"]: row for row in store.rows(keys=[job.key for job in jobs])}
    finally:
        store.close()
    rows = tuple(found[key] for key in dict.fromkeys(job.key for job in jobs) if key in found)
    return store.path, rows, outcome


def check_budget(calibration: float) -> None:
    """A plan's calibration budget is a finite number of seconds ``>= 0``."""
    require(
        math.isfinite(calibration) and calibration >= 0,
        f"calibration must be a finite number of seconds >= 0, got {calibration}",
    )
