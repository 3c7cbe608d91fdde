"""The results store for people and scripts (``attnsep runs``): the stored jobs, one job's
full row, and the records as a table or a CSV / Parquet file. An existing store is read
(``Store.open_read``): a missing one is an error, and no store is ever created or changed.
Public through ``attnsep.api``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.io import make_folder, writable_target
from ..core.validate import int_at_least, one_of
from ..experiments import catalog
from .records import EXPORT_FORMATS, export
from .store import DEFAULT_PATH, Store

if TYPE_CHECKING:
    import pandas as pd

SUMMARY = ("id", "experiment", "config_hash", "seed", "status", "seconds")
"""The fields of a stored job that [`runs`][attnsep.api.runs] gives (and its record count)."""


@contextmanager
def opened(store: str | Path, experiment: str | None = None) -> Iterator[Store]:
    """The existing store at ``store``, read only, closed after use (a missing one is not
    created); ``experiment``, when given, must be registered or stored there (a misspelt name
    is an error naming the known ones, not an empty answer)."""
    db = Store.open_read(store)
    try:
        if experiment is not None:
            known = [item["name"] for item in catalog()]
            if experiment not in known:
                known += [row["experiment"] for row in db.rows()]
            one_of("experiment", experiment, sorted(set(known)))
        yield db
    finally:
        db.close()


def runs(store: str | Path = DEFAULT_PATH, experiment: str | None = None) -> list[dict[str, Any]]:
    """One dict per stored job, oldest first (``attnsep runs list``): ``id``, ``experiment``,
    ``config_hash``, ``seed``, ``status``, ``seconds`` and ``records`` (how many).

    Parameters
    ----------
    store
        The results database (it must exist).
    experiment
        Only this experiment's jobs (default: all).
    """
    with opened(store, experiment) as db:
        rows = db.rows(experiment)
    return [{**{k: row[k] for k in SUMMARY}, "records": len(row["records"] or [])} for row in rows]


def stored_run(job_id: int, store: str | Path = DEFAULT_PATH) -> dict[str, Any]:
    """The full stored row of one job (``attnsep runs show``): config, records, versions,
    timing, host and error.

    Parameters
    ----------
    job_id
        The job's ``id`` (see [`runs`][attnsep.api.runs]).
    store
        The results database (it must exist).
    """
    int_at_least("job id", job_id, 1)
    with opened(store) as db:
        return db.row(job_id)


def load_runs(store: str | Path = DEFAULT_PATH, experiment: str | None = None) -> pd.DataFrame:
    """The stored records as a pandas DataFrame: one row per record, the job's ``job_id``,
    ``experiment`` and ``config_hash``, its config flattened to ``config.<field>`` columns,
    then the record's fields (the table ``attnsep runs export`` writes). A column whose
    values are not all numbers, all strings or all booleans holds JSON text.

    Parameters
    ----------
    store
        The results database (it must exist).
    experiment
        Only this experiment's records (default: all).
    """
    with opened(store, experiment) as db:
        return db.frame(experiment)


def export_runs(
    format: str,
    output: str | Path | None = None,
    *,
    experiment: str | None = None,
    store: str | Path = DEFAULT_PATH,
) -> tuple[Path, int]:
    """Write the stored records ([`load_runs`][attnsep.api.load_runs]) to a CSV or Parquet
    file, atomically (``attnsep runs export``): the file and how many records it holds.

    Parameters
    ----------
    format
        ``csv`` or ``parquet``.
    output
        The file (default ``results/runs.FORMAT``); its name must end in ``.FORMAT`` and its
        folder must exist (only the default's ``results/`` is made).
    experiment
        Only this experiment's records (default: all).
    store
        The results database (it must exist).
    """
    one_of("format", format, EXPORT_FORMATS)
    with opened(store, experiment) as db:
        default = Path("results") / f"runs.{format}"
        given = default if output is None else output  # "" is a mistake, not the default
        target = writable_target(given, f".{format}", default=output is None)
        frame = db.frame(experiment)
    if output is None:
        make_folder(target.parent, default=True)
    export(frame, target, format)
    return target, len(frame)


def busy_wall(intervals: list[tuple[float, float]], gap: float = 600.0) -> tuple[float, int]:
    """Seconds during which at least one of the ``(started, finished)`` intervals ran, and in
    how many stretches (a pause of more than ``gap`` seconds starts another): the wall time of
    a run of stored jobs that may have been stopped and resumed."""
    wall, stretches, end = 0.0, 0, -float("inf")
    for started, finished in sorted(intervals):
        if started > end + gap:
            stretches += 1
        wall += max(0.0, finished - max(started, end))
        end = max(end, finished)
    return wall, stretches
