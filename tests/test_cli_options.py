"""Command options made from the library (cli.options): a config's field or an API function's
parameter gives the option its default and its help, written once in the library."""

from __future__ import annotations

import inspect

import pytest
import typer

from attnsep import api
from attnsep.cli import app
from attnsep.cli.options import parameter_docs, plain
from attnsep.configs import (
    OneStepConfig,
    SelectionFCNConfig,
    SelectionTrainConfig,
    V1Config,
    XorFCNConfig,
    XorTrainConfig,
)


def params(*path: str) -> dict[str, typer.core.click.Parameter]:
    command = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]
    return {p.name: p for p in command.params}


@pytest.mark.parametrize(
    ("path", "flag", "function", "name"),
    [
        (("frontier", "xor"), "--d", api.frontier_xor, "d_values"),
        (("frontier", "xor"), "--seeds", api.frontier_xor, "seeds"),
        (("frontier", "select"), "--solver", api.frontier_select, "solver"),
        (("frontier", "select"), "--T", api.frontier_select, "T_values"),
        (("select", "bound"), "--width", api.selection_bounds, "width"),
        (("select", "train"), "--eval-size", api.train_selector, "eval_size"),
        (("xor", "train"), "--figures", api.xor_train, "figures"),
        (("reproduce",), "--seed", api.reproduce, "seed"),
        (("reproduce",), "--executor", api.executor, "name"),
        (("reproduce",), "--calibration", api.reproduce_plan, "calibration"),
        (("sweep",), "--config", api.sweep, "config_file"),
        (("runs", "export"), "--format", api.export_runs, "format"),
        (("report",), "--workers", api.report, "workers"),
    ],
)
def test_an_option_reads_default_and_help_from_the_api(path, flag, function, name) -> None:
    (option,) = [p for p in params(*path).values() if flag in p.opts]
    default = inspect.signature(function).parameters[name].default
    listed = isinstance(default, tuple)  # a list option is comma-separated text
    if listed:
        default = ",".join(map(str, default))
    assert option.default == (None if default is inspect.Parameter.empty else default)
    doc = parameter_docs(function)[name]
    assert doc and option.help == plain(doc) + (" Comma-separated." if listed else "")


def test_parameter_docs_reads_each_description_whole() -> None:
    def f(a: int, b: str = "x") -> None:
        """One line.

        Parameters
        ----------
        a
            First line of a,
            second line of a.
        b
            About ``b`` ([`show`][attnsep.api.show]).

        Returns
        -------
        None
        """

    docs = parameter_docs(f)
    assert docs == {
        "a": "First line of a, second line of a.",
        "b": "About ``b`` ([`show`][attnsep.api.show]).",
    }
    assert plain(docs["b"]) == "About b (show)."
    assert plain("Workers (``None``: the CPUs).") == "Workers (not given: the CPUs)."


def test_every_api_parameter_an_option_reads_is_documented() -> None:
    """A parameter with no description would give an option an empty help: each command's
    generated options all have text."""
    for path in [("frontier", "xor"), ("frontier", "select"), ("select", "bound"), ("reproduce",)]:
        for param in params(*path).values():
            assert param.help, (path, param.name)
    # a list parameter without a default (Sequence[int] | None) is comma-separated text too
    assert params("reproduce")["seeds"].help.endswith("Comma-separated.")


@pytest.mark.parametrize(
    ("path", "param", "model", "field"),
    [
        (("xor", "one-step"), "eta_scale", OneStepConfig, "eta_scale"),
        (("xor", "one-step"), "success_tol", OneStepConfig, "success_tol"),
        (("xor", "one-step"), "m", OneStepConfig, "m"),
        (("xor", "train"), "eta_scale", XorTrainConfig, "eta_scale"),
        (("xor", "train"), "steps", XorTrainConfig, "steps"),
        (("xor", "train-v1"), "lr", V1Config, "lr"),
        (("select", "train"), "lr", SelectionTrainConfig, "lr"),
        (("select", "train"), "seeds", SelectionTrainConfig, "seeds"),
        (("fcn", "select"), "lr", SelectionFCNConfig, "lr"),
        (("fcn", "xor"), "steps", XorFCNConfig, "steps"),
    ],
)
def test_cli_options_read_default_and_help_from_the_config(path, param, model, field) -> None:
    option = params(*path)[param]
    info = model.model_fields[field]
    assert option.default == info.default
    assert info.description and option.help.startswith(info.description)


def test_a_literal_field_lists_its_choices_in_the_help() -> None:
    assert params("xor", "one-step")["init"].help.endswith(
        "Allowed: antisymmetric, independent, orthogonal."
    )


def test_a_list_option_reaches_the_command_as_a_list() -> None:
    """A comma-separated option is parsed where it is made, once: the command receives the list
    (its default too), and bad text is one error line naming the flag."""
    from attnsep.cli.options import options_of

    seen: dict[str, object] = {}

    @options_of(api.frontier_select, "T_values q_values", flags={"T_values": "--T"})
    def command(given: dict[str, object]) -> None:
        seen.update(given)

    command(T_values="8, 16", q_values="2")
    assert seen == {"T_values": [8, 16], "q_values": [2]}
    with pytest.raises(ValueError, match=r"^--T must be comma-separated integers, got '8,x'$"):
        command(T_values="8,x", q_values="2")
    defaults = inspect.signature(command).parameters
    assert defaults["q_values"].default.default == ",".join(
        map(str, inspect.signature(api.frontier_select).parameters["q_values"].default)
    )


def test_a_word_option_spells_the_configs_none() -> None:
    """A field marked ``configs.Word`` takes its word for ``None`` (its default, with the help
    saying what the word does) or a number of the field's type; bad text names the flag."""
    from attnsep.cli.options import options_of

    seen: dict[str, object] = {}

    @options_of(OneStepConfig, "eta samples support")
    def command(given: dict[str, object]) -> None:
        seen.update(given)

    options = inspect.signature(command).parameters
    assert options["eta"].default.default == "auto"
    assert options["eta"].default.help.startswith("Step size; auto: eta_scale")
    assert options["samples"].default.help.startswith("population: the exact")
    command(eta="auto", samples="population", support=None)
    assert seen == {"eta": None, "samples": None, "support": None}
    command(eta="0.5", samples="100", support="3,1")
    assert seen == {"eta": 0.5, "samples": 100, "support": [3, 1]}
    with pytest.raises(
        ValueError, match=r"^--samples must be 'population' or an integer, got '1.5'$"
    ):
        command(eta="auto", samples="1.5", support=None)
    with pytest.raises(ValueError, match=r"^--eta must be 'auto' or a number, got 'fast'$"):
        command(eta="fast", samples="population", support=None)


@pytest.mark.parametrize(
    ("path", "model", "left_out"),
    [
        (("xor", "one-step"), OneStepConfig, set()),
        (("xor", "train"), XorTrainConfig, set()),
        (("xor", "train-v1"), V1Config, set()),
        (("select", "train"), SelectionTrainConfig, {"fixed_positions"}),
        (("fcn", "xor"), XorFCNConfig, {"first_replica"}),
        (("fcn", "select"), SelectionFCNConfig, {"first_replica"}),
    ],
)
def test_a_training_command_takes_every_field_of_its_config(path, model, left_out) -> None:
    """One name per parameter end to end: each field is an option of the same name, but those
    the library sets itself (a fixed table's rows, a job's first replica)."""
    assert set(model.model_fields) - set(params(*path)) == left_out


def test_a_switch_on_by_default_can_be_turned_off() -> None:
    early_stop = params("fcn", "xor")["early_stop"]
    assert early_stop.opts == ["--early-stop"] and early_stop.secondary_opts == ["--no-early-stop"]
    assert early_stop.default is True
    assert params("xor", "train")["stop_at_success"].secondary_opts == []  # off by default


def test_a_literal_of_integers_is_parsed_as_an_integer() -> None:
    """``sign`` (``Literal[-1, 1]``) reaches the config as the integer the config checks."""
    import json

    from click.testing import CliRunner

    assert params("xor", "one-step")["sign"].default == -1
    argv = ["xor", "one-step", "--d", "8", "--m", "4", "--seeds", "1", "--sign", "1", "--json"]
    out = CliRunner().invoke(typer.main.get_command(app), argv)
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["sign"] == 1


def test_a_library_command_has_force_and_quiet_where_its_function_has_them() -> None:
    from attnsep.cli.library import COMMANDS

    for label, function, _, _ in COMMANDS:
        takes = inspect.signature(function).parameters
        flags = {flag for option in params(*label.split()).values() for flag in option.opts}
        assert ("--force" in flags) == ("force" in takes), label
        assert ("--quiet" in flags) == ("progress" in takes), label
        assert "--json" in flags, label
