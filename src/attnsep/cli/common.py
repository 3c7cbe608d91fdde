"""Output shared by the command modules: JSON, rich tables, the progress bar.

rich loads when something is printed, so a bad-input error answers without it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import JustifyMethod


def emit_json(obj: dict[str, Any]) -> None:
    """Print exactly one JSON object on stdout (non-finite numbers are refused)."""
    sys.stdout.write(json.dumps(obj, allow_nan=False) + "\n")


def console(stderr: bool = False) -> Any:
    """A rich console on stdout, or on stderr. Text prints as written (no rich markup: an
    interval such as ``[n/a, inf]`` is data, not a style); colour comes from ``rich.text.Text``."""
    from rich.console import Console

    return Console(stderr=stderr, markup=False)


def table(
    title: str, columns: Iterable[str], justify: JustifyMethod = "left", **options: Any
) -> Any:
    """A rich table with these columns (each justified ``justify``), to fill with ``add_row``."""
    from rich.table import Table

    made = Table(title=title, **options)
    for column in columns:
        made.add_column(column, justify=justify)
    return made


def print_table(title: str, rows: list[tuple[str, str]]) -> None:
    """A two-column table (quantity, value) on stdout."""
    made = table(title, [], show_header=True, header_style="bold")
    made.add_column("quantity")
    made.add_column("value", justify="right")
    for name, value in rows:
        made.add_row(name, value)
    console().print(made)


def progress_bar(quiet: bool) -> Any:
    """The project's progress bar, on stderr; none when ``quiet``."""
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
        console=console(stderr=True),
        disable=quiet,
        transient=False,
    )
