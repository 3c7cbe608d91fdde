"""Shared helpers of the benchmarks: rows, interleaved timing, child peak memory, profiles.

Every benchmark reports a *ratio measured in one run* (ours vs a baseline on the same
machine, timed side by side: ours, baseline, ours, baseline, ...) and never asserts a time.
"""

from __future__ import annotations

import cProfile
import io
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = ROOT / ".venv" / "bin"
GIB = 1 << 30

THREADS = int(os.environ.get("BENCH_THREADS", "1"))
"""Torch threads of every timing (ours and baseline alike), in process and in children.

One, as the engine's jobs run: on a shared 2-core machine two threads spin against any other
load (measured: a d=1e4 one step 20x slower with 2 threads than with 1 under load 3.5).
"""
torch.set_num_threads(THREADS)
CHILD_ENV = {**os.environ, "OMP_NUM_THREADS": str(THREADS), "MKL_NUM_THREADS": str(THREADS)}


def row(
    benchmark: str,
    ours: str,
    baseline: str,
    ratio: float | None,
    target: str,
    met: bool | None,
    note: str = "",
    profile: list[str] | None = None,
) -> dict[str, Any]:
    """One result row; ``profile`` (top functions) is attached where a target is missed."""
    out: dict[str, Any] = {
        "benchmark": benchmark,
        "ours": ours,
        "baseline": baseline,
        "ratio": None if ratio is None else float(ratio),
        "target": target,
        "met": met,
        "note": note,
    }
    if profile:
        out["profile"] = profile
    return out


def clock(fn: Callable[[], Any]) -> float:
    """Wall seconds of one call."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def interleaved(
    ours: Callable[[], Any],
    baseline: Callable[[], Any],
    rounds: int = 3,
    warmup: bool | Callable[[], Any] = True,
) -> tuple[list[float], list[float]]:
    """Times of ``rounds`` calls each, alternating ours / baseline.

    ``warmup``: ``True`` calls each once first; a callable is called instead (a small warm-up
    where a full call is expensive); ``False`` skips it.
    """
    if callable(warmup):
        warmup()
    elif warmup:
        ours()
        baseline()
    a, b = alternating([ours, baseline], rounds)
    return a, b


def alternating(fns: list[Callable[[], Any]], rounds: int) -> list[list[float]]:
    """Times of ``rounds`` calls of each function, alternating between them."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(rounds):
        for fn, out in zip(fns, times, strict=True):
            out.append(clock(fn))
    return times


def median_ratio(numerator: list[float], denominator: list[float]) -> float:
    """Median of the pairwise ratios ``numerator[i] / denominator[i]``."""
    return statistics.median(x / y for x, y in zip(numerator, denominator, strict=True))


def med(values: list[float]) -> float:
    return statistics.median(values)


def seconds(values: list[float]) -> str:
    """``median s (min-max)`` of a list of times."""
    m = med(values)
    if len(values) == 1:
        return f"{fmt_time(m)}"
    return f"{fmt_time(m)} ({fmt_time(min(values))}-{fmt_time(max(values))})"


def fmt_time(t: float) -> str:
    if t < 1e-3:
        return f"{t * 1e6:.0f} us"
    if t < 1:
        return f"{t * 1e3:.1f} ms"
    return f"{t:.2f} s"


def fmt_bytes(n: float) -> str:
    if n >= GIB:
        return f"{n / GIB:.2f} GiB"
    return f"{n / (1 << 20):.0f} MiB"


def fmt_rate(x: float, unit: str) -> str:
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= scale:
            return f"{x / scale:.3g} {prefix}{unit}"
    return f"{x:.3g} {unit}"


TIME = Path("/usr/bin/time")


def run_child(args: list[str], timeout: float = 900.0) -> tuple[int, float, float, str]:
    """Run ``args``; return ``(exit code, wall seconds, peak RSS bytes, stdout)``.

    The peak is the child's maximum resident set size as ``/usr/bin/time -f %M`` reports it.
    Not ``os.wait4`` from this process: Linux carries a process's peak RSS across ``exec``, so a
    child forked from a big benchmark process would report at least the parent's own peak.
    ``/usr/bin/time`` is a small process, so the peak of the child it forks is the child's own.
    """
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.NamedTemporaryFile("r") as peak_file,
    ):
        command = [str(TIME), "-f", "%M", "-o", peak_file.name, *args]
        start = time.perf_counter()
        proc = subprocess.Popen(
            command, stdout=out, stderr=err, cwd=ROOT, env=CHILD_ENV, start_new_session=True
        )
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            code = proc.wait()
        wall = time.perf_counter() - start
        lines = [x for x in peak_file.read().splitlines() if x.strip()]
        peak = float(lines[-1]) * 1024.0 if lines and lines[-1].strip().isdigit() else float("nan")
        out.seek(0)
        err.seek(0)
        text = out.read().decode(errors="replace")
        if code != 0:
            text += err.read().decode(errors="replace")[-2000:]
    return code, wall, peak, text


def python_child(code: str, timeout: float = 900.0) -> tuple[int, float, float, str]:
    """:func:`run_child` on ``python -c code`` with the project's interpreter."""
    return run_child([sys.executable, "-c", code], timeout)


def profile(fn: Callable[[], Any], top: int = 8) -> tuple[list[str], dict[str, float]]:
    """cProfile ``fn``: the ``top`` lines by own time, and the cumulative seconds by function name.

    A line reads ``tottime  cumtime  calls  function (file:line)``.
    """
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    stats = pstats.Stats(prof, stream=io.StringIO()).stats  # type: ignore[attr-defined]
    total = sum(v[2] for v in stats.values())
    lines = [f"cProfile: {total:.3f} s in all; top {top} by own time:"]
    cumulative: dict[str, float] = {}
    for (_path, _line, name), (_cc, _nc, _tt, cumtime, _callers) in stats.items():
        cumulative[name] = max(cumulative.get(name, 0.0), cumtime)
    entries = sorted(stats.items(), key=lambda kv: kv[1][2], reverse=True)
    for (path, line, name), (_cc, ncalls, tottime, cumtime, _callers) in entries[:top]:
        where = f" ({Path(path).name}:{line})" if line else ""
        lines.append(f"{tottime:7.3f} s own {cumtime:7.3f} s cum {ncalls:>7} calls  {name}{where}")
    return lines, cumulative


def profile_top(fn: Callable[[], Any], top: int = 8) -> list[str]:
    """The lines of :func:`profile`."""
    return profile(fn, top)[0]


def gemm_gflops(n: int = 2048, rounds: int = 3) -> float:
    """The machine's float64 GEMM rate (``n x n @ n x n``, :data:`THREADS` threads), median."""
    a = torch.randn(n, n, dtype=torch.float64)
    b = torch.randn(n, n, dtype=torch.float64)
    a @ b
    times = [clock(lambda: a @ b) for _ in range(rounds)]
    return 2 * n**3 / med(times) / 1e9


def torch_profile_top(fn: Callable[[], Any], top: int = 8) -> list[str]:
    """The torch profiler's ``top`` operators by self CPU time (inside autograd's backward too)."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    sys.stderr.flush()
    saved = os.dup(2)  # the profiler's C++ side logs start/stop lines straight to fd 2
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            with torch_profile(activities=[ProfilerActivity.CPU]) as prof:
                fn()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    events = sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)
    total = sum(e.self_cpu_time_total for e in events) / 1e6
    lines = [f"torch profiler: {total:.3f} s self CPU in all; top {top} operators:"]
    for e in events[:top]:
        lines.append(f"{e.self_cpu_time_total / 1e6:7.3f} s self {e.count:>7} calls  {e.key}")
    return lines
