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
    from .executors import run_jobs  # the process machinery: only when jobs run

    jobs = unique(jobs)
    done = store.done_keys(job.key for job in jobs)
    todo = [job for job in jobs if job.key not in done]
    outcome = SweepOutcome(total=len(jobs), cached=len(jobs) - len(todo))
    if on_start is not None:
        on_start(len(todo), outcome.cached)
    if todo:
        for job, row in run_jobs(todo, executor, workers=workers, address=address):
            store.put(row)
            if row["status"] == "done":
                outcome.computed += 1
            else:
                outcome.failed.append(row)
            if on_done is not None:
                on_done(job, row)
    return outcome


def check_engine(
    executor: str | Executor, workers: int | None = None, address: str | None = None
) -> None:
    """``executor``, ``workers`` and ``address`` agree (and the Ray address answers): a
    backend's name is checked with its options by the backend itself
    (``executors.make_executor``); an :class:`Executor` object carries its own."""
    from .executors import Executor, make_executor

    if isinstance(executor, Executor):
        require(
            workers is None and address is None,
            "workers and address are the executor's own options: give them to it, not beside it",
        )
        return
    make_executor(executor, workers=workers, address=address)


def run_into(
    jobs: list[Job], path: str | Path, executor: str | Executor, **engine: Any
) -> tuple[Path, tuple[dict[str, Any], ...], SweepOutcome]:
    """Run ``jobs`` into the store at ``path`` (created if missing; stored jobs are skipped):
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
