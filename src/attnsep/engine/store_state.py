"""What a file is before a store is opened on it, read without changing it: missing, empty, an
attnsep store from before the header stamp, or a current one — and the checks made before
opening a store to write or to read (the results store, ``engine.store``).

A store knows it is ours: its header carries :data:`APPLICATION_ID` and the schema version
(``PRAGMA application_id`` / ``user_version``; the ``meta`` row ``schema`` says the same).
Another program's database, a file that is not SQLite, a damaged one (its pages are checked) or
a store of a newer schema is refused with one line and left byte for byte as it was.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Literal
from urllib.parse import quote

from ..core.io import STORE_PATH, existing_folder, named, writable_folder
from ..core.validate import require, shown

SCHEMA_VERSION = 1
APPLICATION_ID = int.from_bytes(b"attn", "big")
"""``PRAGMA application_id`` of every attnsep store (``0x6174746E``, the bytes ``attn``)."""
SQLITE_MAGIC = b"SQLite format 3\x00"

State = Literal["missing", "empty", "unstamped", "current"]


def reader(path: Path) -> sqlite3.Connection:
    """A connection that cannot write to ``path`` and leaves no side files next to it.

    Without a ``-wal`` file the database file holds everything, and SQLite reads it as
    ``immutable`` (no locks, no ``-wal`` / ``-shm`` made: a plain read-only connection would
    leave both beside a WAL database). With one (a writer is at work, or one was killed), the
    journal must be read too: a read-only connection, which never checkpoints into the file.
    """
    flags = "mode=ro" if Path(f"{path}-wal").exists() else "mode=ro&immutable=1"
    uri = f"file:{quote(str(path.absolute()))}?{flags}"
    return sqlite3.connect(uri, uri=True, timeout=60, isolation_level=None)


def inspect(path: str | Path) -> State:
    """What the file at ``path`` is, read without changing it: ``missing``, ``empty`` (no file
    content or no tables: a store can be made in it), ``unstamped`` (an attnsep store from
    before the header stamp) or ``current``. Anything else is a one-line ``ValueError``:
    a folder, a file that is not SQLite, another program's database, a newer schema."""
    path = named(path, "store")
    name = str(path)
    if not path.exists():
        return "missing"
    require(not path.is_dir(), f"store {name!r} is a folder, not a results database")
    try:
        with path.open("rb") as handle:
            header = handle.read(100)
    except OSError as err:
        raise ValueError(f"cannot read store {name!r}: {err.strerror}") from None
    if not header and not Path(f"{path}-wal").exists():
        return "empty"
    require(header.startswith(SQLITE_MAGIC), f"store {name!r} is not an SQLite database")
    try:
        db = reader(path)
        try:
            state = state_of(db, name)
            _check_pages(db, name)
            return state
        finally:
            db.close()
    except sqlite3.DatabaseError as err:
        raise ValueError(f"store {name!r} is not a readable SQLite database ({err})") from None


def _check_pages(db: sqlite3.Connection, name: str) -> None:
    """Refuse (one ``ValueError`` line) a database whose pages do not hold together.

    A file damaged past its header and schema (a disk error, a partial copy) still opens and
    names its tables; without this check the first query that reads the damage fails with
    SQLite's own traceback, possibly after the command wrote to the file. ``quick_check``
    reads every page once (milliseconds for tens of megabytes) and writes nothing."""
    found = [row[0] for row in db.execute("PRAGMA quick_check(1)")]
    if found != ["ok"]:
        lines = [line for text in found for line in str(text).splitlines()]
        problem = next((line for line in lines if not line.startswith("***")), "damaged")
        raise ValueError(f"store {name!r} is damaged ({problem}); restore it from a copy")


def state_of(db: sqlite3.Connection, name: str) -> State:
    """What the open database ``db`` is (:func:`inspect`'s states but ``missing``), read from
    its header and tables; anything that is not a store of ours is a one-line ``ValueError``."""
    application_id = db.execute("PRAGMA application_id").fetchone()[0]
    user_version = db.execute("PRAGMA user_version").fetchone()[0]
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    mark: str | None = None
    if "meta" in tables:
        found = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        mark = None if found is None else str(found[0])
    ours = application_id == APPLICATION_ID
    if not ours and application_id == 0 and user_version == 0 and not tables:
        return "empty"
    unstamped = application_id == 0 and {"meta", "jobs"} <= tables and mark is not None
    require(ours or unstamped, f"store {name!r} is an SQLite database of another program")
    try:
        version = max(user_version, 0 if mark is None else int(mark))
    except ValueError:
        raise ValueError(f"store {name!r} has an unreadable schema mark {mark!r}") from None
    require(
        version <= SCHEMA_VERSION,
        f"store {name!r} has schema {version}, newer than this attnsep understands "
        f"({SCHEMA_VERSION}); upgrade attnsep",
    )
    return "current" if ours and user_version == SCHEMA_VERSION else "unstamped"


def check_writable(path: str | Path) -> State:
    """Check, writing nothing, that a store can be opened for writing at ``path``: an attnsep
    store (or an empty file), or a new file in a folder that exists (the default location's
    ``results/`` may still be made). Its :func:`inspect` state."""
    path = named(path, "store")
    state = inspect(path)
    if state == "missing":
        limit = 255  # NAME_MAX of the usual file systems; SQLite adds "-journal" to the name
        require(
            len(path.name.encode(errors="surrogateescape")) + len("-journal") <= limit,
            f"store name {shown(path.name)} is too long: with SQLite's '-journal' beside it, "
            f"it must fit {limit} bytes",
        )
        try:
            if path == STORE_PATH:
                writable_folder(path.parent, default=True)
            else:
                existing_folder(path.parent)
        except ValueError as err:
            raise ValueError(f"cannot create store {str(path)!r}: {err}") from None
    return state


def check_readable(path: str | Path) -> State:
    """Check, writing nothing, that ``path`` holds an attnsep store to read."""
    state = inspect(path)
    name = str(path)
    require(state != "missing", f"store {name!r} does not exist; run a sweep or reproduce first")
    require(
        state != "empty", f"store {name!r} holds no results yet; run a sweep or reproduce first"
    )
    return state
