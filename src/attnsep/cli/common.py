"""Helpers shared by the command modules: JSON output, summaries, the progress bar."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console
from rich.table import Table


def emit_json(obj: dict[str, Any]) -> None:
    """Print exactly one JSON object on stdout (non-finite numbers are refused)."""
    sys.stdout.write(json.dumps(obj, allow_nan=False) + "\n")


def print_table(title: str, rows: list[tuple[str, str]]) -> None:
    """A two-column table (quantity, value) on stdout."""
    table = Table(title=title, show_header=True, header_style="bold")
    table.add_column("quantity")
    table.add_column("value", justify="right")
    for name, value in rows:
        table.add_row(name, value)
    Console().print(table)


def progress_bar(quiet: bool):
    """The project's progress bar, on stderr; none when ``quiet``."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        disable=quiet,
        transient=False,
    )
