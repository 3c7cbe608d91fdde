"""What a sweep will cost before it runs (``--plan``): jobs per experiment, how many the
store already holds, the CPU seconds of the others and the wall time on the executor's workers.

Each job still to run gets an estimate from the first of these that has one:

* ``store``: a finished row of the same experiment and config, any version of the
  experiment (a version bump keeps its timings): its ``seconds``, the median if several;
* ``published``: the same experiment and config (any version) in the timings of the
  published runs shipped with the package (``published_timings.json``: the quick and
  standard presets on a 2-core CPU machine shared with other work), in this machine's seconds
  when a calibration is allowed (:mod:`attnsep.engine.host_speed`);
* ``model``: another size of the same experiment, timed in the store, the published runs or
  the calibration, scaled by the experiment's work count (:mod:`attnsep.engine.cost_model`);
  fitted on the quick preset it predicted the standard preset's experiments within 0.44x to
  3.0x (1.2x in total);
* ``timed``, ``capped``, ``guessed``, ``failed``: a short calibration on this machine
  (:mod:`attnsep.engine.calibration`), for experiments nothing has timed yet; ``capped`` and
  ``guessed`` jobs make an estimate rough (``≳``: usually an underestimate);
* ``unknown`` when there is neither (``--calibration 0`` and nothing stored).

The wall estimate hands the estimates, longest first (the order a sweep submits its jobs in,
``sweep.longest_first``), to ``workers`` workers that each take the next job when free (what
the process pool and Ray do), after a worker's start-up when the calibration measured it; it
leaves out the slowdown of jobs sharing a machine.
"""

from __future__ import annotations

import heapq
import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..experiments import base
from . import cost_model
from .calibration import (
    BUDGET,
    CAPPED,
    FAILED,
    GUESSED,
    ROUGH,
    STORE,
    STORED,
    TIMED,
    UNKNOWN,
    Calibration,
    JobCost,
    calibrate,
)
from .host_speed import HostSpeed, host_speed, worth_timing
from .jobs import Job, key_at, unique
from .memory import Need
from .published import (
    config_text,
    median_seconds,
    published_by_config,
    published_startup,
    published_timings,
)
from .store import Store

PUBLISHED = "published"
MODEL = "model"


@dataclass
class ExperimentPlan:
    name: str
    costs: list[JobCost] = field(default_factory=list)
    peak: float | None = None  # bytes its largest job to run holds (``memory.peak``)

    @property
    def to_run(self) -> list[JobCost]:
        return [c for c in self.costs if c.source != STORED]

    @property
    def stored(self) -> int:
        return len(self.costs) - len(self.to_run)

    @property
    def cpu(self) -> float | None:
        """Estimated CPU seconds of the jobs to run (None if one of them is unknown)."""
        return total(c.seconds for c in self.to_run)

    @property
    def stored_cpu(self) -> float:
        """CPU seconds the stored jobs took when they ran."""
        stored = [c.seconds for c in self.costs if c.source == STORED]
        return float(sum(s for s in stored if s is not None))

    @property
    def rough(self) -> bool:
        return any(c.source in ROUGH for c in self.to_run)

    @property
    def sources(self) -> Counter:
        return Counter(c.source for c in self.to_run)


@dataclass
class Plan:
    experiments: list[ExperimentPlan]
    executor: str
    workers: int
    startup: float | None = None  # a worker's start-up seconds (measured here, else published)
    errors: dict[str, str] = field(default_factory=dict)  # experiment -> a calibration error
    memory: Need | None = None  # what the largest jobs to run hold side by side
    speed: HostSpeed | None = None  # this machine against the published timings' (scaled by it)

    @property
    def to_run(self) -> list[JobCost]:
        return [c for e in self.experiments for c in e.to_run]

    @property
    def cpu(self) -> float | None:
        return total(c.seconds for c in self.to_run)

    @property
    def wall(self) -> float | None:
        to_run = self.to_run
        seconds = [c.seconds for c in to_run if c.seconds is not None]
        if len(seconds) < len(to_run):
            return None
        startup = self.startup if seconds and self.startup is not None else 0.0
        return startup + list_schedule(sorted(seconds, reverse=True), self.workers)

    @property
    def stored_cpu(self) -> float:
        return float(sum(e.stored_cpu for e in self.experiments))

    @property
    def rough(self) -> bool:
        return any(e.rough for e in self.experiments)

    def as_dict(self) -> dict[str, Any]:
        return {
            "executor": self.executor,
            "workers": self.workers,
            "experiments": [
                {
                    "experiment": e.name,
                    "jobs": len(e.costs),
                    "stored": e.stored,
                    "to_run": len(e.to_run),
                    "cpu_seconds": e.cpu,
                    "stored_cpu_seconds": e.stored_cpu,
                    "rough": e.rough,
                    "sources": dict(e.sources),
                    "peak_bytes": e.peak,
                }
                for e in self.experiments
            ],
            "jobs": sum(len(e.costs) for e in self.experiments),
            "stored": sum(e.stored for e in self.experiments),
            "to_run": len(self.to_run),
            "cpu_seconds": self.cpu,
            "stored_cpu_seconds": self.stored_cpu,
            "wall_seconds": self.wall,
            "startup_seconds": self.startup,
            "rough": self.rough,
            "calibration_errors": self.errors,
            "memory": None if self.memory is None else self.memory.as_dict(),
            "host_speed": None if self.speed is None else self.speed.factor,
        }


def total(seconds: Iterable[float | None]) -> float | None:
    values = list(seconds)
    known = [v for v in values if v is not None]
    return None if len(known) < len(values) else float(sum(known))


def list_schedule(seconds: list[float], workers: int) -> float:
    """When the last job ends if ``workers`` workers take the jobs in order, each the next one
    as soon as it is free."""
    free_at = [0.0] * min(workers, max(1, len(seconds)))
    for s in seconds:
        heapq.heappush(free_at, heapq.heappop(free_at) + s)
    return max(free_at)


def stored_timings(store: Store | None, names: Iterable[str]) -> dict[tuple[str, str], float]:
    """Median ``seconds`` of the store's finished rows per (experiment, config), of the rows
    that cost as the experiment's current version does (:func:`costs_as_now`)."""
    rows = [] if store is None else [row for name in names for row in store.rows(name)]
    priced = [row for row in rows if costs_as_now(row)]
    return median_seconds(priced, lambda row: (row["experiment"], config_text(row["config"])))


def costs_as_now(row: dict[str, Any]) -> bool:
    """Whether a stored row ran a version of its experiment that costs what the current one
    does: any, unless the experiment names the version its cost changed (``priced_from``), when
    the row's hash must be its config's at that version or a later one."""
    exp = base.get(row["experiment"])
    if exp.priced_from <= 1:
        return True
    versions = range(exp.priced_from, exp.version + 1)
    return row["config_hash"] in {key_at(exp.name, v, row["config"]) for v in versions}


def make_plan(
    groups: dict[str, list[Job]],
    store: Store | None,
    executor: str,
    workers: int,
    *,
    budget: float = BUDGET,
    timing: Callable[..., Calibration] | None = None,
) -> Plan:
    """The plan of running ``groups`` (experiment -> jobs, in submission order) into ``store``
    (None: an empty store) on ``workers`` workers. Nothing is stored; only the calibration
    (``timing``, default :func:`calibrate`, ``budget`` seconds per experiment, 0 for none)
    runs jobs."""
    groups = {name: unique(jobs) for name, jobs in groups.items()}  # hashes name experiments
    keys = [j.key for jobs in groups.values() for j in jobs]
    rows = [] if store is None else store.rows(keys=keys)
    done = {r["config_hash"]: r["seconds"] for r in rows if r["status"] == "done"}
    timings = stored_timings(store, groups)
    published = published_timings()
    costs, untimed = price(groups, done, timings, published)
    priced = sum(c.seconds or 0.0 for c in costs.values() if c.source in (PUBLISHED, MODEL))
    here = worth_timing(budget, executor, priced)
    speed = host_speed(published, timing or calibrate) if here else None
    if speed is not None:
        published = speed.scaled(published)
        costs, untimed = price(groups, done, timings, published)
    found = Calibration({}, None, {})
    if budget > 0 and untimed:
        found = (timing or calibrate)(untimed, budget=budget, workers=workers)
        costs.update(found.costs)
        costs.update(scale_rough(untimed, found.costs))
    for jobs in untimed.values():
        for job in jobs:
            costs.setdefault(job.key, JobCost(job, UNKNOWN, None))
    experiments = [
        ExperimentPlan(name, [costs[j.key] for j in jobs]) for name, jobs in groups.items()
    ]
    startup = found.startup or (speed and speed.startup) or published_startup()
    return Plan(experiments, executor, workers, startup, found.errors, speed=speed)


def price(
    groups: dict[str, list[Job]],
    done: dict[str, float],
    timings: dict[tuple[str, str], float],
    published: dict[str, dict[str, Any]],
) -> tuple[dict[str, JobCost], dict[str, list[Job]]]:
    """Each job's cost from the first source above but the calibration; the jobs left, by name."""
    same_job = published_by_config(published)
    models = {name: fit_costs(name, timings, published) for name in groups}
    costs: dict[str, JobCost] = {}
    untimed: dict[str, list[Job]] = {}
    for name, jobs in groups.items():
        for job in jobs:
            text = config_text(job.config)
            if job.key in done:
                costs[job.key] = JobCost(job, STORED, done[job.key])
            elif (seconds := timings.get((name, text))) is not None:
                costs[job.key] = JobCost(job, STORE, seconds)
            elif (seconds := same_job.get((name, text))) is not None:
                costs[job.key] = JobCost(job, PUBLISHED, seconds)
            elif (seconds := cost_model.estimate(models[name], name, job.config)) is not None:
                costs[job.key] = JobCost(job, MODEL, seconds)
            else:
                untimed.setdefault(name, []).append(job)
    return costs, untimed


def fit_costs(
    name: str, timings: dict[tuple[str, str], float], published: dict[str, dict[str, Any]]
) -> cost_model.Model:
    """``name``'s cost model from its jobs timed in the store and in the published runs."""
    timed = [(json.loads(text), s) for (exp, text), s in timings.items() if exp == name]
    timed += [(p["config"], p["seconds"]) for p in published.values() if p["experiment"] == name]
    return cost_model.fit_configs(name, timed)


def scale_rough(untimed: dict[str, list[Job]], calibrated: dict[str, JobCost]) -> dict:
    """The calibration's ``capped`` and ``guessed`` jobs re-estimated by the cost model fitted
    on the jobs it timed (a capped job at least at its cap)."""
    out = {}
    for name, jobs in untimed.items():
        timed = [calibrated[j.key] for j in jobs if calibrated[j.key].source == TIMED]
        model = cost_model.fit_configs(
            name, [(c.job.config, c.seconds) for c in timed if c.seconds is not None]
        )
        for job in jobs:
            cost = calibrated[job.key]
            scaled = cost_model.estimate(model, name, job.config)
            if cost.source in ROUGH and scaled is not None:
                if cost.source == CAPPED:
                    assert cost.seconds is not None  # a capped job ran to its cap
                    scaled = max(scaled, cost.seconds)
                out[job.key] = JobCost(job, MODEL, scaled)
    return out


def duration(seconds: float | None, rough: bool = False) -> str:
    """``1 h 05 min``, ``3 min 12 s``, ``4.2 s``; ``≳`` before a rough estimate."""
    if seconds is None:
        return "unknown"
    sign = "≳ " if rough else ""
    if seconds < 60:
        return f"{sign}{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{sign}{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{sign}{hours} h {minutes:02d} min"


SOURCES = (STORE, PUBLISHED, MODEL, TIMED, CAPPED, GUESSED, FAILED, UNKNOWN)


def describe_sources(e: ExperimentPlan) -> str:
    """Where an experiment's estimate came from, in jobs, e.g. ``timed 2, guessed 4``."""
    return ", ".join(f"{s} {e.sources[s]}" for s in SOURCES if e.sources[s]) or "-"


HEADER = ("experiment", "jobs", "stored", "to run", "CPU to run", "from (jobs)")


def table_rows(plan: Plan) -> list[tuple[str, ...]]:
    """The plan as rows under ``HEADER``, the last one the total."""
    rows: list[tuple[str, ...]] = [
        (
            e.name,
            str(len(e.costs)),
            str(e.stored),
            str(len(e.to_run)),
            duration(e.cpu, e.rough),
            describe_sources(e),
        )
        for e in plan.experiments
    ]
    rows.append(
        (
            "total",
            str(sum(len(e.costs) for e in plan.experiments)),
            str(sum(e.stored for e in plan.experiments)),
            str(len(plan.to_run)),
            duration(plan.cpu, plan.rough),
            "",
        )
    )
    return rows


def summary_lines(plan: Plan) -> list[str]:
    """Below the table: the wall estimate, the stored jobs' CPU, calibration failures, a warning
    when most estimates are rough, and what the sources mean."""
    stored = sum(e.stored for e in plan.experiments)
    startup = (
        "worker start-up not included"
        if plan.startup is None
        else f"after each worker's start-up, {duration(plan.startup)}"
    )
    lines = [
        f"wall estimate on {plan.workers} {plan.executor} worker"
        f"{'s' if plan.workers != 1 else ''}: {duration(plan.wall, plan.rough)} "
        f"(jobs taken longest first by the next free worker, {startup})"
    ]
    if plan.memory is not None:
        refused = "" if plan.memory.fits else " (more than available: the run would be refused)"
        lines.append(plan.memory.sentence() + refused)
    if stored:
        lines.append(f"the {stored} stored jobs took {duration(plan.stored_cpu)} of CPU")
    for name, error in plan.errors.items():
        lines.append(f"{name}: a job failed in the calibration ({error}); fix it before running")
    searches = [
        e.name for e in plan.experiments if e.sources[MODEL] and cost_model.searches(e.name)
    ]
    if searches:
        lines.append(
            f"{', '.join(searches)}: a threshold search costs what its threshold makes it cost; "
            "the model takes the threshold from the law the paper claims"
        )
    rough = sum(c.source in ROUGH for c in plan.to_run)
    if 2 * rough > len(plan.to_run):
        lines.append(
            f"{rough} of the {len(plan.to_run)} jobs to run are capped or guessed: the estimate "
            "can be far too low; a store holding an earlier run of these sizes (--store) or a "
            "longer calibration (--calibration SECONDS) gives better ones"
        )
    if plan.speed is not None:
        lines.append(
            f"published timings scaled by this machine's speed: {plan.speed.factor:.2f}x their "
            f"seconds ({plan.speed.jobs} published jobs timed here)"
        )
    lines.append(
        "from: store = the same config's stored seconds; published = the published runs' "
        "seconds for the same job (a shared 2-core machine); model = other sizes of the "
        "experiment, timed, scaled by its work count (0.44x-3.0x off in a test); timed = timed "
        "here; capped = stopped here at the calibration's cap and counted at it; guessed = not "
        "timed, counted as the largest timed job of its experiment; ≳ = includes capped or "
        "guessed jobs, usually an underestimate"
    )
    return lines
