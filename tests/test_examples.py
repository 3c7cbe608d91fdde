"""The config files in ``examples/``: each runs, as its comment says, in seconds, into a fresh
store; each one's fields are the experiment's (``attnsep show``)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from cli_support import attnsep

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.toml"))


def command(file: Path) -> list[str]:
    """The command a file's comment gives (``#   attnsep sweep NAME --config examples/F``)."""
    lines = [line for line in file.read_text().splitlines() if line.startswith("#   attnsep ")]
    assert len(lines) == 1, f"{file.name}: one '#   attnsep ...' line"
    args = shlex.split(lines[0].removeprefix("#   attnsep "))
    assert args[args.index("--config") + 1] == f"examples/{file.name}"
    return [str(file) if a == f"examples/{file.name}" else a for a in args]


def test_there_are_examples() -> None:
    assert len(EXAMPLES) >= 3


@pytest.mark.parametrize("file", EXAMPLES, ids=lambda f: f.name)
def test_an_example_runs_as_its_comment_says(file: Path, tmp_path: Path) -> None:
    args = command(file)
    store = tmp_path / "s.sqlite"
    code, out, err = attnsep(*args, "--store", str(store), "--executor", "inline", "--quiet")
    assert code == 0, err
    assert "0 failed" in out and "computed" in out and store.exists()
    planned = attnsep(*args, "--store", str(store), "--plan", "--json", "--calibration", "0")
    assert planned.returncode == 0 and planned.json()["to_run"] == 0  # all stored: a rerun is free
