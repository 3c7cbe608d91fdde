"""The SQLite results store: round trip, one row per job, failed rows retried, bad files."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3

import pytest

from attnsep.engine.executors import execute
from attnsep.engine.jobs import jobs_for
from attnsep.engine.store import Store
from attnsep.engine.store_state import SCHEMA_VERSION
from attnsep.experiments import base
from engine_support import TINY, one_line


def make_row(key: str, status: str = "done", records=None, **extra) -> dict:
    if records is None and status == "done":
        records = [
            {"d": 16, "m": 4, "rate": 0.75, "ok": True, "maps": [[0.5, 0.25], [1, 2]]},
            {"d": 32, "m": 4, "rate": 1.0, "ok": False, "maps": []},
        ]
    return {
        "experiment": "one-step",
        "config_hash": key,
        "config": {"seed": 0, "d_values": [16, 32], "attention": "softmax", "eta_scale": 16.0},
        "seed": 0,
        "status": status,
        "started": 100.0,
        "finished": 101.5,
        "seconds": 1.5,
        "versions": {"attnsep": "0.1.0", "torch": "x"},
        "git_commit": None,
        "device": "cpu",
        "host": "here",
        "records": records,
        "error": "ValueError: boom\ntraceback" if status == "failed" else None,
        **extra,
    }


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "store.sqlite")
    yield s
    s.close()


def without_id(row: dict) -> dict:
    return {k: v for k, v in row.items() if k != "id"}


def test_put_then_rows_round_trip(store, tmp_path):
    first, second = make_row("a" * 24), make_row("b" * 24, seed=3)
    assert store.put(first) and store.put(second)
    rows = store.rows()
    assert [without_id(r) for r in rows] == [first, second]
    assert rows[0]["id"] < rows[1]["id"]
    assert store.rows(keys=["b" * 24]) == [rows[1]]
    assert store.rows("head-specialization") == []
    assert store.rows(keys=[]) == []
    assert store.row(rows[1]["id"]) == rows[1]
    with pytest.raises(ValueError, match="no run with id 999"):
        store.row(999)
    # a new connection (another process, later) reads the same
    store.close()
    again = Store(store.path)
    assert again.rows() == rows
    again.close()


def test_a_real_job_row_round_trips(store):
    exp = base.get("one-step")
    (job,) = jobs_for("one-step", exp.config("quick", **{**TINY, "d_values": [16]}))
    row = execute(job)
    assert row["status"] == "done", row["error"]
    store.put(row)
    (back,) = store.rows()
    assert without_id(back) == row
    assert back["config"] == job.config and back["records"] == exp.run(
        exp.config_type(**job.config)
    )


def test_frame_is_one_row_per_record_with_config_columns(store):
    store.put(make_row("a" * 24))
    store.put(make_row("b" * 24, records=[{"d": 64, "m": 8, "rate": 0.5, "ok": True, "maps": [1]}]))
    store.put(make_row("c" * 24, status="failed"))  # failed jobs have no records
    frame = store.frame()
    assert len(frame) == 3
    assert list(frame["config_hash"]) == ["a" * 24, "a" * 24, "b" * 24]
    assert list(frame["d"]) == [16, 32, 64] and list(frame["rate"]) == [0.75, 1.0, 0.5]
    assert json.loads(frame["maps"][0]) == [[0.5, 0.25], [1, 2]]
    assert json.loads(frame["config.d_values"][0]) == [16, 32]
    assert frame["config.eta_scale"][0] == 16.0 and frame["config.attention"][0] == "softmax"
    assert set(frame["job_id"]) == {r["id"] for r in store.rows() if r["status"] == "done"}
    assert store.frame("head-specialization").empty


def test_a_job_stored_twice_keeps_one_row(store):
    first = make_row("a" * 24)
    assert store.put(first) is True
    assert store.put(make_row("a" * 24, records=[{"d": 1}], host="elsewhere")) is False
    (row,) = store.rows()
    assert without_id(row) == first


def test_failed_row_is_replaced_by_a_later_done_row(store):
    key = "f" * 24
    assert store.put(make_row(key, status="failed"))
    assert store.done_keys([key]) == set()
    assert [r["status"] for r in store.rows()] == ["failed"]
    assert store.put(make_row(key, status="failed", host="again"))  # still one failed row
    assert [(r["status"], r["host"]) for r in store.rows()] == [("failed", "again")]
    assert store.put(make_row(key)) is True
    (row,) = store.rows()
    assert row["status"] == "done" and row["error"] is None and row["records"]
    assert store.done_keys([key]) == {key}
    # a done row is never replaced by a failure
    assert store.put(make_row(key, status="failed")) is False
    assert [r["status"] for r in store.rows()] == ["done"]


def test_done_keys_across_chunks(store):
    keys = [f"{i:024x}" for i in range(1201)]
    stored = {keys[0], keys[499], keys[500], keys[1200]}
    for key in stored:
        store.put(make_row(key))
    store.put(make_row(keys[700], status="failed"))
    assert store.done_keys(keys) == stored
    assert store.done_keys(iter(keys)) == stored  # any iterable, e.g. a generator
    assert store.done_keys([]) == set()
    assert store.done_keys(["nope"]) == set()


def test_non_finite_records_are_refused_and_leave_nothing(store):
    with pytest.raises(ValueError):
        store.put(make_row("a" * 24, records=[{"rate": float("nan")}]))
    assert store.rows() == []
    assert store.put(make_row("a" * 24))  # the store is still usable


def test_remember_and_recall(store):
    assert store.recall("last_reproduction") is None
    store.remember("last_reproduction", {"preset": "quick", "names": ["one-step"]})
    store.remember("other", [1, 2.5, None, "x"])
    assert store.recall("last_reproduction") == {"preset": "quick", "names": ["one-step"]}
    store.remember("last_reproduction", {"preset": "full", "names": []})
    assert store.recall("last_reproduction") == {"preset": "full", "names": []}
    store.close()
    again = Store(store.path)
    assert again.recall("other") == [1, 2.5, None, "x"]
    assert again.recall("schema") == SCHEMA_VERSION  # the schema mark lives beside them
    again.close()


@pytest.mark.parametrize(
    "content", [b"this is not a database, just some text\n" * 50, b"\x00\xff" * 4096]
)
def test_a_file_that_is_not_sqlite_is_a_one_line_value_error(tmp_path, content):
    path = tmp_path / "results.sqlite"
    path.write_bytes(content)
    with pytest.raises(ValueError) as err:
        Store(path)
    assert one_line(str(err.value)) and "results.sqlite" in str(err.value)
    assert path.read_bytes() == content  # left alone


def test_a_newer_schema_is_refused_naming_it(tmp_path):
    path = tmp_path / "store.sqlite"
    Store(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (str(SCHEMA_VERSION + 1),))
    db.commit()
    db.close()
    with pytest.raises(ValueError) as err:
        Store(path)
    message = str(err.value)
    assert (
        one_line(message)
        and f"schema {SCHEMA_VERSION + 1}" in message
        and "store.sqlite" in message
    )


def test_the_same_schema_opens_and_the_mark_is_written_once(tmp_path):
    path = tmp_path / "store.sqlite"
    for _ in range(3):
        Store(path).close()
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchall() == [
        (str(SCHEMA_VERSION),)
    ]
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()


def _open_at_once(path, barrier, errors):
    barrier.wait()
    try:
        Store(path).close()
    except Exception as err:  # reported to the parent, which fails the test with it
        errors.put(repr(err))


def test_processes_opening_a_new_store_at_once_all_open_it(tmp_path):
    # Switching a new file to WAL answers "database is locked" at once, without SQLite's busy
    # wait, when another process does the same; before the retry about one new store in three
    # opened by four processes failed here, and its cleanup broke the others' files.
    context = multiprocessing.get_context("fork")
    errors = context.Queue()
    for trial in range(12):
        path = tmp_path / f"new{trial}.sqlite"
        barrier = context.Barrier(4)
        openers = [
            context.Process(target=_open_at_once, args=(path, barrier, errors)) for _ in range(4)
        ]
        for opener in openers:
            opener.start()
        for opener in openers:
            opener.join(timeout=120)
        assert [o.exitcode for o in openers] == [0] * 4
        assert errors.empty(), errors.get()
        store = Store.open_read(path)
        assert store.rows() == [] and store.recall("schema") == SCHEMA_VERSION
        store.close()
