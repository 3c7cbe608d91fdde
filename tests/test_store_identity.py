"""A store knows it is ours: the header stamp, files of other programs left
byte for byte as they were, read-only uses that never create or alter a file, a newer schema
refused, and a stored store from before the stamp migrated (written) or read as it is."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from attnsep import api
from attnsep.engine.store import Store
from attnsep.engine.store_state import APPLICATION_ID, SCHEMA_VERSION, inspect
from engine_support import TINY, attnsep, file_digest, one_line

DATA = Path(__file__).parent / "data"
OLD_STORE = DATA / "store_v1_unstamped.sqlite"
"""A store written by attnsep before the header stamp (``meta`` row ``schema`` = 1, no
``application_id`` / ``user_version``; WAL mode): two done jobs, one failed, a remembered
reproduction."""
OLD_STORE_SHA256 = "450a610d8668cbe0cabbf55f79ab8a3ababa3f329cba6f0122aa532f158cd871"
TINY_SET = [a for k, v in TINY.items() for a in ("--set", f"{k}={json.dumps(v)}")]


def listing(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def header(path: Path) -> tuple[int, int]:
    """``(application_id, user_version)`` read from the file's header bytes."""
    head = path.read_bytes()[:100]
    return int.from_bytes(head[68:72], "big"), int.from_bytes(head[60:64], "big")


def foreign_wal(path: Path) -> Path:
    """Another program's SQLite database, in WAL mode (its own tables, its own rows)."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("CREATE TABLE bookmarks (id INTEGER PRIMARY KEY, url TEXT)")
    db.execute("INSERT INTO bookmarks (url) VALUES ('https://example.org')")
    db.commit()
    db.close()
    return path


def foreign_rollback(path: Path) -> Path:
    """Another program's database in rollback mode, with tables named like ours."""
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE meta (key TEXT, value TEXT)")
    db.execute("CREATE TABLE jobs (name TEXT)")
    db.execute("INSERT INTO jobs VALUES ('cron')")
    db.commit()
    db.close()
    return path


def foreign_stamped(path: Path) -> Path:
    """Another program's database that stamps its own application id."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA application_id = 1234")
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    return path


def text_file(path: Path) -> Path:
    path.write_text("these are not the results you are looking for\n" * 20)
    return path


FOREIGN = {
    "wal sqlite": (foreign_wal, "an SQLite database of another program"),
    "rollback sqlite": (foreign_rollback, "an SQLite database of another program"),
    "stamped sqlite": (foreign_stamped, "an SQLite database of another program"),
    "text file": (text_file, "is not an SQLite database"),
}

COMMANDS = {
    "runs list": ["runs", "list"],
    "runs show": ["runs", "show", "1"],
    "runs export": ["runs", "export", "--format", "csv", "--output", "out.csv"],
    "report": ["report", "--out", "rep"],
    "sweep": ["sweep", "one-step", *TINY_SET, "--executor", "inline", "--quiet"],
    "sweep --plan": ["sweep", "one-step", *TINY_SET, "--plan", "--calibration", "0"],
    "reproduce": ["reproduce", "--only", "one-step", "--executor", "inline", "--quiet"],
    "reproduce --plan": ["reproduce", "--plan", "--only", "one-step", "--calibration", "0"],
    "frontier xor": ["frontier", "xor", "--d", "8,16", "--seeds", "2"],
}


@pytest.fixture
def guarded(monkeypatch):
    """No job may run: the store must be refused before anything is computed."""

    def guard(*args, **kwargs):
        raise AssertionError("a job ran although the store was refused")

    monkeypatch.setattr("attnsep.engine.sweep.run_sweep", guard)


# ---------------------------------------------------------------- the stamp


def test_a_new_store_is_stamped_in_its_header(tmp_path):
    path = tmp_path / "s.sqlite"
    Store(path).close()
    assert APPLICATION_ID == int.from_bytes(b"attn", "big")
    assert header(path) == (APPLICATION_ID, SCHEMA_VERSION)
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchall() == [
        (str(SCHEMA_VERSION),)
    ]
    db.close()
    assert inspect(path) == "current"
    before = file_digest(path)
    Store(path).close()  # reopening a current store writes nothing
    assert file_digest(path) == before


def test_an_empty_file_becomes_a_store_when_written_never_when_read(tmp_path):
    path = tmp_path / "s.sqlite"
    path.touch()
    with pytest.raises(ValueError, match="holds no results yet") as err:
        Store.open_read(path)
    assert one_line(str(err.value)) and path.read_bytes() == b""
    Store(path).close()
    assert header(path) == (APPLICATION_ID, SCHEMA_VERSION)


# ---------------------------------------------------------------- other programs' files


@pytest.mark.parametrize("kind", FOREIGN)
@pytest.mark.parametrize("opener", [Store, Store.open_read], ids=["write", "read"])
def test_a_foreign_file_is_refused_and_left_unchanged(tmp_path, kind, opener):
    make, words = FOREIGN[kind]
    path = make(tmp_path / "x.sqlite")
    before, files = file_digest(path), listing(tmp_path)
    with pytest.raises(ValueError) as err:
        opener(path)
    message = str(err.value)
    assert one_line(message) and words in message and str(path) in message, message
    assert file_digest(path) == before and listing(tmp_path) == files  # no -wal / -shm left


@pytest.mark.parametrize("kind", FOREIGN)
@pytest.mark.parametrize("command", COMMANDS)
def test_cli_refuses_a_foreign_store_exit_2_bytes_unchanged(
    tmp_path, monkeypatch, guarded, kind, command
):
    make, words = FOREIGN[kind]
    monkeypatch.chdir(tmp_path)
    path = make(tmp_path / "x.sqlite")
    before, files = file_digest(path), listing(tmp_path)
    code, out, err = attnsep(*COMMANDS[command], "--store", "x.sqlite")
    assert code == 2, err
    assert out == "" and err.startswith("error: ") and err.count("\n") == 1, err
    assert "'x.sqlite'" in err and words in err, err
    assert file_digest(path) == before, "the foreign file was changed"
    assert listing(tmp_path) == files, sorted(listing(tmp_path) - files)


@pytest.mark.parametrize(
    "read",
    [
        lambda p: api.runs(p),
        lambda p: api.load_runs(p),
        lambda p: api.stored_run(1, p),
        lambda p: api.export_runs("csv", p.parent / "out.csv", store=p),
    ],
    ids=["runs", "load_runs", "stored_run", "export_runs"],
)
def test_api_reads_refuse_a_foreign_store(tmp_path, read):
    path = foreign_wal(tmp_path / "x.sqlite")
    before, files = file_digest(path), listing(tmp_path)
    with pytest.raises(ValueError, match="another program"):
        read(path)
    assert file_digest(path) == before and listing(tmp_path) == files


# ---------------------------------------------------------------- read-only uses


@pytest.mark.parametrize(
    "command",
    [
        ["runs", "list"],
        ["runs", "show", "1"],
        ["runs", "export", "--format", "csv"],
        ["report"],
    ],
    ids=lambda c: " ".join(c),
)
@pytest.mark.parametrize("store", [None, "s.sqlite", "new/s.sqlite"], ids=str)
def test_a_read_only_command_on_a_missing_store_creates_nothing(
    tmp_path, monkeypatch, command, store
):
    monkeypatch.chdir(tmp_path)
    args = [*command] + ([] if store is None else ["--store", store])
    code, out, err = attnsep(*args)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert "does not exist; run a sweep" in err and (store or "attnsep.sqlite") in err, err
    assert listing(tmp_path) == set()  # not even results/


@pytest.mark.parametrize("store", [None, "s.sqlite", "new/s.sqlite"], ids=str)
def test_a_plan_on_a_missing_store_creates_nothing(tmp_path, monkeypatch, store):
    monkeypatch.chdir(tmp_path)
    where = [] if store is None else ["--store", store]
    plan = attnsep("sweep", "one-step", *TINY_SET, "--plan", "--json", "--calibration", "0", *where)
    assert plan.returncode == 0, plan.stderr
    assert listing(tmp_path) == set()


def test_reading_a_store_leaves_its_bytes_and_no_side_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = attnsep("sweep", "one-step", *TINY_SET, "--executor", "inline", "--quiet")
    assert code == 0, err
    path = tmp_path / "results" / "attnsep.sqlite"  # the default location: results/ is made
    before, files = file_digest(path), listing(tmp_path)
    assert attnsep("runs", "list", "--json").returncode == 0
    assert attnsep("runs", "show", "1").returncode == 0
    plan = attnsep("sweep", "one-step", *TINY_SET, "--plan", "--json", "--calibration", "0")
    assert plan.returncode == 0 and plan.json()["stored"] == plan.json()["jobs"] > 0
    assert file_digest(path) == before and listing(tmp_path) == files
    with pytest.raises(ValueError, match="read-only"):
        Store.open_read(path).remember("x", 1)


# ---------------------------------------------------------------- schema versions


def newer(path: Path, where: str) -> Path:
    Store(path).close()
    db = sqlite3.connect(path)
    if where == "user_version":
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    else:
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (str(SCHEMA_VERSION + 1),))
    db.commit()
    db.close()
    return path


@pytest.mark.parametrize("where", ["user_version", "meta"])
def test_a_newer_schema_is_refused_and_left_unchanged(tmp_path, monkeypatch, where):
    path = newer(tmp_path / "n.sqlite", where)
    before = file_digest(path)
    for opener in (Store, Store.open_read):
        with pytest.raises(ValueError) as err:
            opener(path)
        message = str(err.value)
        assert one_line(message) and f"schema {SCHEMA_VERSION + 1}" in message, message
        assert "n.sqlite" in message and "upgrade attnsep" in message
    monkeypatch.chdir(tmp_path)
    for command in (["runs", "list"], ["sweep", "one-step", *TINY_SET, "--executor", "inline"]):
        code, _, err = attnsep(*command, "--store", "n.sqlite")
        assert code == 2 and f"schema {SCHEMA_VERSION + 1}" in err, err
    assert file_digest(path) == before


# ---------------------------------------------------------------- a store from before the stamp


def old_rows() -> list[tuple]:
    """The job rows of the stored old file, straight from SQLite (read-only, immutable)."""
    db = sqlite3.connect(f"file:{OLD_STORE}?mode=ro&immutable=1", uri=True)
    rows = db.execute("SELECT * FROM jobs ORDER BY id").fetchall()
    db.close()
    return rows


def test_the_stored_old_store_is_as_committed():
    assert file_digest(OLD_STORE) == OLD_STORE_SHA256
    assert header(OLD_STORE) == (0, 0)
    assert [(r[0], r[2], r[5]) for r in old_rows()] == [
        (1, "a" * 24, "done"),
        (2, "b" * 24, "done"),
        (3, "c" * 24, "failed"),
    ]


def test_an_old_store_is_read_as_it_is(tmp_path, monkeypatch):
    path = tmp_path / "old.sqlite"
    shutil.copyfile(OLD_STORE, path)
    assert inspect(path) == "unstamped"
    store = Store.open_read(path)
    rows = store.rows()
    assert [(r["id"], r["config_hash"], r["status"]) for r in rows] == [
        (1, "a" * 24, "done"),
        (2, "b" * 24, "done"),
        (3, "c" * 24, "failed"),
    ]
    assert rows[1]["records"] == [{"d": 16, "m": 4, "rate": 1.0}, {"d": 16, "m": 8, "rate": 0.5}]
    assert store.done_keys(["a" * 24, "c" * 24]) == {"a" * 24}
    assert store.recall("last_reproduction")["names"] == ["one-step"]
    store.close()
    monkeypatch.chdir(tmp_path)
    listed = attnsep("runs", "list", "--store", "old.sqlite", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [r["id"] for r in listed.json()["runs"]] == [1, 2, 3]
    assert attnsep("runs", "export", "--format", "csv", "--store", "old.sqlite").returncode == 0
    assert (tmp_path / "results" / "runs.csv").read_text().count("\n") == 4  # header + records
    assert file_digest(path) == OLD_STORE_SHA256 and header(path) == (0, 0)
    assert not Path(f"{path}-wal").exists() and not Path(f"{path}-shm").exists()


def test_an_old_store_is_stamped_when_opened_for_writing_and_keeps_its_rows(tmp_path):
    path = tmp_path / "old.sqlite"
    shutil.copyfile(OLD_STORE, path)
    before = Store.open_read(path).rows()
    store = Store(path)
    assert store.rows() == before  # same ids, hashes, configs, records
    assert store.recall("last_reproduction")["names"] == ["one-step"]
    assert store.recall("schema") == SCHEMA_VERSION
    store.close()
    assert header(path) == (APPLICATION_ID, SCHEMA_VERSION) and inspect(path) == "current"
    assert [tuple(r) for r in sqlite3.connect(path).execute("SELECT * FROM jobs")] == old_rows()
    again = Store(path)  # a second opening finds it current and writes nothing
    assert again.done_keys(["a" * 24, "b" * 24, "c" * 24]) == {"a" * 24, "b" * 24}
    row = {**again.rows(keys=["a" * 24])[0], "config_hash": "d" * 24}
    assert again.put({k: v for k, v in row.items() if k != "id"})
    assert [r["id"] for r in again.rows()] == [1, 2, 3, 4]
    again.close()
    assert file_digest(OLD_STORE) == OLD_STORE_SHA256  # the committed file itself is untouched


def test_a_store_in_a_missing_folder_is_refused_and_nothing_made(tmp_path, monkeypatch):
    with pytest.raises(ValueError) as err:
        Store(tmp_path / "nodir" / "s.sqlite")
    assert "folder" in str(err.value) and "does not exist; create it first" in str(err.value)
    assert listing(tmp_path) == set()
    monkeypatch.chdir(tmp_path)
    Store().close()  # the default location: its results/ folder is made
    assert listing(tmp_path) == {"results", "results/attnsep.sqlite"}
