"""The command answers at once: help, ``list`` and bad input load neither torch, numpy nor the
other heavy libraries (DESIGN.md, "Cheap to start"); the speed itself is bench row
``cli_startup``."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("torch", "numpy", "matplotlib", "pandas", "ray")

CASES = [
    (["--help"], 0),
    (["xor", "--help"], 0),
    (["xor", "one-step", "--help"], 0),
    (["xor", "train", "--help"], 0),
    (["select", "train", "--help"], 0),
    (["fcn", "--help"], 0),
    (["frontier", "select", "--help"], 0),
    (["runs", "--help"], 0),
    (["sweep", "--help"], 0),
    (["reproduce", "--help"], 0),
    (["list"], 0),
    (["list", "--json"], 0),
    (["show", "--help"], 0),
    (["select", "bound", "--T", "8", "--q", "2"], 0),  # exact rationals, no torch
    (["xor", "one-step", "--d", "1"], 2),
    (["xor", "one-step", "--d", "8", "--attention", "bogus"], 2),
    (["xor", "one-step", "--d", "8", "--support", "a,b"], 2),
    (["xor", "train", "--d", "8", "--gradient", "fresh"], 2),
    (["xor", "train-v1", "--n", "30"], 2),
    (["select", "train", "--T", "4", "--q", "5"], 2),
    (["select", "train", "--eval-lengths", "x"], 2),
    (["select", "bound", "--T", "4", "--q", "9"], 2),
    (["select", "bound", "--T", "4", "--q", "1", "--width", "3"], 2),
    (["fcn", "xor", "--d", "8", "--optimizer", "lbfgs"], 2),
    (["fcn", "select", "--seeds", "0"], 2),
    (["sweep", "bogus"], 2),
    (["show", "bogus"], 2),
    (["sweep", "one-step", "--executor", "bogus"], 2),
    (["sweep", "one-step", "--plan", "--calibration", "nan"], 2),
    (["reproduce", "--only", "bogus"], 2),
    (["runs", "list", "--store", "/nonexistent/s.sqlite"], 2),
    (["runs", "export", "--format", "xml"], 2),
    (["report", "--store", "/nonexistent/s.sqlite"], 2),
    (["frontier", "xor", "--d", "16,x"], 2),
    (["frontier", "select", "--T", "4", "--q", "4"], 2),
    (["frontier", "select", "--store", "/proc/s.sqlite"], 2),
]
NUMPY_CASES = [  # a sweep's fields are checked by the experiment's config; its module loads numpy
    (["sweep", "one-step", "--set", "bogus=1"], 2),
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


def probe(cases: list[list[str]]) -> list:
    """Run ``cases`` in one fresh interpreter, in order: the heavy modules loaded by
    ``import attnsep.configs``, then the exit code and the heavy modules loaded after each case
    (a module stays in ``sys.modules``: it is charged to the first case that shows it)."""
    code = PROBE.format(heavy=HEAVY, cases=cases)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_help_list_and_bad_input_load_no_heavy_library() -> None:
    cases = CASES + NUMPY_CASES  # the numpy ones last
    configs_only, *results = probe([args for args, _ in cases])
    assert configs_only == [], f"import attnsep.configs loaded {configs_only}"
    for (args, expected), (exit_code, loaded) in zip(cases, results, strict=True):
        allowed = ["numpy"] if (args, expected) in NUMPY_CASES else []
        assert exit_code == expected, f"attnsep {' '.join(args)}: exit {exit_code}"
        assert set(loaded) <= set(allowed), f"attnsep {' '.join(args)} loaded {loaded}"


def test_a_computing_command_does_load_torch() -> None:
    """The probe above can see torch: the same probe on a command that computes finds it."""
    _, (exit_code, loaded) = probe([["xor", "one-step", "--d", "4", "--m", "2", "--seeds", "1"]])
    assert exit_code == 0 and "torch" in loaded


def test_list_names_what_the_registry_holds() -> None:
    """``attnsep list`` reads every experiment's name, claim, title, paper and companions from
    pure data (``built_ins``, so that ``list`` loads no numpy); they are the registry's, and each
    package registers the experiment its entry names."""
    from attnsep.experiments import FIELDS, MODULES, base, built_in, load_all
    from attnsep.experiments.built_ins import BUILT_IN

    load_all()
    registry = {
        e.name: {**{f: getattr(e, f) for f in FIELDS}, "companions": list(e.companions)}
        for e in base.REGISTRY.values()
    }
    assert {item["name"]: item for item in built_in()} == registry
    for entry in BUILT_IN:
        package = f"attnsep.experiments.{entry['package']}"
        module = base.REGISTRY[entry["name"]].run.__module__
        assert module == package or module.startswith(f"{package}."), entry["name"]
    assert len(MODULES) == len(BUILT_IN)


def test_help_prints_brackets_in_option_descriptions() -> None:
    """A config field's description with ``[...]`` reaches ``--help`` whole (not read as
    rich markup and dropped)."""
    import re

    from typer.testing import CliRunner

    from attnsep.cli import app

    result = CliRunner().invoke(app, ["fcn", "xor", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    text = re.sub(r"[\s│]+", " ", result.output)
    assert "Learning rate [default: sgd min(0.1, 25/width), adam 0.01]" in text
