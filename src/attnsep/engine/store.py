"""The results store: one SQLite file, one row per finished job (standard library only).

A row is written in a single transaction when its job has finished, so a sweep killed at
any moment (even ``kill -9``) leaves only whole rows, and rerunning it computes exactly the
jobs that are missing. Several processes may write at once (WAL mode, busy timeout); a job
stored twice keeps its first row.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..core.validate import require

SCHEMA_VERSION = 1
DEFAULT_PATH = Path("results") / "attnsep.sqlite"

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    experiment TEXT NOT NULL,
    config_hash TEXT NOT NULL UNIQUE,
    config TEXT NOT NULL,
    seed INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('done', 'failed')),
    started REAL NOT NULL,
    finished REAL NOT NULL,
    seconds REAL NOT NULL,
    versions TEXT NOT NULL,
    git_commit TEXT,
    device TEXT NOT NULL,
    host TEXT NOT NULL,
    records TEXT,
    error TEXT
);
CREATE INDEX IF NOT EXISTS jobs_by_experiment ON jobs (experiment);
"""


class Store:
    """A results database at ``path`` (created on first use)."""

    def __init__(self, path: str | Path = DEFAULT_PATH) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            self.db.execute("PRAGMA busy_timeout = 60000")
            self.db.execute("PRAGMA journal_mode = WAL")
            self.db.executescript(SCHEMA)
        except sqlite3.DatabaseError as err:
            raise ValueError(
                f"store {str(self.path)!r} is not an attnsep results database ({err})"
            ) from None
        except OSError as err:
            raise ValueError(f"cannot open store {str(self.path)!r}: {err.strerror}") from None
        self._check_schema()

    def _check_schema(self) -> None:
        row = self.db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is None:
            self.db.execute(
                "INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),)
            )
            return
        require(
            int(row[0]) <= SCHEMA_VERSION,
            f"store {str(self.path)!r} has schema {row[0]}, newer than this attnsep "
            f"understands ({SCHEMA_VERSION}); upgrade attnsep",
        )

    def remember(self, key: str, value: Any) -> None:
        """Keep a small JSON value under ``key`` (e.g. the last reproduction's preset)."""
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value)))

    def recall(self, key: str) -> Any:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def close(self) -> None:
        self.db.close()

    def done_keys(self, keys: Iterable[str]) -> set[str]:
        """Which of ``keys`` have a finished (``done``) row."""
        keys = list(keys)
        found: set[str] = set()
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self.db.execute(
                f"SELECT config_hash FROM jobs WHERE status = 'done' AND config_hash IN ({marks})",
                chunk,
            )
            found.update(r[0] for r in rows)
        return found

    def put(self, row: dict[str, Any]) -> bool:
        """Store a finished job (a ``done`` row already there is kept); True if it was written."""
        try:
            encoded = {
                **row,
                "config": json.dumps(row["config"], sort_keys=True, allow_nan=False),
                "versions": json.dumps(row["versions"], sort_keys=True),
                "records": None
                if row.get("records") is None
                else json.dumps(row["records"], allow_nan=False),
            }
        except ValueError:
            raise ValueError(
                f"job {row['config_hash']}: its config or records hold NaN or infinity; not stored"
            ) from None
        columns = (
            "experiment",
            "config_hash",
            "config",
            "seed",
            "status",
            "started",
            "finished",
            "seconds",
            "versions",
            "git_commit",
            "device",
            "host",
            "records",
            "error",
        )
        values = [encoded.get(c) for c in columns]
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.execute(
                "DELETE FROM jobs WHERE config_hash = ? AND status = 'failed'",
                (row["config_hash"],),
            )
            cursor = self.db.execute(
                f"INSERT OR IGNORE INTO jobs ({', '.join(columns)}) "
                f"VALUES ({', '.join('?' * len(columns))})",
                values,
            )
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return cursor.rowcount == 1

    def rows(
        self, experiment: str | None = None, keys: Iterable[str] | None = None
    ) -> list[dict[str, Any]]:
        """Stored jobs (newest last), decoded, optionally filtered by experiment or hash."""
        query, args = "SELECT * FROM jobs", []
        clauses = []
        if experiment is not None:
            clauses.append("experiment = ?")
            args.append(experiment)
        if keys is not None:
            keys = list(keys)
            clauses.append(f"config_hash IN ({','.join('?' * len(keys))})")
            args.extend(keys)
        if clauses:
            query += " WHERE " + " AND ".join(clauses)
        cursor = self.db.execute(query + " ORDER BY id", args)
        names = [c[0] for c in cursor.description]
        out = []
        for values in cursor.fetchall():
            row = dict(zip(names, values, strict=True))
            for field in ("config", "versions", "records"):
                row[field] = None if row[field] is None else json.loads(row[field])
            out.append(row)
        return out

    def row(self, job_id: int) -> dict[str, Any]:
        cursor = self.db.execute("SELECT config_hash FROM jobs WHERE id = ?", (job_id,))
        found = cursor.fetchone()
        require(found is not None, f"no run with id {job_id} in {str(self.path)!r}")
        return self.rows(keys=[found[0]])[0]

    def frame(self, experiment: str | None = None, keys: Iterable[str] | None = None):
        """One pandas row per record of the finished jobs (optionally of ``experiment`` or of
        the jobs with hashes ``keys``): :func:`records_frame` of :meth:`rows`."""
        return records_frame(self.rows(experiment, keys))


def records_frame(rows: Iterable[dict[str, Any]]):
    """One pandas row per record of the ``done`` rows: the job's ``job_id``, ``experiment``,
    ``config_hash``, its config flattened to ``config.<field>`` columns, then the record's fields.

    A column holds one type, so that the table exports to CSV and Parquet alike: a column whose
    values are all numbers, all strings or all booleans keeps them (a missing value is empty);
    any other column (lists, dicts, or kinds mixed across experiments, e.g. ``config.seeds``
    an integer in one experiment and a list in another) holds each value as JSON text.
    """
    import pandas as pd

    flat = []
    for row in rows:
        if row["status"] != "done":
            continue
        for record in row["records"]:
            flat.append(
                {
                    "job_id": row["id"],
                    "experiment": row["experiment"],
                    "config_hash": row["config_hash"],
                    **{f"config.{k}": v for k, v in row["config"].items()},
                    **record,
                }
            )
    names = list(dict.fromkeys(name for item in flat for name in item))
    columns = {name: one_kind([item.get(name) for item in flat]) for name in names}
    return pd.DataFrame(columns, columns=names)


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return "str" if isinstance(value, str) else "json"


def one_kind(values: list[Any]) -> list[Any]:
    """``values`` as they are when the non-missing ones are all numbers, all strings or all
    booleans; else each non-missing value as JSON text (missing ones stay ``None``)."""
    kinds = {_kind(v) for v in values if v is not None}
    if len(kinds) <= 1 and "json" not in kinds:
        return values
    return [None if v is None else json.dumps(v) for v in values]
