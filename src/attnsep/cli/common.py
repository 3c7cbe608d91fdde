"""What the command modules share: common flags and output (JSON, text tables, progress
bars), the error of a failed run, and the commands that call one library function. rich loads
only when something is printed."""

from __future__ import annotations

import contextlib
import inspect
import json
import sys
from collections.abc import Callable, Iterator
from typing import Any

import typer
from pydantic import BaseModel

from .. import api
from .options import description, options_of

JSON = typer.Option(False, "--json", help="Print one JSON object instead of the tables.")
QUIET = typer.Option(False, "--quiet", help="No progress bar.")
FORCE = typer.Option(False, "--force", help="Run even above the memory or time guard.")


def emit_json(obj: dict[str, Any]) -> None:
    """Print exactly one JSON object on stdout (non-finite numbers are refused)."""
    sys.stdout.write(json.dumps(obj, allow_nan=False) + "\n")


def console(stderr: bool = False) -> Any:
    """A rich console on stdout, or on stderr. Text prints as written (no rich markup: an
    interval such as ``[n/a, inf]`` is data, not a style); colour comes from ``rich.text.Text``."""
    from rich.console import Console

    return Console(stderr=stderr, markup=False)


def show(text: Any) -> None:
    """Print a text table (``api.text_tables``, ``TextTable``), then its notes."""
    out = console()
    text = text.fit(out.width)
    out.print(text.rich())
    for note in text.notes:
        out.print(note)


def output(command: str, result: Any, as_json: bool) -> None:
    """A command's result, a dict or an object with ``report()``: that JSON object with
    ``as_json``, else its tables for people (its ``table()`` when it has one)."""
    data = result if isinstance(result, dict) else result.report()
    if as_json:
        return emit_json(data)
    for text in [result.table()] if hasattr(result, "table") else api.text_tables(command, data):
        show(text)


class Failed(Exception):
    """A run, or what a command was asked for, failed: ``main`` prints ``error: message`` on
    stderr and exits with code 1."""


@contextlib.contextmanager
def steps_bar(label: str, quiet: bool) -> Iterator[Callable[..., None]]:
    """``progress(done, total, note="")`` (``done=None``: one more) for a library call: a bar on
    stderr (none when ``quiet``) shown from the first call, once the input has been checked."""
    from rich import progress as rp

    columns = [rp.TextColumn("{task.description}"), rp.BarColumn(), rp.MofNCompleteColumn()]
    columns += [rp.TimeElapsedColumn(), rp.TextColumn("ETA"), rp.TimeRemainingColumn()]
    bar = rp.Progress(*columns, console=console(stderr=True), disable=quiet, transient=False)

    def progress(done: int | None, total: int = 0, note: str = "") -> None:
        if not bar.task_ids:
            bar.start()
            bar.add_task(label + note, total=total)
        bar.update(bar.task_ids[0], completed=done, advance=1 if done is None else None)

    try:
        yield progress
    except BaseException:
        bar.live.transient = True  # a failure leaves its one error line alone on stderr
        bar.live.stop()
        raise
    finally:
        if bar.live.is_started:
            bar.stop()


@contextlib.contextmanager
def running(label: str, quiet: bool) -> Iterator[tuple[Callable[..., None], Callable[..., None]]]:
    """``(on_start, on_done)`` for a run of jobs: a bar and a line per failed job, and whatever
    the run prints (e.g. Ray), on stderr."""
    from rich.text import Text

    with contextlib.redirect_stdout(sys.stderr), steps_bar(label, quiet) as progress:

        def on_start(todo: int, cached: int) -> None:
            progress(0, todo, f" ({cached} from the store)")

        def on_done(job: Any, row: dict[str, Any]) -> None:
            progress(None)
            if row["status"] != "done" and not quiet:
                failed = Text("job failed", style="red")
                console(stderr=True).print(failed, job.experiment, row["error"].splitlines()[0])

        yield on_start, on_done


def library_command(
    label: str,
    function: Callable[..., Any],
    names: str = "",
    model: type[BaseModel] | None = None,
    skip: str = "",
    flags: dict[str, str] | None = None,
    **fixed: Any,
) -> Callable[..., Any]:
    """The command ``label``: ``function`` called with ``fixed``, its parameters ``names`` and
    ``model``'s fields but ``skip``'s as options (``options.options_of``); ``--quiet`` when it
    reports progress (a bar), ``--force`` when it can be forced; ``output`` prints the result.
    Its help is ``function``'s description."""
    takes = inspect.signature(function).parameters

    def command(
        config: dict[str, Any], as_json: bool = JSON, quiet: bool = QUIET, force: bool = FORCE
    ) -> None:
        given = {**fixed, **config, **({"force": force} if "force" in takes else {})}
        with steps_bar(label, quiet) as bar:
            result = function(**given, **({"progress": bar} if "progress" in takes else {}))
        output(label, result, as_json)

    own = inspect.signature(command, eval_str=True).parameters.values()
    needs = {"quiet": "progress", "force": "force"}  # kept only where the function takes these
    kept = [p for p in own if needs.get(p.name, p.name) in {*takes, "config", "as_json"}]
    command.__signature__ = inspect.Signature(kept)  # type: ignore[attr-defined]
    command.__doc__ = description(function)
    made = options_of(function, names, flags)(command)
    return made if model is None else options_of(model, skip=skip)(made)
