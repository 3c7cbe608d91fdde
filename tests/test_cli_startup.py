"""The command answers at once: help, ``list`` and bad input load neither torch nor the other
heavy libraries (DESIGN.md, "Cheap to start"); the speed itself is bench row ``cli_startup``."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("torch", "matplotlib", "pandas", "ray")

CASES = [
    (["--help"], 0),
    (["xor", "--help"], 0),
    (["xor", "one-step", "--help"], 0),
    (["xor", "train", "--help"], 0),
    (["select", "train", "--help"], 0),
    (["fcn", "--help"], 0),
    (["frontier", "select", "--help"], 0),
    (["runs", "--help"], 0),
    (["list"], 0),
    (["list", "--json"], 0),
    (["xor", "one-step", "--d", "1"], 2),
    (["xor", "one-step", "--d", "8", "--attention", "bogus"], 2),
    (["xor", "train", "--d", "8", "--gradient", "fresh"], 2),
    (["xor", "train-v1", "--n", "30"], 2),
    (["select", "train", "--T", "4", "--q", "5"], 2),
    (["select", "train", "--eval-lengths", "x"], 2),
    (["fcn", "xor", "--d", "8", "--optimizer", "lbfgs"], 2),
    (["fcn", "select", "--seeds", "0"], 2),
    (["frontier", "xor", "--d", "16,x"], 2),
]

PROBE = """
import contextlib, io, json, sys
import attnsep.configs
heavy = {heavy!r}
out = [sorted(m for m in heavy if m in sys.modules)]
from attnsep.cli import main
for args in {cases!r}:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(args)
            code = 0
        except SystemExit as exit_:
            code = exit_.code
    out.append([code, sorted(m for m in heavy if m in sys.modules)])
print(json.dumps(out))
"""


def test_help_list_and_bad_input_load_no_heavy_library() -> None:
    """All cases in one fresh interpreter, in order: a heavy module loaded by any case stays in
    ``sys.modules`` and is charged to the first case that shows it."""
    code = PROBE.format(heavy=HEAVY, cases=[args for args, _ in CASES])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    configs_only, *results = json.loads(done.stdout.splitlines()[-1])
    assert configs_only == [], f"import attnsep.configs loaded {configs_only}"
    for (args, expected), (exit_code, loaded) in zip(CASES, results, strict=True):
        assert exit_code == expected, f"attnsep {' '.join(args)}: exit {exit_code}"
        assert loaded == [], f"attnsep {' '.join(args)} loaded {loaded}"


def test_a_computing_command_does_load_torch() -> None:
    """The probe above can see torch: the same probe on a command that computes finds it."""
    code = PROBE.format(heavy=HEAVY, cases=[["select", "bound", "--T", "8", "--q", "2"]])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    _, (exit_code, loaded) = json.loads(done.stdout.splitlines()[-1])
    assert exit_code == 0 and "torch" in loaded
