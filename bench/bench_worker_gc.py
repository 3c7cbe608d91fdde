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
PRESET_JOBS = {"quick": 161, "standard": 386}
"""Jobs of each preset from an empty store (the jobs the store holds after one run)."""


def collections() -> tuple[list[float], list[float]]:
    """In a pool worker: per job, the seconds of a full collection without and with the
    freezing (the worker's own, after ``execute``)."""
    from attnsep.report.reproduction import planned

    _, groups, _ = planned("quick", EXPERIMENTS, None, "inline", None)
    jobs = [job for group in groups.values() for job in group][:JOBS]
    plain, frozen = [], []
    for job in jobs:
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
    saved = ", ".join(
        f"{name}'s {jobs} jobs x that / 2 workers = {jobs * (p - f) / 2:.1f} s of wall"
        for name, jobs in PRESET_JOBS.items()
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
