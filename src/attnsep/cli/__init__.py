"""The ``attnsep`` command: parse, call the library, print. Bad input exits 2 with one line.

The command modules import torch, numpy, pandas and the rest inside the commands that use
them, so ``--help``, ``list`` and bad input answer without them (DESIGN.md, "Cheap to start").
"""

from __future__ import annotations

import sys
from typing import Any

import typer

from .. import api
from . import library
from .common import Failed
from .engine import app


def print_version(asked: bool) -> None:
    if asked:
        from importlib.metadata import version

        sys.stdout.write(f"attnsep {version('attnsep')}\n")
        raise typer.Exit()


VERSION = typer.Option(False, "--version", callback=print_version, is_eager=True, help="Version.")


@app.callback()
def top(version: bool = VERSION) -> None:
    """Attention-vs-FCN separations as rerunnable experiments."""


for _name, _group in library.groups.items():
    app.add_typer(_group, name=_name)
del _name, _group


class Terminated(BaseException):
    """SIGTERM, raised where the command is, so that it stops as after Ctrl-C: temporary files
    are removed, workers stopped, the store closed. (The default action ends the process at
    once, leaving e.g. a half-written temporary file beside the report.)"""


def terminate(signum: int, frame: Any) -> None:
    raise Terminated


def main(argv: list[str] | None = None) -> None:
    """Entry point: user mistakes become ``error: ...`` on stderr and exit code 2, a run that
    failed (``common.Failed``, a dead worker or calibration) exit code 1; the library's
    warnings (e.g. a long run) one ``note: ...`` line each; SIGTERM is one ``error:
    terminated`` line and exit code 143, after the command's cleanup."""
    import signal
    import threading
    import warnings

    warnings.showwarning = lambda message, *_: print(f"note: {message}", file=sys.stderr)
    command = typer.main.get_command(app)
    on_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, terminate) if on_main_thread else None
    try:
        code = command.main(args=argv, prog_name="attnsep", standalone_mode=False)
        sys.exit(code if isinstance(code, int) else 0)
    except typer.TyperException as err:
        if not err.format_message():  # a bare group name: its help was printed
            sys.exit(0)
        message, status = err.format_message(), 2
    except ValueError as err:
        message, status = str(err), 2
    except (typer.Abort, KeyboardInterrupt):
        message, status = "interrupted", 130
    except Terminated:
        message, status = "terminated", 128 + signal.SIGTERM
    except (Failed, api.CalibrationFailed, api.WorkerDied) as err:  # last: they load the engine
        message, status = str(err), 1
    finally:
        if previous is not None:  # a program calling main() (the tests) gets its own back
            signal.signal(signal.SIGTERM, previous)
    sys.stderr.write(f"error: {message}\n")
    sys.exit(status)
