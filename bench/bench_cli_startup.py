"""Target 10: the command answers at once -- ``attnsep --help``, ``attnsep list`` (and
``--json``), ``attnsep sweep --help`` and bad-input errors against ``python -c pass``.

Each command runs as a fresh process (the console script), interleaved with the baseline
``rounds`` times; the rows give the median wall time and the median CPU time (user + system,
from the kernel's accounting of the finished child), which a loaded machine inflates far less
than the wall time. ``python -c "import torch"`` is measured beside them: what a command would
cost if it loaded torch. Target: a CPU time of at most 0.5 s for each command.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time

from common import CHILD_ENV, ROOT, VENV_BIN, fmt_time, med, row

TARGET_SECONDS = 0.5
ROUNDS = 7
SCRIPT = VENV_BIN / "attnsep"
ATTNSEP = (
    [str(SCRIPT)]
    if SCRIPT.exists()
    else [sys.executable, "-c", "from attnsep.cli import main; main()"]
)
COMMANDS = {
    "attnsep --help": [*ATTNSEP, "--help"],
    "attnsep list": [*ATTNSEP, "list"],
    "attnsep list --json": [*ATTNSEP, "list", "--json"],
    "attnsep sweep --help": [*ATTNSEP, "sweep", "--help"],
    "attnsep xor one-step --d 1 (error)": [*ATTNSEP, "xor", "one-step", "--d", "1"],
    "attnsep select bound --T 4 --q 9 (error)": [
        *ATTNSEP,
        "select",
        "bound",
        "--T",
        "4",
        "--q",
        "9",
    ],
    'python -c "import torch"': [sys.executable, "-c", "import torch"],
}
BASELINE = [sys.executable, "-c", "pass"]


def timed(args: list[str]) -> tuple[float, float, int]:
    """``(wall seconds, CPU seconds, exit code)`` of one run of ``args``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, env=CHILD_ENV, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode


def run() -> list[dict]:
    names = [*COMMANDS, "baseline"]
    walls: dict[str, list[float]] = {name: [] for name in names}
    cpus: dict[str, list[float]] = {name: [] for name in names}
    codes: dict[str, set[int]] = {name: set() for name in names}
    for _ in range(ROUNDS):
        for name in names:
            wall, cpu, code = timed(COMMANDS.get(name, BASELINE))
            walls[name].append(wall)
            cpus[name].append(cpu)
            codes[name].add(code)
    base_wall, base_cpu = med(walls["baseline"]), med(cpus["baseline"])
    load = os.getloadavg()[0]
    rows = []
    for name in COMMANDS:
        wall, cpu = med(walls[name]), med(cpus[name])
        reference = name.startswith("python")
        target = (
            "reference: what loading torch costs" if reference else f"CPU <= {TARGET_SECONDS} s"
        )
        rows.append(
            row(
                f"cli_startup: {name}",
                f"{fmt_time(wall)} wall, {fmt_time(cpu)} CPU",
                f"python -c pass: {fmt_time(base_wall)} wall, {fmt_time(base_cpu)} CPU",
                wall / base_wall,
                target,
                None if reference else cpu <= TARGET_SECONDS,
                f"median of {ROUNDS} runs interleaved with the baseline; exit codes "
                f"{sorted(codes[name])}; CPU = user + system of the child; ratio = wall / "
                f"baseline wall; load average {load:.1f} when done",
            )
        )
    return rows


if __name__ == "__main__":
    for r in run():
        print(r)
