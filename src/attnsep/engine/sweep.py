"""Run jobs through an executor into the store, skipping the ones already there."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .executors import Executor, run_jobs
from .jobs import Job
from .store import Store


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
        for job, row in run_jobs(todo, executor, workers=workers, address=address):
            store.put(row)
            if row["status"] == "done":
                outcome.computed += 1
            else:
                outcome.failed.append(row)
            if on_done is not None:
                on_done(job, row)
    return outcome
