"""Progress reports of the long calls (API ``progress=``, CLI bars) and ``attnsep --version``."""

from __future__ import annotations

from importlib.metadata import version

import pytest

import attnsep
from attnsep.cli import main


def recorder() -> tuple[list[tuple[int, int]], object]:
    calls: list[tuple[int, int]] = []
    return calls, lambda done, total: calls.append((done, total))


def test_train_selector_reports_every_step() -> None:
    calls, progress = recorder()
    attnsep.train_selector(8, 2, seeds=2, steps=30, eval_size=16, progress=progress)
    assert calls == [(step, 30) for step in range(31)]


@pytest.mark.parametrize(
    ("task", "options"),
    [("xor", {"d": 8, "width": 8, "steps": 25}), ("select", {"T": 4, "q": 2, "steps": 25})],
)
def test_train_fcn_reports_steps_up_to_its_end(task: str, options: dict) -> None:
    calls, progress = recorder()
    attnsep.train_fcn(task, seeds=2, progress=progress, **options)
    assert calls[0] == (0, 25)
    done = [d for d, total in calls]
    assert done == list(range(len(calls))) and all(total == 25 for _, total in calls)
    assert 1 <= done[-1] <= 25  # early stopping may end it before the last step


def test_version_is_the_installed_distribution(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"attnsep {version('attnsep')}\n"
    assert attnsep.__version__ == version("attnsep")
