"""``attnsep reproduce | sweep | runs | report | list | show``: experiments through the engine;
each command's docstring is its help."""

from __future__ import annotations

from typing import Any

import typer

from .. import api
from ..configs import PRESET_HELP, require
from .common import JSON, QUIET, Failed, console, emit_json, output, running, show
from .options import options_of

EXPERIMENT = typer.Argument(..., help="Experiment (`attnsep list`; its config: `attnsep show`).")
PLAN_HELP = "Print the jobs, how many are stored, estimated CPU and wall time; store nothing."
PLAN = typer.Option(False, "--plan", help=PLAN_HELP)
GRID_HELP = "key=v1,v2,... (repeatable): a grid axis; d_values=64,128 sweeps [64], then [128]."
app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)
executor_options = options_of(api.executor, "name workers address", flags={"name": "--executor"})
plan_options = options_of(api.reproduce_plan, "calibration")


def plan_or_run(
    command: str, title: str, given: dict[str, Any], plan: bool, quiet: bool, as_json: bool
) -> Any:
    """``api.reproduce`` or ``api.sweep`` (``command``) with the options ``given`` (its
    executor's among them) under a progress bar; with ``plan``, its plan printed, ``None``."""
    name, workers, address = (given.pop(key) for key in ("name", "workers", "address"))
    given["executor"] = api.executor(name, workers=workers, address=address)
    calibration = given.pop("calibration")
    if plan:
        given.pop("out", None)
        found = getattr(api, f"{command}_plan")(calibration=calibration, **given)
        return emit_json(found.as_dict()) if as_json else show(api.plan_table(found, title))
    with running(title, quiet) as (on_start, on_done):
        return getattr(api, command)(on_start=on_start, on_done=on_done, **given)


@app.command()
@options_of(api.reproduce, "seed replicate seeds out store")
@executor_options
@plan_options
def reproduce(
    given: dict[str, Any],
    quick: bool = typer.Option(False, "--quick", help=PRESET_HELP["quick"]),
    standard: bool = typer.Option(False, "--standard", help=PRESET_HELP["standard"]),
    full: bool = typer.Option(False, "--full", help=PRESET_HELP["full"]),
    only: str | None = typer.Option(None, "--only", help="Comma-separated experiment names."),
    quiet: bool = QUIET,
    plan: bool = PLAN,
    as_json: bool = JSON,
) -> None:
    """Rerun every claim of both papers; write the report."""
    chosen = [name for name, on in (("quick", quick), ("standard", standard), ("full", full)) if on]
    require(len(chosen) <= 1, f"choose one of --quick, --standard and --full, got {len(chosen)}")
    preset = chosen[0] if chosen else "quick"
    names = None if only is None else [n.strip() for n in only.split(",") if n.strip()]
    require(names is None or bool(names), f"--only needs experiment names, got {only!r}")
    given.update(preset=preset, names=names)
    title = f"{'plan: ' if plan else ''}reproduce --{preset}"
    if (done := plan_or_run("reproduce", title, given, plan, quiet, as_json)) is None:
        return
    output("claims", {"claims": list(done.claims)}, as_json)
    counts = f"{done.computed} jobs computed, {done.cached} from the store, {done.failed} failed"
    if not quiet:
        console(stderr=True).print(f"{counts}, {done.seconds:.1f} s; report: {done.index}")
    if done.failed:
        raise typer.Exit(1)


@app.command()
@options_of(api.sweep, "preset config_file store", flags={"config_file": "--config"})
@executor_options
@plan_options
def sweep(
    given: dict[str, Any],
    experiment: str = EXPERIMENT,
    grid: list[str] = typer.Option([], "--grid", help=GRID_HELP),
    sets: list[str] = typer.Option([], "--set", help="key=value (repeatable): a fixed field."),
    quiet: bool = QUIET,
    plan: bool = PLAN,
    as_json: bool = JSON,
) -> None:
    """Run an experiment over a grid of its config fields."""
    given.update(experiment=experiment, grid=grid, fixed=sets)
    title = f"{'plan: ' if plan else ''}sweep {experiment}"
    if (result := plan_or_run("sweep", title, given, plan, quiet or as_json, as_json)) is None:
        return
    output("sweep", result, as_json)
    if result.summary()["failed"]:
        raise typer.Exit(1)


runs = typer.Typer(no_args_is_help=True, help="Inspect and export the results store.")
app.add_typer(runs, name="runs")


@runs.command("list")
@options_of(api.runs, "store experiment")
def runs_list(given: dict[str, Any], as_json: bool = JSON) -> None:
    """One line per stored job."""
    found = api.runs(**given)
    if as_json:
        return emit_json({"runs": [{k: v for k, v in r.items() if k != "records"} for r in found]})
    output("runs", {"store": str(given["store"]), "runs": found}, as_json=False)


@runs.command("show")
@options_of(api.stored_run, "store")
def runs_show(given: dict[str, Any], job_id: int = typer.Argument(...)) -> None:
    """The full stored row of one job, as JSON."""
    emit_json(api.stored_run(job_id, **given))


@runs.command("export")
@options_of(api.export_runs, "format output experiment store")
def runs_export(given: dict[str, Any]) -> None:
    """All records as a table (one row per record, config columns prefixed ``config.``)."""
    target, count = api.export_runs(**given)
    console(stderr=True).print(f"{count} records -> {target}")


@app.command()
@options_of(api.report, "out store workers claim")
def report(given: dict[str, Any], as_json: bool = JSON) -> None:
    """Rebuild the last reproduction's report from the store."""
    done = api.report(**given)
    if (claim := given["claim"]) is not None and not done.claims:
        raise Failed(
            f"{claim} is not judged in the last reproduction of {given['store']}: "
            f"`attnsep reproduce` with its experiment judges it"
        )
    output("claim" if claim else "claims", {"claims": list(done.claims)}, as_json)
    console(stderr=True).print(f"report: {done.index}")


@app.command("list")
def list_experiments(as_json: bool = JSON) -> None:
    """The experiments and the claim each reproduces."""
    output("list", {"experiments": api.experiments()}, as_json)


@app.command("show")
def show_experiment(experiment: str = EXPERIMENT, as_json: bool = JSON) -> None:
    """An experiment's config fields, presets and cost."""
    output("show", api.show(experiment), as_json)
