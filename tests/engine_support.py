"""Helpers for the ``test_engine_*`` tests: the CLI in-process and as a subprocess, store peeks."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from cli_support import Outcome, attnsep  # noqa: F401  (re-exported for the engine tests)

CLI = "import sys; from attnsep.cli import main; main(sys.argv[1:])"

# Cheap jobs of the one-step experiment (a few hundredths of a second each once warm).
TINY = {"d_values": [16, 32], "m_values": [4], "seeds": 4, "series": ["fixed"]}

# Twelve one-step jobs of roughly 0.2-0.5 s each: long enough to kill a sweep between two of them.
SLOW_SET = ["seeds=24", "d_values=[2048,4096,8192]", "m_values=[32,40,48,56]", 'series=["fixed"]']
SLOW_FIXED = {
    "seeds": 24,
    "d_values": [2048, 4096, 8192],
    "m_values": [32, 40, 48, 56],
    "series": ["fixed"],
}


def spawn(args: list[str], cwd: Path, prelude: str = "", **kwargs: Any) -> subprocess.Popen:
    """Start ``attnsep ARGS`` as another process in its own session (its group can be killed);
    ``prelude``: Python lines run before the command (a test's patch of the library)."""
    env = {**os.environ, "PYTHONHASHSEED": "random"}
    return subprocess.Popen(
        [sys.executable, "-c", f"{prelude}\n{CLI}", *args],
        cwd=cwd,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        **kwargs,
    )


def run_cli(args: list[str], cwd: Path, timeout: float = 120) -> Outcome:
    proc = spawn(args, cwd)
    stdout, stderr = proc.communicate(timeout=timeout)
    return Outcome(proc.returncode, stdout, stderr)


def peek_done(path: Path) -> int:
    """How many finished rows the store at ``path`` holds, read through a read-only connection
    (0 while the file or its table does not exist yet)."""
    if not path.exists():
        return 0
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            return db.execute("SELECT count(*) FROM jobs WHERE status = 'done'").fetchone()[0]
        finally:
            db.close()
    except sqlite3.OperationalError:
        return 0


def raw_rows(path: Path) -> list[tuple]:
    """``(config_hash, status, records JSON)`` of every row, straight from SQLite."""
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return db.execute("SELECT config_hash, status, records FROM jobs ORDER BY id").fetchall()
    finally:
        db.close()


def records_by_hash(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """``{config_hash: records}``; fails if a hash is stored twice."""
    hashes = [r["config_hash"] for r in rows]
    assert len(hashes) == len(set(hashes)), "a job is stored more than once"
    return {r["config_hash"]: r["records"] for r in rows}


def file_digest(path: Path) -> str:
    """The SHA-256 of a file's bytes: whether a command left it byte for byte as it was."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def one_line(text: str) -> bool:
    return "\n" not in text.strip() and text.strip() != ""


def child_pids(parent: int) -> list[int]:
    """Child processes of ``parent`` (a pool's workers, a raylet's), from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == parent:
                found.append(int(entry))
    return found


def running(pid: int) -> bool:
    """Whether process ``pid`` exists and has not exited (a zombie that no one reaped has)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def pool_workers(parent: int) -> list[int]:
    """The pool workers among ``parent``'s children (the spawn context also starts a resource
    tracker, which runs no job)."""
    workers = []
    for pid in child_pids(parent):
        try:
            with open(f"/proc/{pid}/cmdline") as handle:
                if "resource_tracker" not in handle.read():
                    workers.append(pid)
        except OSError:
            continue
    return workers


LONG_FIXED = {"seeds": 48, "d_values": [262144], "m_values": [64, 72], "series": ["fixed"]}
"""Two one-step jobs of about 20 s each on one thread of a 2-core machine."""
LONG_SET = [f"{name}={json.dumps(value)}" for name, value in LONG_FIXED.items()]
