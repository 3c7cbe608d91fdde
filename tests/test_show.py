"""``attnsep show``: an experiment's fields, presets and costs, from the API and the command
line alike; the grid shorthand for list fields; an unknown field names the allowed ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attnsep import api
from attnsep.experiments import base
from cli_support import attnsep


def widest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


def test_show_json_lists_the_fields_with_their_defaults_and_the_presets() -> None:
    code, out, err = attnsep("show", "one-step", "--json")
    assert code == 0 and err == ""
    shown = json.loads(out)
    config = base.get("one-step").config_type
    fields = {f["name"]: f for f in shown["fields"]}
    assert list(fields) == list(config.model_fields)
    for name, info in config.model_fields.items():
        assert fields[name]["default"] == info.get_default(call_default_factory=True), name
    d_values = fields["d_values"]
    assert d_values["type"] == "list[int]" and d_values["default"] == [64, 256, 1024]
    assert d_values["limits"] == {"min_length": 1, "items": {"ge": 2}}
    assert d_values["help"]
    assert fields["attention"]["limits"]["choices"][:2] == ["entmax-1.5", "erf"]
    assert fields["schedule_scale"]["limits"] == {"gt": 0, "le": 1e6}
    assert set(shown["presets"]) == {"quick", "standard", "full"} == set(shown["cost"])
    assert shown["presets"]["quick"] == {"d_values": [64, 256, 1024], "seeds": 32}
    assert shown["presets"]["full"]["device"] == "auto"
    assert shown["cost"]["quick"]["jobs"] == 6 and shown["cost"]["quick"]["cpu_seconds"] > 0
    assert (shown["claim"], shown["criterion_version"]) == ("A7.1", 2)
    assert "Criterion" in shown["description"]


def test_the_api_gives_what_the_command_prints() -> None:
    _, out, _ = attnsep("show", "select-width", "--json")
    assert json.loads(out) == json.loads(json.dumps(api.show("select-width")))


def test_every_experiment_shows_and_its_table_fits_100_columns(monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    for item in api.experiments():
        code, out, err = attnsep("show", item["name"])
        assert code == 0 and err == "", item["name"]
        assert widest(out) <= 100, item["name"]
        assert item["title"] in out and "CPU estimate" in out
    _, out, _ = attnsep("show", "one-step")
    assert "[64, 256, 1024]" in out and "length >= 1; items" in out and "Replicas per" in out
    monkeypatch.delenv("COLUMNS")
    code, out, _ = attnsep("show", "one-step")  # not a terminal: 80 columns
    assert code == 0 and widest(out) <= 80 and "d_values" in out


def test_an_unknown_experiment_is_one_line_naming_the_known_ones() -> None:
    code, out, err = attnsep("show", "bogus")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("error: experiment must be one of ") and "'bogus'" in err
    assert all(item["name"] in err for item in api.experiments())


def planned_jobs(**given) -> list[str]:
    found = api.sweep_plan("one-step", store="/nonexistent/s.sqlite", calibration=0, **given)
    return [cost.job.key for cost in found.experiments[0].costs]


def test_a_list_field_sweeps_single_values_as_the_nested_form_does(tmp_path: Path) -> None:
    fixed = ["seeds=4", 'series=["fixed"]']
    new = planned_jobs(grid=["d_values=16,32", "m_values=4,8"], fixed=fixed)
    old = planned_jobs(grid=["d_values=[[16],[32]]", "m_values=[[4],[8]]"], fixed=fixed)
    assert new == old and len(new) == 4
    typed = planned_jobs(grid={"d_values": [16, 32], "m_values": [[4], [8]]}, fixed=fixed)
    assert typed == new
    assert planned_jobs(fixed=["m_values=8", *fixed]) == planned_jobs(
        fixed=["m_values=[8]", *fixed]
    )
    store = str(tmp_path / "s.sqlite")
    plans = [
        attnsep("sweep", "one-step", "--grid", grid, "--plan", "--json", "--store", store)
        for grid in ("d_values=16,32", "d_values=[[16],[32]]")
    ]
    assert plans[0].returncode == 0
    first, second = (plan.json() for plan in plans)
    for plan in (first, second):  # the machine's free memory, read at each call
        plan["memory"].pop("available")
    assert first == second
    assert first["jobs"] == 4  # two d's, each in the schedule and the fixed series


@pytest.mark.parametrize(
    "args",
    [["--set", "x=1"], ["--grid", "x=1,2"], ["--config", "FILE"]],
)
def test_an_unknown_field_lists_the_allowed_ones(tmp_path: Path, args: list[str]) -> None:
    file = tmp_path / "c.toml"
    file.write_text("[set]\nx = 1\n")
    args = [str(file) if a == "FILE" else a for a in args]
    code, out, err = attnsep("sweep", "one-step", *args, "--store", str(tmp_path / "s.sqlite"))
    allowed = ", ".join(base.get("one-step").config_type.model_fields)
    assert code == 2 and out == ""
    assert err == f"error: unknown field 'x' for one-step; allowed: {allowed}\n"
    assert not (tmp_path / "s.sqlite").exists()


def test_an_unknown_option_of_a_library_config_lists_the_allowed_ones() -> None:
    with pytest.raises(ValueError, match=r"^unknown field 'bogus'; allowed: d, m, k, seeds,"):
        api.xor_one_step(d=8, bogus=1)


def test_a_bad_list_value_says_what_the_list_holds() -> None:
    code, _, err = attnsep("sweep", "one-step", "--set", "d_values=1", "--plan")
    assert code == 2
    assert (
        err == "error: one-step: d_values must be a non-empty list, each an integer >= 2, got [1]\n"
    )
