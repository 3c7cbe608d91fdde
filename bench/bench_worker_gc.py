"""Target 18: the garbage collection a pool worker runs after each job
(``core.resources.release_freed_memory``), with what outlived the earlier jobs frozen
(``gc.freeze``, what pool workers do) against the same collection scanning everything.

One fresh (``spawn``) worker runs quick-preset jobs of three experiments, as a reproduction's
worker would; after each job it times one collection of its whole heap, then the collection it
really makes (collect, freeze). The saving per job times a preset's job count, over its
workers, is wall time a reproduction no longer spends between jobs.
"""

from __future__ import annotations

import gc
import statistics
import time

from common import fmt_time, row

from attnsep.engine import executors

EXPERIMENTS = ["length-generalization", "select-convergence", "finite-samples"]
JOBS = 8
WORKERS = 2
"""The workers a reproduction on this 2-core machine runs (the saving is spread over them)."""


def jobs_of(preset: str, names: list[str] | None = None) -> list:
    """The jobs of ``preset``'s reproduction (of ``names``; default all), master seed 0."""
    from attnsep.report.reproduction import planned

    _, groups, _ = planned(preset, names, None, "inline", None)
    return [job for group in groups.values() for job in group]


def collections() -> tuple[list[float], list[float]]:
    """In a pool worker: per job, the seconds of a full collection without and with the
    freezing (the worker's own, after ``execute``)."""
    plain, frozen = [], []
    for job in jobs_of("quick", EXPERIMENTS)[:JOBS]:
        executors.execute(job)  # ends with the collection and the freeze
        started = time.process_time()
        gc.collect()
        frozen.append(time.process_time() - started)
        gc.unfreeze()
        started = time.process_time()
        gc.collect()
        plain.append(time.process_time() - started)
        gc.freeze()
    return plain, frozen


def run() -> list[dict]:
    with executors.spawn_pool(1) as pool:
        plain, frozen = pool.submit(collections).result()
    p, f = statistics.median(plain), statistics.median(frozen)
    counts = {preset: len(jobs_of(preset)) for preset in ("quick", "standard")}
    saved = ", ".join(
        f"{preset}'s {jobs} jobs x that / {WORKERS} workers = {jobs * (p - f) / WORKERS:.1f} s"
        for preset, jobs in counts.items()
    )
    return [
        row(
            "worker_gc: a pool worker's collection after a job, survivors frozen vs not",
            f"{fmt_time(f)} CPU (median of {len(frozen)} jobs)",
            f"whole heap: {fmt_time(p)} CPU",
            p / f if f > 0 else None,
            "report",
            None,
            f"saved per job {fmt_time(p - f)}; {saved}",
        )
    ]
