"""The ``attnsep`` command: parse, call the library, print. Bad input exits 2 with one line.

The command modules import torch, numpy, pandas and the rest inside the commands that use
them, so ``--help``, ``list`` and bad input answer without them (DESIGN.md, "Cheap to start").
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import typer

from . import engine, library


def print_version(asked: bool) -> None:
    if asked:
        from importlib.metadata import version

        sys.stdout.write(f"attnsep {version('attnsep')}\n")
        raise typer.Exit()


VERSION = typer.Option(False, "--version", callback=print_version, is_eager=True, help="Version.")


def top(version: bool = VERSION) -> None:
    """The options before a command."""


app = typer.Typer(
    name="attnsep",
    help="Attention-vs-FCN separations as rerunnable experiments.",
    callback=top,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
COMMANDS: list[tuple[str, Callable[..., Any], str]] = [
    ("reproduce", engine.reproduce, "Rerun every claim of both papers; write the report."),
    ("sweep", engine.sweep, "Run an experiment over a grid of its config fields."),
    ("report", engine.report, "Rebuild the last reproduction's report from the store."),
    ("list", engine.list_experiments, "The experiments and the claim each reproduces."),
    ("show", engine.show_experiment, "An experiment's config fields, presets and cost."),
]
"""The commands of their own: name, function, help."""
for _name, _command, _help in COMMANDS:
    app.command(_name, help=_help)(_command)
for _name, _group in {"runs": engine.runs, **library.groups}.items():
    app.add_typer(_group, name=_name)
del _name, _command, _help, _group


class Terminated(BaseException):
    """SIGTERM, raised where the command is, so that it stops as after Ctrl-C: temporary files
    are removed, workers stopped, the store closed. (The default action ends the process at
    once, leaving e.g. a half-written temporary file beside the report.)"""


def terminate(signum: int, frame: Any) -> None:
    raise Terminated


def main(argv: list[str] | None = None) -> None:
    """Entry point: user mistakes become ``error: ...`` on stderr and exit code 2; the
    library's warnings (e.g. a long run) one ``note: ...`` line each; SIGTERM is one
    ``error: terminated`` line and exit code 143, after the command's cleanup."""
    import signal
    import threading
    import warnings

    warnings.showwarning = lambda message, *_: print(f"note: {message}", file=sys.stderr)
    command = typer.main.get_command(app)
    on_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, terminate) if on_main_thread else None
    try:
        code = command.main(args=argv, prog_name="attnsep", standalone_mode=False)
    except typer.TyperException as err:
        if not err.format_message():  # a bare group name: its help was printed
            sys.exit(0)
        sys.stderr.write(f"error: {err.format_message()}\n")
        sys.exit(2)
    except ValueError as err:
        sys.stderr.write(f"error: {err}\n")
        sys.exit(2)
    except (typer.Abort, KeyboardInterrupt):
        sys.stderr.write("error: interrupted\n")
        sys.exit(130)
    except Terminated:
        sys.stderr.write("error: terminated\n")
        sys.exit(128 + signal.SIGTERM)
    finally:
        if previous is not None:  # a program calling main() (the tests) gets its own back
            signal.signal(signal.SIGTERM, previous)
    sys.exit(code if isinstance(code, int) else 0)
