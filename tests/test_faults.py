"""Faults around the results store and the report: a damaged store file, a full disk during a
sweep, SIGTERM while the report is written, two reproductions sharing one store.

DESIGN.md: bad input is one ``error:`` line and exit code 2, nothing written half-way; the
store keeps whole rows only, and a sweep stopped at any point resumes where it stopped.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from attnsep.engine.jobs import expand_grid, jobs_for
from attnsep.engine.store import Store
from attnsep.engine.sweep import run_sweep
from attnsep.experiments import base
from engine_support import attnsep, file_digest, raw_rows, records_by_hash, run_cli, spawn

EXPERIMENT = "one-step"  # its quick preset: six jobs of a fraction of a second each


@dataclass(frozen=True)
class Reproduced:
    store: Path
    report: Path


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory) -> Reproduced:
    """``attnsep reproduce --quick --only one-step`` once: a whole store and its report."""
    folder = tmp_path_factory.mktemp("reproduced")
    store, report = folder / "store.sqlite", folder / "report"
    result = attnsep(
        *("reproduce", "--quick", "--only", EXPERIMENT, "--executor", "inline", "--quiet"),
        *("--store", str(store), "--out", str(report)),
    )
    assert result.returncode == 0, result.stderr
    return Reproduced(store, report)


def stored_records(path: Path) -> dict:
    store = Store.open_read(path)
    try:
        return records_by_hash(store.rows())
    finally:
        store.close()


def planned_keys() -> set[str]:
    return {job.key for job in jobs_for(EXPERIMENT, base.get(EXPERIMENT).config("quick"))}


# ------------------------------------------------------------ 1. a damaged store file


def damaged(good: Path, damage: str) -> bytes:
    """The bytes of the store ``good`` damaged as ``damage`` says."""
    data = good.read_bytes()
    if damage == "cut in half":
        return data[: len(data) // 2]
    if damage == "random bytes":
        return hashlib.shake_256(b"not a store").digest(len(data))
    if damage == "text":
        return b"these are not the results you are looking for\n" * 40
    # a page past the header and the schema overwritten: the file still opens, its header
    # and its tables still read, but the rows (or the index over them) do not
    db = sqlite3.connect(f"file:{good}?mode=ro", uri=True)
    try:
        size = db.execute("PRAGMA page_size").fetchone()[0]
        table = {"jobs page": "jobs", "index page": "jobs_by_experiment"}[damage]
        (page,) = db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,))
    finally:
        db.close()
    start = (page[0] - 1) * size
    return data[:start] + b"\xff" * size + data[start + size :]


@pytest.mark.parametrize("command", ["reproduce", "report"])
@pytest.mark.parametrize(
    "damage", ["cut in half", "random bytes", "text", "jobs page", "index page"]
)
def test_a_damaged_store_is_refused_in_one_line_and_left_as_it_was(
    reproduced, tmp_path, damage, command
):
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(damaged(reproduced.store, damage))
    before = file_digest(bad)
    args = {
        "reproduce": ["reproduce", "--only", EXPERIMENT, "--executor", "inline", "--quiet"],
        "report": ["report", "--workers", "1"],
    }[command]
    result = run_cli([*args, "--store", str(bad), "--out", str(tmp_path / "out")], tmp_path)
    detail = f"code={result.returncode} stderr={result.stderr!r}"
    assert result.returncode == 2, detail
    assert result.stdout == "", detail
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: store "), detail
    assert str(bad) in lines[0], detail
    assert file_digest(bad) == before  # not a byte written, not even by SQLite when opening it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.sqlite"]  # no -wal, no report


# ------------------------------------------------------------ 2. the disk fills up mid-sweep

FULL_FIXED = {
    "seeds": 4,
    "m_values": [4],
    "series": ["fixed"],
    "d_values": [8, 12, 16, 20, 24, 28, 32, 40],
}
"""Eight one-step jobs of a few hundredths of a second, one per dimension."""
FULL_SWEEP = [
    *("sweep", EXPERIMENT, "--executor", "inline", "--json", "--quiet"),
    *(
        arg
        for name, value in FULL_FIXED.items()
        for arg in ("--set", f"{name}={json.dumps(value)}")
    ),
]


def test_a_full_disk_stops_the_sweep_cleanly_and_the_rerun_resumes(tmp_path, monkeypatch):
    jobs = [
        job
        for c in expand_grid(EXPERIMENT, "quick", FULL_FIXED, {})
        for job in jobs_for(EXPERIMENT, c)
    ]
    clean = Store(tmp_path / "clean.sqlite")
    assert run_sweep(jobs, clean, "inline").computed == len(jobs) == 8
    expected = records_by_hash(clean.rows())
    clean.close()

    # SQLite's own limit on the file's size: once the store holds one page more than a new
    # one, every write fails as on a full disk (SQLITE_FULL), after a few rows
    opened = Store.__init__

    def one_page_to_spare(self, *args, **kwargs):
        opened(self, *args, **kwargs)
        if self.writable:
            pages = self.db.execute("PRAGMA page_count").fetchone()[0]
            self.db.execute(f"PRAGMA max_page_count = {pages + 1}")

    path = tmp_path / "store.sqlite"
    command = [*FULL_SWEEP, "--store", str(path)]
    with monkeypatch.context() as patch:
        patch.setattr(Store, "__init__", one_page_to_spare)
        full = attnsep(*command)
    detail = f"code={full.returncode} stderr={full.stderr!r}"
    assert full.returncode == 2, detail
    assert full.stdout == "", detail
    lines = full.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: store "), detail
    assert str(path) in lines[0] and "full" in lines[0], detail

    rows = raw_rows(path)  # the file passes SQLite's integrity check
    assert 1 <= len(rows) < len(jobs), "the store fills up between the first and the last job"
    for key, status, records in rows:  # each row written before is whole and as a clean run's
        assert status == "done" and json.loads(records) == expected[key]

    rerun = attnsep(*command)  # the limit lifted: only the missing jobs run
    assert rerun.returncode == 0, rerun.stderr
    summary = rerun.json()
    assert (summary["cached"], summary["computed"], summary["failed"]) == (
        len(rows),
        len(jobs) - len(rows),
        0,
    )
    assert stored_records(path) == expected


# ------------------------------------------------------------ 3. SIGTERM while writing the report

STALL = """
import io, time
from attnsep.report import html
real = html.atomic_writes
def stalled(writers):
    def slowly(write):
        def half_then_wait(handle):
            whole = io.BytesIO()
            write(whole)
            data = whole.getvalue()
            handle.write(data[: len(data) // 2])
            handle.flush()
            open(READY, "w").close()
            time.sleep(120)
            handle.write(data[len(data) // 2 :])
        return half_then_wait
    return real({p: slowly(w) if p.name == NAME else w for p, w in writers.items()})
html.atomic_writes = stalled
"""
"""A test's patch run before ``attnsep report``: the report file ``NAME`` is written half, then
the file ``READY`` appears and the writer waits (only the test's process is patched)."""

PREVIOUS = {"claims.json": b'{"preset": "previous", "claims": []}\n', "index.html": b"<html/>\n"}
"""A complete report written before, that the interrupted one would replace."""


def wait_for(path: Path, proc, seconds: float = 60) -> None:
    """Poll until ``path`` exists; fail if ``proc`` ends first or it takes ``seconds``."""
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert proc.poll() is None, f"ended before writing: {proc.communicate()}"
        assert time.monotonic() < deadline, f"{path.name} did not appear"
        time.sleep(0.02)


@pytest.mark.parametrize("stalled", ["claims.json", "index.html"])
def test_sigterm_while_the_report_is_written_leaves_the_previous_report(
    reproduced, tmp_path, stalled
):
    out, ready = tmp_path / "report", tmp_path / "ready"
    out.mkdir()
    for name, content in PREVIOUS.items():
        (out / name).write_bytes(content)
    prelude = f"NAME = {stalled!r}\nREADY = {str(ready)!r}\n{STALL}"
    args = ["report", "--store", str(reproduced.store), "--out", str(out), "--workers", "1"]
    proc = spawn(args, tmp_path, prelude=prelude)
    try:
        wait_for(ready, proc)
        assert [p.name for p in out.glob(f".{stalled}.*.tmp")], "the file is being written"
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    assert stderr.splitlines() == ["error: terminated"], stderr
    # both files as they were (not one new beside one old), nothing half-written beside them
    assert {name: (out / name).read_bytes() for name in PREVIOUS} == PREVIOUS
    assert [p.name for p in out.rglob("*.tmp*")] == []

    rerun = attnsep(*args)
    assert rerun.returncode == 0, rerun.stderr
    assert json.loads((out / "claims.json").read_text()) == json.loads(
        (reproduced.report / "claims.json").read_text()
    )
    assert (out / "index.html").read_text().rstrip().endswith("</html>")


# ------------------------------------------------------------ 4. two reproductions at once


MEET = """
import os, time
from pathlib import Path
from matplotlib.figure import Figure
real = Figure.savefig
def savefig(self, *args, **kwargs):
    real(self, *args, **kwargs)
    Path(FOLDER, str(os.getpid())).touch()
    deadline = time.monotonic() + 30
    while len(os.listdir(FOLDER)) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
Figure.savefig = savefig
"""
"""A test's patch run before each of two commands: a figure saved, each waits for the other
to have saved its own before going on (both write the figure at the same moment)."""


def test_two_reproductions_at_once_share_one_store_and_one_report(reproduced, tmp_path):
    store, out, meet = tmp_path / "shared.sqlite", tmp_path / "report", tmp_path / "meet"
    meet.mkdir()
    args = [
        *("reproduce", "--quick", "--only", EXPERIMENT, "--executor", "inline", "--quiet"),
        *("--store", str(store), "--out", str(out)),
    ]
    prelude = f"FOLDER = {str(meet)!r}\n{MEET}"
    procs = [spawn(args, tmp_path, prelude=prelude) for _ in range(2)]
    outs = [proc.communicate(timeout=120) for proc in procs]
    for proc, (_, stderr) in zip(procs, outs, strict=True):
        assert proc.returncode == 0, stderr

    rows = raw_rows(store)  # the file passes SQLite's integrity check
    assert sorted(key for key, _, _ in rows) == sorted(planned_keys())  # each job exactly once
    assert all(status == "done" for _, status, _ in rows)
    assert {key: json.loads(records) for key, _, records in rows} == stored_records(
        reproduced.store
    )
    # the report both wrote is whole and a single run's
    assert json.loads((out / "claims.json").read_text()) == json.loads(
        (reproduced.report / "claims.json").read_text()
    )
    assert (out / "index.html").read_text().rstrip().endswith("</html>")
    assert [p.name for p in out.rglob("*.tmp*")] == []


def test_a_report_file_gets_the_usual_permissions(tmp_path):
    """The atomic write's temporary file is private (``mkstemp``); the file it becomes is
    readable as any file the user writes (``0666`` less the umask)."""
    from attnsep.core.io import atomic_write

    mask = os.umask(0o022)
    try:
        written = atomic_write(tmp_path / "claims.json", lambda handle: handle.write(b"{}"))
    finally:
        os.umask(mask)
    assert written.stat().st_mode & 0o777 == 0o644
