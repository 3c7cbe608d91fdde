"""What the command modules share: options whose default and help come from the library (a
config field, a function's argument), the parsing of option text, and output (JSON, text
tables, progress bars, runtime errors). rich loads only when something is printed."""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import re
import sys
import types
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, Literal, Union, get_args, get_origin

import typer

from ..configs import allowed

if TYPE_CHECKING:
    from pydantic import BaseModel


JSON_TABLE = typer.Option(False, "--json", help="Print one JSON object instead of a table.")
JSON = typer.Option(False, "--json", help="Print one JSON object.")
QUIET = typer.Option(False, "--quiet", help="No progress bar.")
FORCE = typer.Option(False, "--force", help="Run even above the memory or time guard.")


def plain(text: str) -> str:
    """Documentation text as ``--help`` prints it: ``[`f`][attnsep.api.f]`` as ``f``, no double
    backticks, a literal bracket rather than rich markup."""
    text = re.sub(r"\[`([^`]+)`\]\[[^\]]+\]", r"\1", text).replace("``", "")
    return text.replace("[", "\\[")


def field_spec(model: type[BaseModel], name: str) -> tuple[Any, str, Any]:
    """``(default, help, type)`` of ``model``'s field ``name``: its default (else required), its
    description with a ``Literal``'s choices, the type the command line parses it as."""
    info = model.model_fields[name]
    default = ... if info.is_required() else info.get_default(call_default_factory=True)
    text = info.description or ""
    if (choices := allowed(info)).startswith("one of "):
        text = f"{text} Allowed: {choices.removeprefix('one of ')}."
    return default, text, option_type(info.annotation)


def parameter_spec(function: Callable[..., Any], name: str) -> tuple[Any, str, Any]:
    """``(default, help, type)`` of a library function's parameter ``name``: its default (a tuple
    as comma-separated text), its description in the docstring's ``Parameters``, its type."""
    parameter = inspect.signature(function).parameters[name]
    default = ... if parameter.default is parameter.empty else parameter.default
    kind: Any
    if isinstance(default, tuple):
        default, kind = ",".join(str(value) for value in default), str
    elif default is None or default is ...:
        module = vars(sys.modules[function.__module__])
        annotation = parameter.annotation  # a string under postponed evaluation
        hint = eval(annotation, module) if isinstance(annotation, str) else annotation
        listed = any(get_origin(t) in (list, tuple, Sequence) for t in (hint, *get_args(hint)))
        kind = str | None if listed else option_type(hint)  # a list: comma-separated text
    else:
        kind = Path if isinstance(default, PurePath) else type(default)
    return default, parameter_docs(function)[name], kind


def parameter_docs(function: Callable[..., Any]) -> dict[str, str]:
    """Each parameter's description in a (numpy-style) docstring's ``Parameters`` section."""
    section = (inspect.getdoc(function) or "").partition("Parameters\n----------\n")[2]
    found: dict[str, str] = {}
    name = ""
    for line in section.partition("\n\n")[0].splitlines():
        if line.startswith(" "):
            found[name] = f"{found[name]} {line.strip()}".strip()
        else:
            name = line.strip()
            found[name] = ""
    return found


def option_type(annotation: Any) -> Any:
    """The type the command line parses a field's value as: a ``Literal``'s choices as text (the
    config checks them), ``X | Y | None`` as ``X | None``, anything else as written."""
    if get_origin(annotation) is Literal:
        return str
    if get_origin(annotation) in (Union, types.UnionType):
        inner = [arg for arg in get_args(annotation) if arg is not type(None)][0]  # str | Path
        return option_type(inner) | None
    return annotation


def options_of(
    source: type[BaseModel] | Callable[..., Any], names: str, flags: dict[str, str] | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A command's options for ``source``'s ``names`` (space-separated): the fields of a config
    model or the parameters of a library function, each with its default, help and type as the
    library writes them (once); the flag is ``--name`` unless ``flags`` gives another. The
    command receives their values as one dict, its first argument (decorators of this kind
    stack: their values land in the one dict)."""
    spec = field_spec if isinstance(source, type) else parameter_spec
    specs = {name: spec(source, name) for name in names.split()}  # type: ignore[arg-type]
    flags = flags or {}

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        own = list(inspect.signature(command, eval_str=True).parameters.values())
        made = [
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=typer.Option(
                    default, flags.get(name, "--" + name.replace("_", "-")), help=plain(text)
                ),
                annotation=kind,
            )
            for name, (default, text, kind) in specs.items()
        ]

        @functools.wraps(command)
        def run(config: dict[str, Any] | None = None, /, **given: Any) -> Any:
            picked = {name: given.pop(name) for name in specs}
            return command({**(config or {}), **picked}, **given)

        own = own if getattr(command, "stacked", False) else own[1:]  # not the dict
        kept = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own]
        signature = made + kept
        run.__signature__ = inspect.Signature(signature)  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in signature}
        run.stacked = True  # type: ignore[attr-defined]
        return run

    return decorate


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


def output(command: str, data: dict[str, Any], as_json: bool) -> None:
    """A command's result: its JSON object with ``as_json``, else its tables for people."""
    if as_json:
        emit_json(data)
        return
    from .. import api

    for text in api.text_tables(command, data):
        show(text)


def print_result(result: Any, as_json: bool) -> None:
    """A result's ``report()`` as one JSON object, or its ``table()`` for people."""
    emit_json(result.report()) if as_json else show(result.table())


def fail(message: str) -> typer.Exit:
    """``error: message`` on stderr; raise the returned exit (code 1: a run failed)."""
    sys.stderr.write(f"error: {message}\n")
    return typer.Exit(1)


@contextlib.contextmanager
def steps_bar(label: str, quiet: bool) -> Iterator[Callable[..., None]]:
    """``progress(done, total, note="")`` (``done=None``: one more) for a library call: a bar on
    stderr (none when ``quiet``) shown from the first call, once the input has been checked."""
    from rich import progress as rp

    columns = [rp.TextColumn("{task.description}"), rp.BarColumn(), rp.MofNCompleteColumn()]
    columns += [rp.TimeElapsedColumn(), rp.TextColumn("ETA"), rp.TimeRemainingColumn()]
    bar = rp.Progress(*columns, console=console(stderr=True), disable=quiet, transient=False)
    task: list[Any] = []

    def progress(done: int | None, total: int = 0, note: str = "") -> None:
        if not task:
            bar.start()
            task.append(bar.add_task(label + note, total=total))
        bar.update(task[0], advance=1) if done is None else bar.update(task[0], completed=done)

    try:
        yield progress
    except BaseException:
        if task:  # a failure leaves its one error line alone on stderr
            bar.live.transient = True
            bar.live.stop()
            task.clear()
        raise
    finally:
        if task:
            bar.stop()


@contextlib.contextmanager
def running(label: str, quiet: bool) -> Iterator[tuple[Callable[..., None], Callable[..., None]]]:
    """``(on_start, on_done)`` for a run of jobs: a bar and a line per failed job, and whatever
    the run prints (e.g. Ray), on stderr; a dead worker is one error line and exit code 1."""
    from rich.text import Text

    from .. import api

    try:
        with contextlib.redirect_stdout(sys.stderr), steps_bar(label, quiet) as progress:

            def on_start(todo: int, cached: int) -> None:
                progress(0, todo, f" ({cached} from the store)")

            def on_done(job: Any, row: dict[str, Any]) -> None:
                progress(None)
                if row["status"] != "done" and not quiet:
                    failed = Text("job failed", style="red")
                    console(stderr=True).print(failed, job.experiment, row["error"].splitlines()[0])

            yield on_start, on_done
    except api.WorkerDied as err:
        raise fail(str(err)) from None
