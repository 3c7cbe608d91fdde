"""What the fuzz tests share (``test_fuzz_cli``, ``test_fuzz_api``): the example budget, a
time limit per example, a fresh working folder with fixtures per example, and a listing of it
to compare before and after."""

from __future__ import annotations

import io
import os
import shutil
import signal
import stat
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import chdir, contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

from attnsep.cli import main

FUZZ_EXAMPLES = int(os.environ.get("ATTNSEP_FUZZ_EXAMPLES", "3"))
"""Drawn examples per option or parameter, besides the explicit ones (``make test``: 3; more
with ``ATTNSEP_FUZZ_EXAMPLES=2000``)."""
LIMIT = float(os.environ.get("ATTNSEP_FUZZ_LIMIT", "20"))
"""Seconds one example may take; tiny sizes answer in well under one."""
FUZZ = settings(
    max_examples=FUZZ_EXAMPLES,
    derandomize=True,  # the same examples every run
    database=None,
    deadline=None,  # ``deadline`` below limits an example instead, with a clear message
    phases=[Phase.explicit, Phase.generate],  # one value each: shrinking would only rerun it
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
INTEGERS = st.one_of(
    st.integers(-100, 100),
    st.sampled_from([2**31 - 1, 2**31, 2**32, 2**53 + 1, 2**63 - 1, 2**63, 2**64, -(2**63) - 1]),
    st.integers(min_value=2**63),
    st.integers(max_value=-(2**63)),
)
"""Drawn integers: small ones (near every field's limits), machine-integer boundaries, and any
past int64. Not the sizes in between: those are valid runs of seconds to hours, which a limit
per example cannot tell from a hang (the guards' pricing of them is tested in
``test_resource_guards`` and ``test_fuzz_findings``)."""
ROOT = os.geteuid() == 0
"""chmod 0o500 does not stop root from writing into a folder: the unwritable path is then
one under /proc, where nobody can create a file (the chmod'ed folder is used otherwise)."""
HUGE = "1" + "0" * 30
STORE = Path("results") / "attnsep.sqlite"
"""The default store, a copy of the stocked one in every working folder."""
SUFFIXES = (".sqlite", ".npz", ".csv", ".toml")
PATHS = [
    "<file>", "<empty>", "<garbage>", "<folder>", "<new>", "<in-missing>", "<unwritable>",
    "<proc>", "<long-name>",
]  # fmt: skip
"""Path kinds (made by :func:`path_for`): an existing file (text, empty, garbage), a folder, a
new path, one in a missing folder, an unwritable one, a file under /proc, a name near the
system's 255 bytes."""
NOTE = "note: this run is priced at"
"""What a resumable run (sweep, reproduce, frontier) says when it will be long: it is not
refused (its finished jobs are stored), so one that runs past ``LIMIT`` after saying so is
what was asked for (``engine.sweep.longest_first``)."""


def path_for(kind: str, suffix: str) -> str:
    """The path of kind ``kind`` (``PATHS``) in the working folder, named ``*suffix``; any
    other value as it is."""
    made = {
        "<file>": "exists.txt",
        "<empty>": f"empty{suffix or '.txt'}",
        "<garbage>": f"garbage{suffix or '.bin'}",
        "<folder>": "folder",
        "<new>": f"new{suffix}",
        "<in-missing>": f"no-such-folder/new{suffix}",
        "<unwritable>": f"/proc/attnsep-fuzz/new{suffix}" if ROOT else f"locked/new{suffix}",
        "<proc>": "/proc/version",
        "<long-name>": "n" * (250 - len(suffix)) + suffix,
    }
    return made.get(kind, kind)


@contextmanager
def working_folder(store: Path, paths: bool = True) -> Iterator[Path]:
    """A fresh folder, made the working folder: the stocked store at the default path and,
    with ``paths``, the files and folders of ``path_for`` and a read-only folder ``locked``."""
    with tempfile.TemporaryDirectory(prefix="attnsep-fuzz-") as tmp:
        folder = Path(tmp)
        (folder / "results").mkdir()
        shutil.copyfile(store, folder / STORE)
        if not paths:
            with chdir(folder):
                yield folder
            return
        (folder / "exists.txt").write_text("hello\n")
        for suffix in (*SUFFIXES, ".txt", ".bin"):
            (folder / f"empty{suffix}").write_bytes(b"")
            (folder / f"garbage{suffix}").write_bytes(b"\x00\xff not a file of that kind \x89")
        (folder / "folder").mkdir()
        (folder / "locked").mkdir()
        (folder / "locked").chmod(stat.S_IRUSR | stat.S_IXUSR)  # 0o500
        try:
            with chdir(folder):
                yield folder
        finally:
            (folder / "locked").chmod(stat.S_IRWXU)


def snapshot(folder: Path) -> dict[str, tuple[bool, int, int]]:
    """Every path under ``folder`` with (is a folder, size, modification time)."""
    found = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        found[str(path.relative_to(folder))] = (path.is_dir(), info.st_size, info.st_mtime_ns)
    return found


class Slow(BaseException):
    """An example ran past ``LIMIT`` (a BaseException: no ``except Exception`` swallows it);
    ``stderr``: what the command had written by then."""

    stderr = ""


@contextmanager
def deadline(seconds: float, enough: Callable[[], bool] = lambda: False) -> Iterator[None]:
    """Raise ``Slow`` in the example after ``seconds``, or sooner (checked every 0.2 s) once
    ``enough()`` says what matters was seen."""
    start = time.perf_counter()

    def alarm(*_: Any) -> None:
        if enough() or time.perf_counter() - start > seconds:
            raise Slow(f"took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, 0.2, 0.2)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def invoke(argv: list[str], err: io.StringIO | None = None) -> tuple[int, str, str]:
    """``attnsep ARGV`` in this process: exit code, stdout, stderr (written into ``err`` if
    given). An exception other than ``SystemExit`` fails the test with its traceback; ``Slow``
    carries the stderr so far."""
    out, err = io.StringIO(), err or io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            main(argv)
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    except Slow as slow:
        slow.stderr = err.getvalue()
        raise
    except BaseException:
        pytest.fail(f"attnsep {argv!r} raised:\n{traceback.format_exc()}")
    return code, out.getvalue(), err.getvalue()


def stock(folder: Path, commands: list[list[str]]) -> Path:
    """A store in ``folder`` holding the jobs of ``commands`` (each must succeed)."""
    with chdir(folder):
        for argv in commands:
            code, _, err = invoke(argv)
            assert code == 0, err
    return folder / STORE


@contextmanager
def quick_figures() -> Iterator[None]:
    """Figures laid out and saved as empty PNG files: a figure folder is fuzzed for the folder
    (checked, made, written into), not for matplotlib's drawing, which takes seconds."""
    from matplotlib.figure import Figure

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Figure, "tight_layout", lambda self, *a, **k: None)
        patch.setattr(Figure, "savefig", lambda self, path, *a, **k: Path(path).write_bytes(b""))
        yield
