"""The README's first screen says what attnsep is, the two commands, the verdicts and where the
report is; it names every command ``attnsep --help`` lists, and its links lead to files."""

from __future__ import annotations

import re
from pathlib import Path

import typer

from attnsep.cli import app
from attnsep.metrics import stats

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_first_screen_has_the_two_commands_the_verdicts_and_the_report() -> None:
    screen = "\n".join(README.splitlines()[:40])
    for needed in ("make reproduce", "make test", "results/report/index.html", "--claim"):
        assert needed in screen, needed
    for verdict in (stats.REPRODUCED, stats.NOT_REPRODUCED, stats.INCONCLUSIVE, stats.UNSTABLE):
        assert f"| {verdict} |" in screen, verdict
    assert all(len(line) <= 100 for line in README.splitlines())


def test_the_readme_names_every_command_of_the_help() -> None:
    named = set(re.findall(r"`(\w+)`", README))
    commands = set(typer.main.get_command(app).commands)
    assert commands <= named, sorted(commands - named)


def test_every_link_of_the_readme_leads_to_a_file() -> None:
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README):
        assert (ROOT / target).exists(), target
