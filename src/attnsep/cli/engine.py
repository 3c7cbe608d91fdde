"""``attnsep reproduce | sweep | runs | report | list``: experiments through the engine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from ..configs import (
    CALIBRATION_BUDGET,
    PRESET_HELP,
    REPLICATION_FIRST_SEED,
    REPORT_FOLDER,
    STORE_PATH,
    require,
    seconds,
)
from .common import JSON, QUIET, console, emit_json, fail, output, print_result, running, show
from .parse import int_list

EXPERIMENT = typer.Argument(..., help="Experiment (`attnsep list`; its config: `attnsep show`).")
EXECUTOR = typer.Option("process", "--executor", help="inline, process or ray.")
ADDRESS = typer.Option(None, "--address", help="Ray cluster address (ray executor).")
WORKERS_HELP = "Process-pool size (process executor; default: the number of CPUs)."
WORKERS = typer.Option(None, "--workers", help=WORKERS_HELP)
JUDGES = typer.Option(
    None, "--workers", help="Processes judging the experiments (default: the number of CPUs)."
)
STORE = typer.Option(STORE_PATH, "--store", help="Results database.")
OUT = typer.Option(REPORT_FOLDER, "--out", help="Report folder.")
CLAIM_HELP = "Print this entry in full (e.g. A7.3b): reason, measured values, criterion."
CLAIM = typer.Option(None, "--claim", help=CLAIM_HELP)
PLAN_HELP = "Print the jobs, how many are stored, estimated CPU and wall time; store nothing."
PLAN = typer.Option(False, "--plan", help=PLAN_HELP)
CALIBRATION_HELP = "With --plan: seconds per experiment timing jobs no timing covers (0: none)."
CALIBRATION = typer.Option(CALIBRATION_BUDGET, "--calibration", help=CALIBRATION_HELP)
GRID_HELP = "key=v1,v2,... (repeatable): a grid axis; d_values=64,128 sweeps [64], then [128]."
SEED_HELP = "Master seed (default: the preset's own); one not tuned on is confirmatory (Part E)."
REPLICATE_HELP = (
    f"Judge every claim on N master seeds (from --seed, default {REPLICATION_FIRST_SEED}) and "
    "publish the verdict reached on 4 of 5, else 'unstable'."
)
SEEDS_HELP = "Comma-separated master seeds to judge every claim on (as --replicate)."


def print_plan(make_plan: Any, title: str, as_json: bool, **given: Any) -> None:
    """Print the plan ``make_plan(**given)``; a failed calibration is one error line, exit 1."""
    from .. import api

    try:
        found = make_plan(**given)
    except api.CalibrationFailed as err:
        raise fail(str(err)) from None
    emit_json(found.as_dict()) if as_json else show(api.plan_table(found, title))


def reproduce(
    quick: bool = typer.Option(False, "--quick", help=PRESET_HELP["quick"]),
    standard: bool = typer.Option(False, "--standard", help=PRESET_HELP["standard"]),
    full: bool = typer.Option(False, "--full", help=PRESET_HELP["full"]),
    only: str | None = typer.Option(None, "--only", help="Comma-separated experiment names."),
    executor: str = EXECUTOR,
    address: str | None = ADDRESS,
    workers: int | None = WORKERS,
    out: Path = OUT,
    store_path: Path = STORE,
    quiet: bool = QUIET,
    plan: bool = PLAN,
    calibration: float = CALIBRATION,
    seed: int | None = typer.Option(None, "--seed", help=SEED_HELP),
    replicate: int | None = typer.Option(None, "--replicate", help=REPLICATE_HELP),
    seeds: str | None = typer.Option(None, "--seeds", help=SEEDS_HELP),
    as_json: bool = JSON,
) -> None:
    from .. import api

    seconds("--calibration", calibration)
    chosen = [name for name, on in (("quick", quick), ("standard", standard), ("full", full)) if on]
    require(len(chosen) <= 1, f"choose one of --quick, --standard and --full, got {len(chosen)}")
    preset = chosen[0] if chosen else "quick"
    names = None if only is None else [n.strip() for n in only.split(",") if n.strip()]
    require(names is None or bool(names), f"--only needs experiment names, got {only!r}")
    given: dict[str, Any] = {"preset": preset, "names": names, "seed": seed, "store": store_path}
    given.update(executor=api.executor(executor, workers=workers, address=address))
    given["replicate"] = replicate
    given["seeds"] = None if seeds is None else int_list("--seeds", seeds, 0)
    if plan:
        title = f"plan: reproduce --{preset}"
        return print_plan(api.reproduce_plan, title, as_json, calibration=calibration, **given)
    with running(f"reproduce --{preset}", quiet) as (on_start, on_done):
        done = api.reproduce(out=out, on_start=on_start, on_done=on_done, **given)
    output("claims", {"claims": list(done.claims)}, as_json)
    counts = f"{done.computed} jobs computed, {done.cached} from the store, {done.failed} failed"
    if not quiet:
        console(stderr=True).print(f"{counts}, {done.seconds:.1f} s; report: {done.index}")
    if done.failed:
        raise typer.Exit(1)


def sweep(
    experiment: str = EXPERIMENT,
    grid: list[str] = typer.Option([], "--grid", help=GRID_HELP),
    sets: list[str] = typer.Option([], "--set", help="key=value (repeatable): a fixed field."),
    config_file: str | None = typer.Option(
        None, "--config", help="TOML/YAML file with set and grid tables (see examples/)."
    ),
    preset: str = typer.Option(
        "quick", "--preset", help="Preset the fields start from: quick, standard or full."
    ),
    executor: str = EXECUTOR,
    address: str | None = ADDRESS,
    workers: int | None = WORKERS,
    store_path: Path = STORE,
    quiet: bool = QUIET,
    as_json: bool = JSON,
    plan: bool = PLAN,
    calibration: float = CALIBRATION,
) -> None:
    from .. import api

    seconds("--calibration", calibration)
    given: dict[str, Any] = {"experiment": experiment, "grid": grid, "fixed": sets}
    given.update(config_file=config_file, preset=preset, store=store_path)
    given["executor"] = api.executor(executor, workers=workers, address=address)
    if plan:
        title = f"plan: sweep {experiment}"
        return print_plan(api.sweep_plan, title, as_json, calibration=calibration, **given)
    with running(f"sweep {experiment}", quiet or as_json) as (on_start, on_done):
        result = api.sweep(on_start=on_start, on_done=on_done, **given)
    print_result(result, as_json)
    if result.summary()["failed"]:
        raise typer.Exit(1)


runs = typer.Typer(no_args_is_help=True)  # its help: ``cli.COMMANDS``


@runs.command("list")
def runs_list(
    store_path: Path = STORE,
    experiment: str | None = typer.Option(None, "--experiment"),
    as_json: bool = JSON,
) -> None:
    """One line per stored job."""
    from .. import api

    found = api.runs(store_path, experiment)
    if as_json:
        return emit_json({"runs": [{k: v for k, v in r.items() if k != "records"} for r in found]})
    output("runs", {"store": str(store_path), "runs": found}, as_json=False)


@runs.command("show")
def runs_show(job_id: int = typer.Argument(...), store_path: Path = STORE) -> None:
    """The full stored row of one job, as JSON."""
    from .. import api

    emit_json(api.stored_run(job_id, store_path))


@runs.command("export")
def runs_export(
    fmt: str = typer.Option(..., "--format", help="csv or parquet."),
    file: Path | None = typer.Option(None, "--output", help="File (default results/runs.FORMAT)."),
    experiment: str | None = typer.Option(None, "--experiment"),
    store_path: Path = STORE,
) -> None:
    """All records as a table (one row per record, config columns prefixed ``config.``)."""
    from .. import api

    target, count = api.export_runs(fmt, file, experiment=experiment, store=store_path)
    console(stderr=True).print(f"{count} records -> {target}")


def report(
    out: Path = OUT,
    store_path: Path = STORE,
    workers: int | None = JUDGES,
    claim: str | None = CLAIM,
    as_json: bool = JSON,
) -> None:
    from .. import api

    done = api.report(out, store_path, workers, claim)
    if claim is not None and not done.claims:
        raise fail(
            f"{claim} is not judged in the last reproduction of {store_path}: "
            f"`attnsep reproduce` with its experiment judges it"
        )
    output("claim" if claim else "claims", {"claims": list(done.claims)}, as_json)
    console(stderr=True).print(f"report: {done.index}")


def show_experiment(experiment: str = EXPERIMENT, as_json: bool = JSON) -> None:
    from .. import api

    output("show", api.show(experiment), as_json)


def list_experiments(as_json: bool = JSON) -> None:
    from .. import api

    output("list", {"experiments": api.experiments()}, as_json)
