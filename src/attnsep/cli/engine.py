"""``attnsep reproduce | sweep | runs | report | list``: experiments through the engine.

The engine, the store and the experiments are imported inside the commands, so ``list``,
``--help`` and bad input answer without them.
"""

from __future__ import annotations

import contextlib
import math
import sys
import time
from pathlib import Path

import typer

from ..configs import CALIBRATION_BUDGET
from ..core.validate import int_at_least, one_of, require
from ..engine.store import DEFAULT_PATH
from ..experiments import catalog
from .common import console, emit_json, progress_bar, table
from .options import lazy

run_sweep = lazy("attnsep.engine.sweep", "run_sweep")


def experiment_names(only: str | None) -> list[str]:
    """Every experiment, or the comma-separated names of ``--only``, each checked."""
    names = [item["name"] for item in catalog()]
    if only is None:
        return names
    chosen = [n.strip() for n in only.split(",") if n.strip()]
    require(bool(chosen), f"--only needs experiment names, got {only!r}")
    for name in chosen:
        check_experiment(name)
    return chosen


def check_experiment(name: str) -> None:
    """``name`` is an experiment's name."""
    one_of("experiment", name, sorted(item["name"] for item in catalog()))


def fail(message: str) -> typer.Exit:
    """``error: message`` as one line on stderr; raise the returned ``typer.Exit`` (code 1)."""
    sys.stderr.write(f"error: {message}\n")
    return typer.Exit(1)


PLAN_HELP = (
    "Print the jobs per experiment, how many are stored and the estimated CPU and wall time; "
    "nothing is stored (a short calibration times a few jobs)."
)
CALIBRATION_HELP = (
    "With --plan: seconds per experiment spent timing jobs that have no stored timing (0: none)."
)
WORKERS_HELP = "Process-pool size (process executor; default: the number of CPUs)."


def check_engine(
    executor: str, workers: int | None, address: str | None, calibration: float
) -> None:
    """``--executor``, ``--workers`` and ``--address`` agree (and the address answers);
    ``--calibration`` is a time."""
    from ..engine.executors import EXECUTORS, check_reachable

    require(
        math.isfinite(calibration) and calibration >= 0,
        f"--calibration must be a finite number of seconds >= 0, got {calibration}",
    )
    one_of("executor", executor, EXECUTORS)
    if workers is not None:
        int_at_least("workers", workers, 1)
        require(executor == "process", f"--workers is for --executor process, not {executor!r}")
    if address is not None:
        require(executor == "ray", f"--address is for --executor ray, not {executor!r}")
        check_reachable(address)


def plan_for(groups, store_path: Path, executor: str, workers, address, calibration):
    """The plan of running ``groups`` (experiment -> jobs) into the store at ``store_path``."""
    from .. import api

    try:
        return api.plan(groups, store_path, executor, workers, address, budget=calibration)
    except api.CalibrationFailed as err:
        raise fail(str(err)) from None


def print_plan(found, title: str) -> None:
    from .. import api

    header, rows, lines = api.plan_table(found)
    made = table(title, [])
    for column in header:
        left = column in ("experiment", "from (jobs)")
        made.add_column(
            column, justify="left" if left else "right", no_wrap=column != "from (jobs)"
        )
    for row in rows:
        made.add_row(*row)
    out = console()
    out.print(made)
    for line in lines:
        out.print(line, markup=False, highlight=False)


def sweep_with_progress(jobs, store, executor, address, quiet, label, workers=None):
    """Run ``jobs`` with a progress bar on stderr (none when ``quiet``). Whatever the run
    prints (e.g. Ray reporting a lost node) goes to stderr: stdout is the command's result.
    A dead worker ends the command with one error line and exit code 1."""
    from rich.text import Text

    from ..engine.executors import WorkerDied

    progress = progress_bar(quiet)
    try:
        with contextlib.redirect_stdout(sys.stderr), progress:
            task = progress.add_task(label, total=None)

            def started(todo: int, cached: int) -> None:
                progress.update(task, total=todo, description=f"{label} ({cached} from the store)")

            def finished(job, row) -> None:
                progress.advance(task)
                if row["status"] != "done" and not quiet:
                    first = row["error"].splitlines()[0]
                    console(stderr=True).print(
                        Text("job failed", style="red"), job.experiment, first
                    )

            return run_sweep(
                jobs,
                store,
                executor,
                workers=workers,
                address=address,
                on_start=started,
                on_done=finished,
            )
    except WorkerDied as err:
        raise fail(str(err)) from None


def reproduce(
    quick: bool = typer.Option(
        False, "--quick", help="The quick preset (default): a few minutes on 2 cores."
    ),
    standard: bool = typer.Option(
        False,
        "--standard",
        help="The sizes that separate the papers' laws from their rivals (SPEC Part D): "
        "about an hour on 2 cores.",
    ),
    full: bool = typer.Option(False, "--full", help="Paper-scale sizes, for a GPU or a cluster."),
    only: str | None = typer.Option(None, "--only", help="Comma-separated experiment names."),
    executor: str = typer.Option("process", "--executor", help="inline, process or ray."),
    address: str | None = typer.Option(
        None, "--address", help="Ray cluster address (ray executor)."
    ),
    workers: int | None = typer.Option(None, "--workers", help=WORKERS_HELP),
    out: Path = typer.Option(Path("results/report"), "--out", help="Report folder."),
    store_path: Path = typer.Option(DEFAULT_PATH, "--store", help="Results database."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bars."),
    plan: bool = typer.Option(False, "--plan", help=PLAN_HELP),
    calibration: float = typer.Option(CALIBRATION_BUDGET, "--calibration", help=CALIBRATION_HELP),
    seed: int | None = typer.Option(
        None,
        "--seed",
        help="Master seed of every experiment (a fresh, independent run; default: each "
        "preset's own, 0). A claim judged on a seed its criterion was not tuned on is "
        "confirmatory (SPEC Part E).",
    ),
) -> None:
    """Rerun every claim of both papers and write the report (index.html, claims.json)."""
    from ..core.io import writable_folder
    from ..engine.store import Store
    from ..report.claims import planned_jobs

    chosen = [name for name, on in (("quick", quick), ("standard", standard), ("full", full)) if on]
    require(len(chosen) <= 1, f"choose one of --quick, --standard and --full, got {len(chosen)}")
    preset = chosen[0] if chosen else "quick"
    names = experiment_names(only)
    check_engine(executor, workers, address, calibration)
    require(seed is None or seed >= 0, f"--seed must be an integer >= 0, got {seed}")
    groups = planned_jobs(names, preset, seed)
    if plan:
        found = plan_for(groups, store_path, executor, workers, address, calibration)
        print_plan(found, f"plan: reproduce --{preset}")
        return
    writable_folder(out)
    store = Store(store_path)
    started = time.time()
    jobs = [job for group in groups.values() for job in group]
    outcome = sweep_with_progress(
        jobs, store, executor, address, quiet, f"reproduce --{preset}", workers
    )
    last = {"preset": preset, "names": names, "seed": seed}
    store.remember("last_reproduction", last)
    seeds_run = sorted({*(store.recall(f"seeds_run:{preset}") or []), seed or 0})
    store.remember(f"seeds_run:{preset}", seeds_run)
    index = write_claims(store, last, out)
    if not quiet:
        console(stderr=True).print(
            f"{outcome.computed} jobs computed, {outcome.cached} from the store, "
            f"{len(outcome.failed)} failed, {time.time() - started:.1f} s; report: {index}"
        )
    if outcome.failed:
        raise typer.Exit(1)


VERDICT_COLORS = {
    "reproduced": "green",
    "not reproduced": "red",
    "inconclusive": "yellow",
    "incomplete": "bright_black",
    "finding": "blue",
}


def write_claims(store, last: dict, out: Path) -> Path:
    """Judge the claims of a reproduction (``last``: its preset, names and seed) from the store,
    write the report into ``out`` and print the claims table; the report's index file."""
    from ..report.claims import build_claims
    from ..report.html import write_report  # jinja2 only when a report is written

    preset, seed = last["preset"], last.get("seed")
    seeds_run = store.recall(f"seeds_run:{preset}") or []
    claims = build_claims(store, last["names"], preset, out, seed, seeds_run=seeds_run)
    index, _ = write_report(claims, preset, out)
    show_claims(claims)
    return index


def show_claims(claims: list[dict]) -> None:
    """The claims table: each verdict in its colour, its criterion's power and false pass
    (SPEC Part E; ``-`` for a finding), and its reason in one sentence."""
    from rich.text import Text

    made = table("claims", ("claim", "title", "verdict", "power / false pass", "reason"))
    for c in claims:
        color = VERDICT_COLORS.get(c["verdict"], "green")
        rates = c.get("calibration")
        shown = f"{rates['power']:.2f} / {rates['false_pass']:.2f}" if rates else "-"
        verdict = Text(c["verdict"], style=color)
        made.add_row(c["claim"], c["title"], verdict, shown, c.get("reason", ""))
    console().print(made)


def grid_fields(config_file: str | None, sets: list[str], grid: list[str]):
    """``(fixed, axes)`` from ``--config``, ``--set`` and ``--grid``: the command line overrides
    the file, and a field is given with ``--set`` or with ``--grid``, not both."""
    from ..engine.jobs import load_config_file, parse_assignment

    loaded = {"set": {}, "grid": {}} if config_file is None else load_config_file(config_file)
    fixed, axes = dict(loaded["set"]), dict(loaded["grid"])
    cli_fixed = dict(parse_assignment(s, grid=False) for s in sets)
    cli_axes = dict(parse_assignment(g, grid=True) for g in grid)
    both = sorted(set(cli_fixed) & set(cli_axes))
    require(not both, f"{both[0] if both else ''} is given both with --set and with --grid")
    for key, value in cli_fixed.items():
        axes.pop(key, None)
        fixed[key] = value
    for key, values in cli_axes.items():
        fixed.pop(key, None)
        axes[key] = values
    return fixed, axes


def sweep(
    experiment: str = typer.Argument(..., help="Experiment name (see `attnsep list`)."),
    grid: list[str] = typer.Option([], "--grid", help="key=v1,v2,... (repeatable): a grid axis."),
    sets: list[str] = typer.Option([], "--set", help="key=value (repeatable): a fixed field."),
    config_file: str | None = typer.Option(
        None, "--config", help="TOML/YAML file with set and grid tables."
    ),
    preset: str = typer.Option(
        "quick", "--preset", help="Preset the fields start from: quick, standard or full."
    ),
    executor: str = typer.Option("process", "--executor", help="inline, process or ray."),
    address: str | None = typer.Option(None, "--address", help="Ray cluster address."),
    workers: int | None = typer.Option(None, "--workers", help=WORKERS_HELP),
    store_path: Path = typer.Option(DEFAULT_PATH, "--store", help="Results database."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bars."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    plan: bool = typer.Option(False, "--plan", help=PLAN_HELP),
    calibration: float = typer.Option(CALIBRATION_BUDGET, "--calibration", help=CALIBRATION_HELP),
) -> None:
    """Run an experiment over a grid of its config fields; results go to the store."""
    from ..engine.jobs import expand_grid, jobs_for
    from ..engine.records import record_dicts, record_table
    from ..engine.store import Store
    from ..experiments.base import PRESETS

    one_of("preset", preset, PRESETS)
    check_engine(executor, workers, address, calibration)
    check_experiment(experiment)
    configs = expand_grid(experiment, preset, *grid_fields(config_file, sets, grid))
    jobs = [job for config in configs for job in jobs_for(experiment, config)]
    if plan:
        found = plan_for({experiment: jobs}, store_path, executor, workers, address, calibration)
        if as_json:
            emit_json(found.as_dict())
        else:
            print_plan(found, f"plan: sweep {experiment}")
        return
    store = Store(store_path)
    outcome = sweep_with_progress(
        jobs, store, executor, address, quiet or as_json, f"sweep {experiment}", workers
    )
    summary = {
        "experiment": experiment,
        "configs": len(configs),
        "jobs": outcome.total,
        "computed": outcome.computed,
        "cached": outcome.cached,
        "failed": len(outcome.failed),
        "store": str(store_path),
        "job_hashes": [j.key for j in jobs],
    }
    frame = store.frame(experiment, keys=[j.key for j in jobs])
    if as_json:
        emit_json({**summary, "records": record_dicts(frame)})
    else:
        header, rows, same = record_table(frame)
        made = table(f"{experiment}: {len(frame)} records", header, caption=same or None)
        for row in rows:
            made.add_row(*row)
        console().print(made)
        console().print(
            f"{experiment}: {len(configs)} configs, {outcome.total} jobs: {outcome.computed} "
            f"computed, {outcome.cached} from the store, {len(outcome.failed)} failed "
            f"-> {store_path}"
        )
    if outcome.failed:
        raise typer.Exit(1)


runs = typer.Typer(help="Inspect and export the results store.", no_args_is_help=True)


def open_store(store_path: Path):
    """The existing store at ``store_path``."""
    from ..engine.store import Store

    require(store_path.exists(), f"store {str(store_path)!r} does not exist")
    return Store(store_path)


@runs.command("list")
def runs_list(
    store_path: Path = typer.Option(DEFAULT_PATH, "--store"),
    experiment: str | None = typer.Option(None, "--experiment"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """One line per stored job."""
    rows = open_store(store_path).rows(experiment)
    if as_json:
        keys = ("id", "experiment", "config_hash", "seed", "status", "seconds")
        emit_json({"runs": [{k: r[k] for k in keys} for r in rows]})
        return
    made = table(
        str(store_path), ("id", "experiment", "hash", "seed", "status", "seconds", "records")
    )
    for r in rows:
        made.add_row(
            str(r["id"]),
            r["experiment"],
            r["config_hash"][:12],
            str(r["seed"]),
            r["status"],
            f"{r['seconds']:.2f}",
            str(len(r["records"] or [])),
        )
    console().print(made)


@runs.command("show")
def runs_show(
    job_id: int = typer.Argument(...), store_path: Path = typer.Option(DEFAULT_PATH, "--store")
) -> None:
    """The full stored row of one job, as JSON."""
    emit_json(open_store(store_path).row(job_id))


@runs.command("export")
def runs_export(
    fmt: str = typer.Option(..., "--format", help="csv or parquet."),
    output: Path | None = typer.Option(
        None, "--output", help="File (default results/runs.FORMAT)."
    ),
    experiment: str | None = typer.Option(None, "--experiment"),
    store_path: Path = typer.Option(DEFAULT_PATH, "--store"),
) -> None:
    """All records as a table (one row per record, config columns prefixed ``config.``)."""
    from ..core.io import writable_target
    from ..engine.records import EXPORT_FORMATS, export

    one_of("format", fmt, EXPORT_FORMATS)
    store = open_store(store_path)
    target = writable_target(output or Path("results") / f"runs.{fmt}", f".{fmt}")
    frame = store.frame(experiment)
    export(frame, target, fmt)
    console(stderr=True).print(f"{len(frame)} records -> {target}")


def report(
    out: Path = typer.Option(Path("results/report"), "--out", help="Report folder."),
    store_path: Path = typer.Option(DEFAULT_PATH, "--store", help="Results database."),
) -> None:
    """Rebuild the report of the last reproduction from the store (nothing is recomputed)."""
    from ..core.io import writable_folder
    from ..engine.store import Store

    require(
        store_path.exists(),
        f"store {str(store_path)!r} does not exist; run `attnsep reproduce` first",
    )
    writable_folder(out)
    store = Store(store_path)
    last = store.recall("last_reproduction") or {"preset": "quick", "names": experiment_names(None)}
    console(stderr=True).print(f"report: {write_claims(store, last, out)}")


def list_experiments(as_json: bool = typer.Option(False, "--json")) -> None:
    """The experiments and the claim each reproduces."""
    items = catalog()
    if as_json:
        emit_json({"experiments": items})
        return
    made = table("experiments", ("name", "claim", "reproduces"))
    for item in items:
        made.add_row(item["name"], item["claim"], item["title"])
    console().print(made)
