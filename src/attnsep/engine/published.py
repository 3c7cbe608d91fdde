"""The timings of the published runs shipped with the package (``published_timings.json``:
the quick and standard presets on a 2-core CPU machine shared with other work): reading them,
pricing one job from them, and writing them from stores (``bench/publish_timings.py``)."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import cost_model
from .store import Store

if TYPE_CHECKING:
    from ..experiments.costs import Parts

PUBLISHED_TIMINGS = Path(__file__).with_name("published_timings.json")


def published_timings() -> dict[str, dict[str, Any]]:
    """Job hash -> ``{"experiment", "config", "seconds"}`` of the published runs (empty when
    the file is missing)."""
    path = PUBLISHED_TIMINGS
    return json.loads(path.read_text())["jobs"] if path.exists() else {}


def published_startup() -> float | None:
    """A worker's published start-up seconds (spawn, torch and the experiments loaded), measured
    with the published timings; ``None`` when the file has none."""
    path = PUBLISHED_TIMINGS
    return json.loads(path.read_text()).get("worker_startup_seconds") if path.exists() else None


def measure_startup(repeats: int = 3) -> float:
    """The median seconds a fresh Python process takes to load what a worker loads before its
    first job (``executors.load``): the fixed cost each worker adds to a run."""
    code = "from attnsep.engine.executors import load; load('one-step')"
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        seconds.append(time.perf_counter() - started)
    return sorted(seconds)[len(seconds) // 2]


def price(experiment: str, work: Parts) -> float | None:
    """Seconds of a computation of ``work`` (units by part, as ``experiment`` counts its jobs'
    work: ``Experiment.work``), from that experiment's cost model fitted to its published
    timings (None: no model); torch-free and quick, for the API's guard before a run."""
    timed = [
        (p["config"], p["seconds"])
        for p in published_timings().values()
        if p["experiment"] == experiment
    ]
    return cost_model.predict(cost_model.fit_configs(experiment, timed), work)


def published_by_config(published: dict[str, dict[str, Any]]) -> dict[tuple[str, str], float]:
    """The published seconds by ``(experiment, config_text(config))``: a version bump that
    leaves a config as it was keeps its timing."""
    return {(p["experiment"], config_text(p["config"])): p["seconds"] for p in published.values()}


def write_published_timings(
    stores: Iterable[Store],
    path: Path,
    only: Iterable[str] | None = None,
    startup: float | None = None,
    replace: bool = False,
) -> int:
    """Add the finished jobs of ``stores`` (job hash -> experiment, config and median seconds)
    to the timings ``path`` holds (a job timed again replaces the entries of its config, as
    :func:`config_text` reads it, in any version and on any master seed), those of the
    experiments ``only`` names when given, and a worker's ``startup`` seconds when given (else
    the one it holds); with ``replace``, the entries it held of those experiments go first (a
    faster algorithm retires every old timing). The number of jobs written."""
    keep = None if only is None else set(only)
    rows = {
        row["config_hash"]: row
        for store in stores
        for row in store.rows()
        if keep is None or row["experiment"] in keep
    }
    medians = median_seconds(rows.values(), lambda row: row["config_hash"])
    timed = {
        key: {
            "experiment": rows[key]["experiment"],
            "config": rows[key]["config"],
            "seconds": round(medians[key], 3),
        }
        for key in medians
    }
    held = json.loads(path.read_text()) if path.exists() else {}
    retimed = {(job["experiment"], config_text(job["config"])) for job in timed.values()}
    kept = {
        key: job
        for key, job in held.get("jobs", {}).items()
        if not (replace and keep is not None and job["experiment"] in keep)
        and (job["experiment"], config_text(job["config"])) not in retimed
    }
    jobs = dict(sorted({**kept, **timed}.items()))
    startup = held.get("worker_startup_seconds") if startup is None else round(startup, 3)
    lines = [f"{json.dumps(key)}: {json.dumps(job, sort_keys=True)}" for key, job in jobs.items()]
    head = "{" if startup is None else f'{{"worker_startup_seconds": {json.dumps(startup)},\n'
    path.write_text(head + '"jobs": {\n' + ",\n".join(lines) + "\n}}\n")  # a job per line
    return len(medians)


def config_text(config: dict[str, Any]) -> str:
    """A job's config as the key of its timing; the master seed is left out (it does not change
    what a job costs, so a run on ``--seed S`` is priced by the same config's timings)."""
    return json.dumps({k: v for k, v in config.items() if k != "seed"}, sort_keys=True)


def median_seconds(rows: Iterable[dict[str, Any]], key: Callable[[dict], Any]) -> dict:
    """Median ``seconds`` of the finished ``rows`` per ``key(row)``."""
    found: dict[Any, list[float]] = {}
    for row in rows:
        if row["status"] == "done":
            found.setdefault(key(row), []).append(row["seconds"])
    return {k: statistics.median(values) for k, values in found.items()}
