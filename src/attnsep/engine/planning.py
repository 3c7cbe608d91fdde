"""What running jobs would cost, nothing run or stored (``--plan``): the jobs per experiment,
how many the store holds, and the estimated CPU and wall time (``engine.plan``). Public
through ``attnsep.api``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..configs import CALIBRATION_BUDGET
from .store import DEFAULT_PATH, Store
from .store_state import inspect

if TYPE_CHECKING:
    from .executors import Executor
    from .jobs import Job
    from .plan import Plan


def plan(
    groups: dict[str, list[Job]],
    store: str | Path = DEFAULT_PATH,
    executor: str | Executor = "process",
    budget: float = CALIBRATION_BUDGET,
) -> Plan:
    """What running ``groups`` (experiment -> jobs, in submission order) into ``store`` would
    cost (``--plan``): jobs stored, CPU and wall time per experiment (``engine.plan.Plan``).
    The store is read, never created or changed; a short calibration (``budget`` seconds per
    experiment, 0 for none) times jobs no timing covers. Raises ``CalibrationFailed`` when it
    cannot.

    Parameters
    ----------
    groups
        Experiment name -> its jobs (``engine.jobs.Job``), in submission order.
    store
        The results database whose stored jobs need no running (read only; a missing one
        holds none).
    executor
        The executor the wall time is estimated for: a name or an executor built with its
        options, as for [`run_experiment`][attnsep.api.run_experiment].
    budget
        Seconds per experiment spent timing jobs that have no stored timing (0: none, and
        the published timings taken as they are, not in this machine's seconds).

    Returns
    -------
    Plan
        ``as_dict()`` for scripts, [`plan_table`][attnsep.api.plan_table] for people; with the
        memory its largest jobs hold side by side (``engine.memory.need``).
    """
    from .memory import need, peak
    from .plan import make_plan  # the calibration's machinery: only for a plan
    from .sweep import executor_for

    engine = executor_for(executor)
    stored = inspect(store) in ("current", "unstamped")  # another program's file: refused
    opened = Store.open_read(store) if stored else None  # a plan creates no store
    try:
        found = make_plan(groups, opened, engine.name, engine.workers, budget=budget)
    finally:
        if opened is not None:
            opened.close()
    for experiment in found.experiments:
        peaks = [p for c in experiment.to_run if (p := peak(c.job)) is not None]
        experiment.peak = max(peaks, default=None)
    found.memory = need([c.job for c in found.to_run], engine)
    return found


def sweep_plan(
    experiment: str,
    grid: dict[str, list[Any]] | Sequence[str] | None = None,
    *,
    fixed: dict[str, Any] | Sequence[str] | None = None,
    config_file: str | Path | None = None,
    preset: str = "quick",
    store: str | Path = DEFAULT_PATH,
    executor: str | Executor = "process",
    calibration: float = CALIBRATION_BUDGET,
) -> Plan:
    """What [`sweep`][attnsep.api.sweep] would cost, nothing run or stored (``attnsep sweep
    --plan``): the jobs, how many are stored, the estimated CPU and wall time.

    Parameters
    ----------
    experiment
        An experiment name ([`experiments`][attnsep.api.experiments]).
    grid
        ``{field: [value, ...]}``, or ``["field=v1,v2", ...]``, as for
        [`sweep`][attnsep.api.sweep].
    fixed
        ``{field: value}``, or ``["field=value", ...]``: fields set at every point.
    config_file
        A TOML or YAML file with ``set`` and ``grid`` tables.
    preset
        The preset the fields start from.
    store
        The results database whose stored jobs need no running, as for
        [`plan`][attnsep.api.plan].
    executor
        The executor the wall time is estimated for, as for [`plan`][attnsep.api.plan].
    calibration
        Seconds per experiment spent timing jobs that have no stored timing (0: none, and
        the published timings taken as they are, not in this machine's seconds).

    Returns
    -------
    Plan
        ``as_dict()`` for scripts, [`plan_table`][attnsep.api.plan_table] for people. Raises
        ``CalibrationFailed`` when the calibration cannot time a job.
    """
    from ..core.validate import seconds
    from .jobs import sweep_jobs
    from .sweep import executor_for

    seconds("calibration", calibration)
    engine = executor_for(executor)
    _, jobs = sweep_jobs(experiment, preset, fixed, grid, config_file)
    return plan({experiment: jobs}, store, engine, budget=calibration)


def preset_costs(experiment: str) -> dict[str, dict[str, Any]]:
    """Per preset of ``experiment``: its ``jobs``, their estimated ``cpu_seconds``, whether the
    estimate is ``rough`` and its ``sources`` (``Plan.as_dict``), from the published timings
    and the cost model alone: no store is read and nothing runs (``None``: no estimate); and
    ``peak_bytes``, the memory its largest job holds (``Experiment.peak``)."""
    from ..experiments import base
    from .jobs import jobs_for
    from .memory import peak
    from .plan import make_plan

    found = base.get(experiment)
    out = {}
    for preset in base.PRESETS:
        jobs = {experiment: jobs_for(experiment, found.config(preset))}
        row = make_plan(jobs, None, "inline", 1, budget=0).as_dict()["experiments"][0]
        out[preset] = {key: row[key] for key in ("jobs", "cpu_seconds", "rough", "sources")}
        peaks = [p for job in jobs[experiment] if (p := peak(job)) is not None]
        out[preset]["peak_bytes"] = max(peaks, default=None)
    return out
