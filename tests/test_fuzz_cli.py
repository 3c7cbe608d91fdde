"""Every option of every command, fuzzed.

The commands and their options are read from the typer app itself (the top-level group loads
a command when ``Group.commands[name]`` is asked; sub-groups such as ``xor`` are walked), so a
new option is fuzzed without touching this file; a new command needs tiny valid sizes in
``BASELINE``, and ``test_every_command_has_a_baseline`` says so.

Per option, hypothesis gives a value of the wrong type, out of range, huge (past int64 and
within it), zero, negative, NaN / inf, empty, unicode, very long, or a path (an existing file
or folder, a missing one, one inside a missing folder, an unwritable one, one under /proc, a
name near the system's limit), puts it in place of the option in the command's baseline and
runs the command in this process, in a fresh working folder. The contract:

* exit code 0 or 2 (1 only for a run that failed at runtime: none does at these sizes);
* no traceback, and no exception but ``SystemExit``;
* on exit 2, exactly one ``error: ...`` line on stderr and nothing created or changed in the
  working folder;
* an answer within ``LIMIT`` seconds: a valid but huge size is refused by a resource guard,
  not computed (a resumable run that announced its length is let go: ``fuzz_support.NOTE``).

Budget (``make test``): the explicit examples (``CORE``, and ``PATHS`` for a path option) plus
``FUZZ_EXAMPLES`` drawn ones per option; ``ATTNSEP_FUZZ_EXAMPLES=2000`` draws more.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer
from hypothesis import example, given, settings
from hypothesis import strategies as st

import attnsep.cli
from fuzz_support import (
    FUZZ,
    FUZZ_EXAMPLES,
    HUGE,
    INTEGERS,
    LIMIT,
    NOTE,
    PATHS,
    ROOT,
    Slow,
    deadline,
    invoke,
    path_for,
    quick_figures,
    snapshot,
    stock,
    working_folder,
)

BASELINE: dict[str, list[str]] = {
    "reproduce": ["--only", "one-step", "--plan", "--calibration", "0"],
    "sweep": ["one-step", "--set", "d_values=[16]", "--set", "m_values=[4]", "--set", "seeds=2",
              "--set", 'series=["fixed"]', "--executor", "inline", "--quiet"],
    "report": [],
    "list": [],
    "show": ["one-step"],
    "xor one-step": ["--d", "8", "--m", "4", "--seeds", "2"],
    "xor train": ["--d", "4", "--m", "4", "--seeds", "2", "--steps", "2", "--quiet"],
    "xor train-v1": ["--n", "4", "--k", "2", "--seeds", "1", "--epochs", "2", "--quiet"],
    "select train": ["--d", "2", "--T", "4", "--q", "2", "--pe-dim", "4", "--steps", "2",
                     "--batch", "4", "--eval-size", "2", "--quiet"],
    "select bound": ["--T", "8", "--q", "2"],
    "frontier xor": ["--d", "2", "--seeds", "1"],
    "frontier select": ["--T", "4", "--q", "1", "--d", "1", "--seeds", "1"],
    "runs list": [],
    "runs show": ["1"],
    "runs export": ["--format", "csv", "--output", "out.csv"],
    "fcn xor": ["--d", "4", "--width", "2", "--seeds", "1", "--steps", "2", "--batch", "4",
                "--quiet"],
    "fcn select": ["--d", "1", "--T", "2", "--q", "1", "--width", "2", "--seeds", "1",
                   "--steps", "2", "--batch", "4", "--quiet"],
}  # fmt: skip
"""Tiny, valid sizes per command; the fuzzed option replaces its own entry. reproduce only
plans (it never computes); the working folder's store holds the jobs of sweep and of the
frontiers, so their baselines read them back instead of computing them."""
RESUMABLE = {"sweep", "reproduce", "frontier xor", "frontier select"}
"""Commands whose jobs are stored as they finish (a long run is announced, not refused)."""
PATHLIKE = ("store", "out", "output", "save", "config", "figures", "file")
"""A word of an option's name that makes it a path option."""
SUFFIX = {"--store": ".sqlite", "--save": ".npz", "--output": ".csv", "--config": ".toml"}
"""The file name a path option expects (a folder option: none)."""

CORE = [
    "abc", "1.5", "0", "-1", HUGE, str(2**62), "nan", "inf", "", "é🙂日本", "x" * 10_000,
    "9" * 5000,
]  # fmt: skip
"""Explicit examples of every option that takes a value."""
MORE = [
    "-7.25", "-" + HUGE, "1e30", "1e-320", "-inf", " ", "\u202e12", "\udcff", "1,2,,3", "[1, 2]",
    "{}", "true", "--help", "-", "=",
]  # fmt: skip
"""Drawn (with random text and numbers) rather than given to every option: negative, tiny,
bidirectional and undecodable text (a surrogate, as an undecodable argv byte arrives), lists,
JSON, option-like words."""
VALUES = CORE + PATHS + MORE
FLAG_VALUES = ("abc", "-1")
"""What a flag is given explicitly (an unexpected extra argument or option, whatever it is)."""
FIELDS = ["seeds", "d_values", "m_values", "series", "seed", "nope", "", "<none>"]
"""Keys of one more ``--set`` / ``--grid`` (``<none>``: the value alone, no ``=``)."""


@dataclass(frozen=True)
class Target:
    """One option (or argument) of one command."""

    command: str  # "xor one-step"
    flag: str | None  # "--d"; None for an argument
    name: str  # the parameter's name in the command function
    is_flag: bool
    multiple: bool

    @property
    def pathlike(self) -> bool:
        words = (self.flag or self.name).lstrip("-").replace("-", "_").split("_")
        return any(word in PATHLIKE for word in words)

    def __str__(self) -> str:
        return f"{self.command} {self.flag or '<' + self.name + '>'}"


def commands() -> Iterator[tuple[str, Any]]:
    """Every command of the app (sub-groups walked) as ``("xor one-step", command)``."""
    root = typer.main.get_command(attnsep.cli.app)

    def walk(group: Any, path: tuple[str, ...]) -> Iterator[tuple[str, Any]]:
        for name, command in group.commands.items():
            if hasattr(command, "commands"):
                yield from walk(command, (*path, name))
            else:
                yield " ".join((*path, name)), command

    yield from walk(root, ())


def targets() -> list[Target]:
    found = []
    for name, command in commands():
        for param in command.params:
            option = param.param_type_name == "option"
            flag = param.opts[0] if option else None
            found.append(
                Target(name, flag, param.name, bool(option and param.is_flag), param.multiple)
            )
    return found


TARGETS = targets()


def test_every_command_has_a_baseline() -> None:
    """A command without tiny valid sizes here would be fuzzed at its defaults, or not at all."""
    names = {name for name, _ in commands()}
    assert names == set(BASELINE), f"give BASELINE tiny valid sizes for {names ^ set(BASELINE)}"
    assert len(TARGETS) > 100  # every option of every command, not a handful


def test_the_walk_finds_the_options_of_sub_commands_and_arguments() -> None:
    flags = {t.flag for t in TARGETS if t.command == "xor one-step"}
    assert {"--d", "--m", "--seeds", "--attention", "--save", "--force", "--json"} <= flags
    assert any(t.flag is None and t.command == "runs show" for t in TARGETS)
    assert {str(t) for t in TARGETS if t.pathlike} >= {"runs export --output", "sweep --config"}


@pytest.fixture(scope="module")
def stocked_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A store with the baselines' jobs (sweep, both frontiers): job 1 for ``runs show``; the
    baselines read their jobs back instead of computing them. Figures are quick meanwhile."""
    commands = [[*name.split(), *BASELINE[name]] for name in ("sweep", *sorted(RESUMABLE)[:2])]
    with quick_figures():
        yield stock(tmp_path_factory.mktemp("stocked"), commands)


def argv_for(target: Target, value: str, field: str) -> list[str]:
    """The command's baseline with ``target`` set to ``value`` (a flag: given a value)."""
    words = target.command.split()
    base = list(BASELINE[target.command])
    if target.flag is None:  # an argument: in place of the baseline's first word, if any
        rest = base[1:] if base and not base[0].startswith("-") else base
        return [*words, value, *rest]
    if target.is_flag:  # a flag takes no value: the value is an unexpected extra argument
        return [*words, *base, target.flag, value]
    if target.multiple:  # --set / --grid: one more assignment
        return [*words, *base, target.flag, value if field == "<none>" else f"{field}={value}"]
    if target.flag in base:
        at = base.index(target.flag)
        base = base[:at] + base[at + 2 :]
    return [*words, *base, target.flag, value]


def check(target: Target, value: str, field: str, store: Path, paths: bool = False) -> None:
    """Run the command with ``target`` fuzzed in a fresh working folder (with the fixtures of
    the ``PATHS`` when ``paths`` or when ``value`` is one); the contract holds."""
    with working_folder(store, paths=paths or value in PATHS) as folder:
        argv = argv_for(target, path_for(value, SUFFIX.get(target.flag or "", "")), field)
        before, start, stderr = snapshot(folder), time.perf_counter(), io.StringIO()

        def announced() -> bool:  # a resumable run said it will be long: no need to wait
            return target.command in RESUMABLE and NOTE in stderr.getvalue()

        try:
            with deadline(LIMIT, announced):
                code, out, err = invoke(argv, stderr)
        except Slow as slow:
            said = f"attnsep {argv!r} took more than {LIMIT} s; stderr: {slow.stderr!r}"
            assert target.command in RESUMABLE and NOTE in slow.stderr, said
            return
        seconds = time.perf_counter() - start
        said = f"attnsep {argv!r} -> exit {code} in {seconds:.1f} s\nstderr: {err[-2000:]!r}"
        assert code in (0, 2), said
        assert "Traceback" not in err and "Traceback" not in out, said
        if code == 2:
            assert err.startswith("error: ") and err.count("\n") == 1, said
            assert snapshot(folder) == before, said + "\n(exit 2 changed the working folder)"
        elif "--json" in argv and target.flag != "--json":
            json.loads(out)  # one JSON object


def fuzzed(test: Any) -> Any:
    """``test(target, value, field)`` with the explicit examples (``CORE``, ``PATHS``, one per
    key of ``--set``) besides the drawn ones."""
    for value in CORE + PATHS:
        test = example(value=value, field="seeds")(test)
    for field in FIELDS:
        test = example(value="3", field=field)(test)
    return test


def pointless(target: Target, value: str, field: str) -> bool:
    """Whether an example only repeats another for ``target``: a path where no path is taken
    (it is just a word there), most values for a flag, a key where no ``--set`` is."""
    if value in PATHS and not target.pathlike:
        return True
    if target.is_flag and value in VALUES and value not in FLAG_VALUES:
        return True
    return not target.multiple and field != "seeds"


def values() -> st.SearchStrategy[str]:
    text = st.text(st.characters(exclude_characters="\x00", exclude_categories=["Cs"]))
    numbers = st.one_of(INTEGERS.map(str), st.floats().map(repr), st.floats(-1.5, 1.5).map(repr))
    return st.one_of(st.sampled_from(VALUES), numbers, text, text.map(lambda t: t * 500))


@pytest.mark.parametrize("target", TARGETS, ids=str)
@FUZZ
@fuzzed
@given(value=values(), field=st.sampled_from(FIELDS))
def test_an_option_given_anything_exits_0_or_2_with_one_line(
    target: Target, value: str, field: str, stocked_store: Path
) -> None:
    if not pointless(target, value, field):
        with quick_figures():
            check(target, value, field, stocked_store)


CONFIG_FILES = [
    ("", ".toml"), ("set = {}\ngrid = {}\n", ".toml"), ("[set]\n", ".toml"),
    ("set = 5\n", ".toml"), ("set = 'ab'\n", ".toml"), ("grid = {seeds = 3}\n", ".toml"),
    ("grid = {seeds = []}\n", ".toml"), ("[grid]\nseeds = [1, 2]\n", ".toml"),
    ("seeds = 2\n", ".toml"), ("seeds = nan\n", ".toml"), ("seeds = inf\n", ".toml"),
    (f"d_values = [16, {HUGE}]\n", ".toml"), ("nope = 1\n", ".toml"),
    ("[set]\nseeds = 2\n[grid]\nseeds = [1, 2]\n", ".toml"), ("\ufeffseeds = 2\n", ".toml"),
    ("seeds = ", ".toml"), ("\x00\udcff", ".toml"), ("", ".yaml"), ("null\n", ".yaml"),
    ("- 1\n- 2\n", ".yaml"), ("set: 5\n", ".yaml"), (": :\n", ".yaml"), ("seeds: 2\n", ".yaml"),
    ("seeds: !!python/object/apply:os.getcwd []\n", ".yaml"), ("grid:\n  seeds: 3\n", ".yaml"),
    ("seeds = 2\n", ".json"), ("seeds = 2\n", ""),
]  # fmt: skip
"""Config files for ``sweep --config``: empty, empty tables, wrong types, NaN, past int64,
unknown and repeated keys, broken syntax, a byte-order mark, bytes that are not UTF-8 (the
surrogate is written as the byte 0xff), YAML that would run code, other suffixes."""


def config_examples(test: Any) -> Any:
    for text, ending in CONFIG_FILES:
        test = example(content=text, suffix=ending)(test)
    return test


@settings(FUZZ, max_examples=FUZZ_EXAMPLES * 5)
@config_examples
@given(
    content=st.one_of(st.sampled_from([c for c, _ in CONFIG_FILES]), st.text(max_size=200)),
    suffix=st.sampled_from([".toml", ".yaml", ".yml"]),
)
def test_a_config_file_of_any_content_is_read_or_refused_in_one_line(
    content: str, suffix: str, stocked_store: Path
) -> None:
    with working_folder(stocked_store) as folder:
        name = f"sweep{suffix}"
        Path(name).write_bytes(content.encode("utf-8", errors="surrogateescape"))
        argv = ["sweep", "one-step", "--config", name, "--plan", "--calibration", "0"]
        before = snapshot(folder)
        with deadline(LIMIT):
            code, _, err = invoke(argv)
        said = f"{content!r} in {name}: exit {code}, stderr {err!r}"
        assert code in (0, 2) and "Traceback" not in err, said
        if code == 2:
            assert err.startswith("error: ") and err.count("\n") == 1, said
            assert any(word in err for word in (name, "one-step", "grid", "set")), said
            assert snapshot(folder) == before, said


@pytest.mark.skipif(ROOT, reason="root writes into a chmod 0o500 folder: /proc stands in above")
@pytest.mark.parametrize("target", [t for t in TARGETS if t.pathlike and t.flag in SUFFIX], ids=str)
def test_a_read_only_folder_is_refused_for_every_file_option(target, stocked_store) -> None:
    """The chmod'ed folder itself (as ``<unwritable>`` is for root: a path under /proc)."""
    check(target, f"locked/new{SUFFIX[target.flag or '']}", "seeds", stocked_store, paths=True)
