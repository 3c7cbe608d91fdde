"""The results store: one SQLite file, one row per finished job (standard library only).

A row is written in a single transaction when its job has finished, so a sweep killed at
any moment (even ``kill -9``) leaves only whole rows, and rerunning it computes exactly the
jobs that are missing. Several processes may make, open and write one store at once (WAL mode,
busy timeout, the stamp checked again under the write lock); a job stored twice keeps its
first row.

A file is inspected read-only before anything is written to it (``store_state``: a file that is
not a store of ours, a damaged one or a newer schema is refused with one line and left byte for
byte as it was). A full disk stops a write with one line; the rows stored before stay whole. A
store from before the stamp (only the ``meta`` row) is stamped in one transaction when opened
for writing; read-only opening (:meth:`Store.open_read`) never creates, stamps or alters a file.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ..core.io import STORE_PATH, make_folder, named
from ..core.validate import require
from .frame import records_frame
from .store_state import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    check_readable,
    check_writable,
    reader,
    state_of,
)

DEFAULT_PATH = STORE_PATH

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS jobs (
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
)""",
    "CREATE INDEX IF NOT EXISTS jobs_by_experiment ON jobs (experiment)",
)


BUSY_SECONDS = 60.0
"""How long opening a store waits for other processes that hold it (SQLite's busy timeout)."""


def _create(path: Path) -> bool:
    """Make the empty file ``path`` (an empty SQLite database); True if this process made
    it, False if another one made it first (two sweeps started at once on a new store)."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
    except FileExistsError:
        return False
    return True


def _while_contended(action: Callable[[], object]) -> None:
    """Run ``action``, again while SQLite answers busy or locked, for up to
    :data:`BUSY_SECONDS`. Switching a new store to WAL answers busy at once, without waiting,
    when another process opens it at the same moment."""
    deadline = time.monotonic() + BUSY_SECONDS
    pause = 0.005
    while True:
        try:
            action()
            return
        except sqlite3.OperationalError as err:
            code = getattr(err, "sqlite_errorcode", 0) & 0xFF
            if code not in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                raise
            if time.monotonic() > deadline:
                raise
        time.sleep(pause)
        pause = min(2 * pause, 0.25)


def _rollback(db: sqlite3.Connection) -> None:
    """Undo ``db``'s open transaction. After some errors (a full disk) SQLite has already
    rolled it back itself, and a second ``ROLLBACK`` would raise and hide the first error."""
    if db.in_transaction:
        db.execute("ROLLBACK")


class Store:
    """The results database at ``path``: ``Store(path)`` opens it for writing (made when
    missing, in a folder that exists), :meth:`open_read` only reads an existing one."""

    def __init__(self, path: str | Path = DEFAULT_PATH, *, write: bool = True) -> None:
        self.path = named(path, "store")
        self.writable = write
        name = str(self.path)
        state = check_writable(self.path) if write else check_readable(self.path)
        made = False
        try:
            if not write:
                self.db = reader(self.path)
                return
            if state == "missing":
                make_folder(self.path.parent, default=self.path == DEFAULT_PATH)
                made = _create(self.path)
            self.db = sqlite3.connect(self.path, timeout=BUSY_SECONDS, isolation_level=None)
            _while_contended(lambda: self.db.execute("PRAGMA journal_mode = WAL"))
            if state != "current":
                _while_contended(self._stamp)
        except (sqlite3.DatabaseError, OSError, ValueError) as err:
            if hasattr(self, "db"):
                self.db.close()
            if made:  # nothing half-made is left behind
                for made_file in (self.path, Path(f"{self.path}-wal"), Path(f"{self.path}-shm")):
                    made_file.unlink(missing_ok=True)
            if isinstance(err, ValueError):
                raise
            if isinstance(err, OSError):
                raise ValueError(f"cannot open store {name!r}: {err.strerror}") from None
            raise ValueError(f"store {name!r} is not an attnsep results database ({err})") from None

    @classmethod
    def open_read(cls, path: str | Path = DEFAULT_PATH) -> Store:
        """The existing store at ``path``, read only: no file is created, stamped or changed
        (an unstamped store from an older attnsep is read as it is)."""
        return cls(path, write=False)

    def _stamp(self) -> None:
        """Make the tables and stamp the header, in one transaction (a new store, or one from
        before the stamp: its rows are kept as they are). The file is read again under the
        write lock: another process may have made or stamped it since :func:`inspect`."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            if state_of(self.db, str(self.path)) != "current":
                for statement in SCHEMA:
                    self.db.execute(statement)
                self.db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                self.db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                self.db.execute(
                    "INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),)
                )
            self.db.execute("COMMIT")
        except BaseException:
            _rollback(self.db)
            raise

    def _writing(self) -> None:
        require(self.writable, f"store {str(self.path)!r} is open read-only")

    @contextlib.contextmanager
    def _room(self) -> Iterator[None]:
        """A write that finds the disk full (or the file at its size limit) is one
        ``ValueError`` line naming the store: the rows written before are whole, and the same
        command rerun once there is room computes only the jobs still missing."""
        try:
            yield
        except sqlite3.OperationalError as err:
            if getattr(err, "sqlite_errorcode", 0) & 0xFF != sqlite3.SQLITE_FULL:
                raise
            raise ValueError(
                f"store {str(self.path)!r} cannot grow ({err}); make room and rerun: "
                "the jobs stored are kept"
            ) from None

    def remember(self, key: str, value: Any) -> None:
        """Keep a small JSON value under ``key`` (e.g. the last reproduction's preset)."""
        self._writing()
        with self._room():
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
        self._writing()
        with self._room():
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
                _rollback(self.db)
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

    def stamps(self, experiment: str, keys: Iterable[str]) -> list[tuple[str, int, str, float]]:
        """``(config_hash, id, status, finished)`` of the stored rows of ``keys``: what changes
        when a job is stored again, without decoding its records (``report.judged``)."""
        keys = list(keys)
        query = (
            "SELECT config_hash, id, status, finished FROM jobs WHERE experiment = ? AND "
            f"config_hash IN ({','.join('?' * len(keys))}) ORDER BY id"
        )
        return [tuple(r) for r in self.db.execute(query, [experiment, *keys]).fetchall()]

    def row(self, job_id: int) -> dict[str, Any]:
        cursor = self.db.execute("SELECT config_hash FROM jobs WHERE id = ?", (job_id,))
        found = cursor.fetchone()
        require(found is not None, f"no run with id {job_id} in {str(self.path)!r}")
        return self.rows(keys=[found[0]])[0]

    def frame(self, experiment: str | None = None, keys: Iterable[str] | None = None):
        """One pandas row per record of the finished jobs (optionally of ``experiment`` or of
        the jobs with hashes ``keys``): :func:`records_frame` of :meth:`rows`."""
        return records_frame(self.rows(experiment, keys))
