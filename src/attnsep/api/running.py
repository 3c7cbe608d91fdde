"""The API's experiments through the engine: one experiment judged, or a sweep over a grid of
its config (SPEC A7, B5, C; ``attnsep sweep``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.validate import callback, one_of, shown
from ..engine.store import DEFAULT_PATH

if TYPE_CHECKING:
    import pandas as pd

    from ..engine.executors import Executor
    from ..engine.jobs import Job
    from ..engine.plan import Plan
    from ..experiments.base import Experiment, ExperimentConfig
    from ..report.text_table import TextTable
    from ..results import (
        ExperimentResult,
        SweepResult,
    )


def experiments() -> list[dict[str, str]]:
    """The registered experiments, one per claim of SPEC A7, B5, C (``attnsep list``): each
    one's ``name``, ``claim``, ``title``, ``paper`` (the paper's statement) and
    ``companions`` (the further entries it may judge), as plain dicts; read from the catalog
    (``experiments.built_in``, pure data), so this loads neither numpy nor torch."""
    from ..experiments import catalog

    return [dict(item) for item in catalog()]


def show(name: str) -> dict[str, Any]:
    """What experiment ``name`` is and what its config accepts (``attnsep show NAME``).

    Parameters
    ----------
    name
        An experiment's name (``experiments()``).

    Returns
    -------
    dict
        The claim (``name``, ``claim``, ``title``, ``kind``, ``paper``, ``section``), ``version``,
        ``criterion_version`` and ``tuned_on`` (the master seeds its criterion was tuned on),
        ``description`` (the config's docstring: what runs and the criterion), ``fields`` (each
        with ``type``, ``default``, ``required``, ``limits``: pydantic's ``ge``, ``min_length``,
        ..., ``choices``, and those of a list's ``items`` and a dict's ``keys`` and ``values``;
        ``help``), ``presets`` (per preset the fields it sets) with ``preset_help``, and
        ``cost`` (per preset its ``jobs`` and estimated ``cpu_seconds``, from the published
        timings and the cost model only: ``None`` where they have none; and ``peak_bytes``,
        the memory its largest job holds).
    """
    from ..engine.jobs import check_experiment

    check_experiment(name)  # read from the sources: an unknown name answers at once
    from ..engine.planning import preset_costs
    from ..experiments import base, schema

    return {**schema.describe(base.get(name)), "cost": preset_costs(name)}


def list_experiments() -> pd.DataFrame:
    """The registered experiments ([`experiments`][attnsep.api.experiments]) as a DataFrame
    with the columns ``name``, ``claim``, ``title`` and ``paper``."""
    import pandas as pd

    return pd.DataFrame(experiments())


def executor(
    name: str = "process", *, workers: int | None = None, address: str | None = None
) -> Executor:
    """An executor built once with its options, for ``executor=`` of
    [`run_experiment`][attnsep.api.run_experiment], [`sweep`][attnsep.api.sweep],
    [`reproduce`][attnsep.api.reproduce] and their plans (``attnsep ... --executor --workers
    --address``); each backend checks its own options.

    Parameters
    ----------
    name
        ``inline`` (this process), ``process`` (a local pool) or ``ray``.
    workers
        The process pool's size (``process`` only; ``None``: the CPUs).
    address
        The Ray cluster's address, ``host:port`` (``ray`` only; ``None``: a running or a local
        instance); it must answer.

    Returns
    -------
    Executor
        ``name``, ``workers`` and ``submit``/``shutdown`` (``attnsep.engine.executors``).
    """
    from ..engine.sweep import executor_for

    return executor_for(name, workers, address)


def run_experiment(
    name: str,
    preset: str = "quick",
    config: dict[str, Any] | None = None,
    *,
    executor: str | Executor = "inline",
    store: str | Path = DEFAULT_PATH,
) -> ExperimentResult:
    """Run one registered experiment through the engine and judge its claim (SPEC A7, B5, C).

    The jobs are those of ``attnsep reproduce --PRESET --only NAME`` when ``config`` is
    ``None``; every finished job is stored, and a job already in the store is not computed
    again.

    Parameters
    ----------
    name
        An experiment name ([`experiments`][attnsep.api.experiments]).
    preset
        ``quick``, ``standard`` or ``full``: the sizes the config starts from.
    config
        Fields that override the preset's (validated by the experiment's typed config).
    executor
        Where the jobs run: ``inline`` (this process), ``process`` (a local pool, one worker
        per CPU) or ``ray`` (a running or a local instance); or an executor built once with
        its options ([`executor`][attnsep.api.executor], or your own ``Executor`` subclass).
    store
        The SQLite results database (created if missing).

    Returns
    -------
    ExperimentResult
        The stored rows, the records, and the verdict (``reproduced``, ``not reproduced``,
        ``inconclusive``, or ``incomplete`` when a job failed).
    """
    from ..engine.jobs import jobs_for
    from ..engine.sweep import executor_for, run_into
    from ..experiments import base

    one_of("preset", preset, base.PRESETS)
    experiment = base.get(name)
    engine = executor_for(executor)
    if config is not None and not isinstance(config, dict):
        raise TypeError(f"config must be a dict of fields or None, got {shown(config)}")
    typed = experiment.config(preset, **(config or {}))
    path, rows, outcome = run_into(jobs_for(name, typed), store, engine)
    from ..results import ExperimentResult

    return ExperimentResult(
        name=name,
        claim=experiment.claim,
        preset=preset,
        config=typed,
        rows=rows,
        outcome=_judged(experiment, typed, rows),
        computed=outcome.computed,
        cached=outcome.cached,
        store=path,
    )


def _judged(
    experiment: Experiment[Any], config: ExperimentConfig, rows: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    """The experiment's verdict on the rows' records, or ``incomplete`` when a job failed."""
    failed = [row for row in rows if row["status"] != "done"]
    if not failed:
        return experiment.verdict([r for row in rows for r in row["records"]], config)
    first = failed[0]["error"].splitlines()[0]
    return {
        "verdict": "incomplete",
        "reason": f"{len(failed)} of {len(rows)} jobs failed; first error: {first}",
    }


def sweep(
    experiment: str,
    grid: dict[str, list[Any]] | Sequence[str] | None = None,
    *,
    fixed: dict[str, Any] | Sequence[str] | None = None,
    config_file: str | Path | None = None,
    preset: str = "quick",
    executor: str | Executor = "inline",
    store: str | Path = DEFAULT_PATH,
    on_start: Callable[[int, int], None] | None = None,
    on_done: Callable[[Job, dict[str, Any]], None] | None = None,
) -> SweepResult:
    """Run an experiment over the cartesian product of ``grid`` into the store (``attnsep
    sweep``).

    Parameters
    ----------
    experiment
        An experiment name ([`experiments`][attnsep.api.experiments]).
    grid
        ``{field: [value, ...]}``, or ``["field=v1,v2", ...]`` as on the command line: one
        config per point of the product. A single value of a list field stands for the list
        of it: ``d_values=64,128`` sweeps ``[64]`` and ``[128]`` (as ``'d_values=[[64],[128]]'``).
    fixed
        ``{field: value}``, or ``["field=value", ...]``: fields set at every point.
    config_file
        A TOML or YAML file with ``set`` and ``grid`` tables, overridden field by field by
        ``fixed`` and ``grid``.
    preset
        The preset the fields start from.
    executor
        Where the jobs run, as for [`run_experiment`][attnsep.api.run_experiment].
    store
        The SQLite results database (created if missing); a stored job is not computed again.
    on_start
        Called as ``on_start(to_run, cached)`` once the jobs still to run are known.
    on_done
        Called as ``on_done(job, row)`` after each finished job, with its stored row.

    Returns
    -------
    SweepResult
        The grid points, their jobs' stored rows, how many computed and cached; ``report()``.
    """
    from ..engine.jobs import sweep_jobs
    from ..engine.sweep import executor_for, run_into

    engine = executor_for(executor)
    callback("on_start", on_start)
    callback("on_done", on_done)
    configs, jobs = sweep_jobs(experiment, preset, fixed, grid, config_file)
    path, rows, outcome = run_into(jobs, store, engine, on_start=on_start, on_done=on_done)
    from ..results import SweepResult

    points = tuple(c.model_dump(mode="json") for c in configs)
    keys = tuple(job.key for job in jobs)
    return SweepResult(
        experiment, preset, points, rows, outcome.computed, outcome.cached, path, keys
    )


def plan_table(found: Plan, title: str = "plan") -> TextTable:
    """A plan as ``attnsep reproduce --plan`` prints it: one row per experiment and the total
    (jobs, stored, to run, CPU and where the estimates come from), then the wall estimate.

    Parameters
    ----------
    found
        A plan of [`plan`][attnsep.api.plan], [`sweep_plan`][attnsep.api.sweep_plan] or
        [`reproduce_plan`][attnsep.api.reproduce_plan].
    title
        The table's title.
    """
    from ..engine import plan as planning
    from ..report.text_table import TextTable

    rows = tuple(planning.table_rows(found))
    lines = tuple(planning.summary_lines(found))
    return TextTable(title, planning.HEADER, rows, lines, justify="lrrrrl", no_wrap=True)


def text_tables(command: str, data: dict[str, Any]) -> list[TextTable]:
    """What ``attnsep COMMAND`` prints for people, from its JSON object ``data``.

    Parameters
    ----------
    command
        ``list``, ``show``, ``claims``, ``runs``, ``xor one-step``, ``xor train``, ``xor train-v1``,
        ``select train``, ``select bound``, ``fcn xor`` or ``fcn select`` (a frontier's table:
        ``FrontierResult.table()``).
    data
        The command's JSON object (e.g. ``report()`` of its result).

    Returns
    -------
    list of TextTable
        Each with a title, columns, rows of strings and notes.
    """
    from ..report.text_tables import TABLES

    one_of("command", command, list(TABLES))
    return TABLES[command](data)
