"""The command line and the API agree: a command's ``--json`` object is what the API function
it calls returns (DESIGN: one door; a notebook gets the command's numbers)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attnsep import api
from cli_support import attnsep

TINY = {"m_values": [4], "seeds": 4, "series": ["fixed"]}


def command_json(*args: str) -> dict:
    result = attnsep(*args, "--json")
    assert result.returncode == 0, result.stderr
    return result.json()


def plain(obj: object) -> object:
    """``obj`` as the JSON the command prints would read it back."""
    return json.loads(json.dumps(obj, allow_nan=False))


def test_list() -> None:
    assert command_json("list") == {"experiments": api.experiments()}


@pytest.mark.parametrize(
    ("args", "call"),
    [
        (["--T", "20", "--q", "3"], (20, 3, None, None)),
        (["--T", "20", "--q", "3", "--d", "10", "--width", "150"], (20, 3, 10, 150)),
    ],
)
def test_select_bound(args: list[str], call: tuple) -> None:
    assert command_json("select", "bound", *args) == plain(api.selection_bounds(*call))


def test_xor_one_step() -> None:
    shown = command_json("xor", "one-step", "--d", "12", "--m", "3", "--seeds", "3", "--seed", "5")
    assert shown == plain(api.xor_one_step(12, 3, 3, seed=5).report())


def test_sweep_and_runs_list(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    grid = {"d_values": [[16], [32]]}
    api.sweep("one-step", grid, fixed=TINY, store=store)  # computed here, cached below
    again = api.sweep("one-step", grid, fixed=TINY, store=store)
    sets = [f"--set={key}={json.dumps(value)}" for key, value in TINY.items()]
    swept = command_json(
        "sweep", "one-step", "--grid", "d_values=[[16],[32]]", *sets,
        "--executor", "inline", "--store", str(store),
    )  # fmt: skip
    assert swept == plain(again.report())
    assert (swept["computed"], swept["cached"]) == (0, 2)
    listed = command_json("runs", "list", "--store", str(store))
    runs = api.runs(store)
    assert [r["records"] for r in runs] == [1, 1]
    assert listed == {"runs": [{k: v for k, v in r.items() if k != "records"} for r in runs]}


def test_the_human_tables_are_the_api_tables() -> None:
    """What ``select bound`` prints for people is ``api.text_tables`` of its JSON object."""
    data = api.selection_bounds(20, 3)
    (table,) = api.text_tables("select bound", data)
    shown = attnsep("select", "bound", "--T", "20", "--q", "3").stdout
    assert table.title in shown and all(row[0] in shown for row in table.rows)
    assert "17/1140 = 0.0149123" in shown
