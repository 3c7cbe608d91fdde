"""The ``attnsep`` command: parse, call the library, print. Bad input exits 2 with one line."""

from __future__ import annotations

import sys

import typer

from ..engine.executors import WorkerDied
from . import engine, fcn, frontier, select, xor

app = typer.Typer(
    name="attnsep",
    help="Attention-vs-FCN separations as rerunnable experiments.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(xor.app, name="xor")
app.add_typer(select.app, name="select")
app.add_typer(frontier.app, name="frontier")
app.command("reproduce")(engine.reproduce)
app.command("sweep")(engine.sweep)
app.add_typer(engine.runs, name="runs")
app.add_typer(fcn.app, name="fcn")
app.command("report")(engine.report)
app.command("list")(engine.list_experiments)


def main(argv: list[str] | None = None) -> None:
    """Entry point: user mistakes become ``error: ...`` on stderr and exit code 2."""
    command = typer.main.get_command(app)
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
    except WorkerDied as err:
        sys.stderr.write(f"error: {err}\n")
        sys.exit(1)
    except (typer.Abort, KeyboardInterrupt):
        sys.stderr.write("error: interrupted\n")
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)
