"""What fuzzing every option and parameter found (``test_fuzz_cli``, ``test_fuzz_api``), one
regression test each: the input, and the one line it now gets instead of a traceback, an
error from deep in a run, a run that never ends, or a file left half-made."""

from __future__ import annotations

from pathlib import Path

import pytest

from attnsep import api
from attnsep.configs import OneStepConfig, SelectionTrainConfig, XorFCNConfig
from attnsep.core.validate import shown
from attnsep.train.memory import fcn_peak, selection_evaluation_peak, selection_peak
from cli_support import attnsep

HUGE = str(10**30)
BIG = str(2**62)  # within int64: passes the int64 check, must meet a resource guard
TINY_XOR = ["--d", "4", "--m", "4", "--seeds", "2", "--steps", "2", "--quiet"]
TINY_SELECT = ["--d", "2", "--T", "4", "--q", "2", "--pe-dim", "4", "--steps", "2"]
TINY_SELECT += ["--batch", "4", "--eval-size", "2", "--quiet"]


TINY_SWEEP = ["sweep", "one-step", "--set", "d_values=[16]", "--set", "m_values=[4]"]
TINY_SWEEP += ["--set", "seeds=2", "--set", 'series=["fixed"]', "--executor", "inline", "--quiet"]


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def store(tmp_path) -> Path:
    """The default store (results/attnsep.sqlite) with one tiny job."""
    code, _, err = attnsep(*TINY_SWEEP)
    assert code == 0, err
    return tmp_path / "results" / "attnsep.sqlite"


def refused(args: list[str], *words: str) -> str:
    """``attnsep ARGS`` exits 2 with one ``error:`` line holding ``words``; nothing is made."""
    before = sorted(Path().rglob("*"))
    code, _, err = attnsep(*args)
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    for word in words:
        assert word in err, (word, err)
    assert sorted(Path().rglob("*")) == before, "exit 2 left something behind"
    return err


def api_refused(call, *words: str, kind: type[Exception] = ValueError) -> str:
    with pytest.raises(kind) as raised:
        call()
    line = str(raised.value)
    assert "\n" not in line
    for word in words:
        assert word in line, (word, line)
    return line


# ------------------------------------------------------------------------ integers past int64


@pytest.mark.parametrize(
    "args",
    [
        ["fcn", "xor", "--d", "4", "--steps", HUGE],  # was OverflowError in torch.full
        ["xor", "train", *TINY_XOR, "--m", HUGE],  # was TypeError from torch.empty
        ["select", "train", *TINY_SELECT, "--eval-size", HUGE],  # was RuntimeError from torch
        ["frontier", "xor", "--d", "2", "--seeds", "1", "--seed", HUGE],  # was SQLite overflow
        ["sweep", "one-step", "--set", f"seeds={HUGE}", "--plan"],
    ],
    ids=lambda args: " ".join(args[:2] + args[-2:-1]),
)
def test_an_integer_past_int64_is_one_line(args) -> None:
    refused(args, HUGE)


def test_runs_show_of_a_huge_id_is_one_line() -> None:
    """Was an OverflowError from SQLite, with a traceback."""
    refused(["runs", "show", HUGE], "job id must be an integer in [1, 2**63)")


def test_the_int64_check_reads_lists_and_floats_read_as_integers() -> None:
    with pytest.raises(ValueError, match=r"^seeds must be below 2\*\*63, got 1000"):
        OneStepConfig(d=8, seeds=10**30)
    with pytest.raises(ValueError, match=r"support must be below 2\*\*63"):
        OneStepConfig(d=8, support=[1, 10**40])
    refused(["sweep", "one-step", "--set", "seeds=1e30", "--plan"], "seeds", "1e+30")


def test_an_integer_python_cannot_print_is_shown_by_its_size() -> None:
    """``repr`` refuses integers past 4300 digits: a message naming one failed to be written."""
    assert shown(10**5000) == "an integer of about 2**16609"
    api_refused(lambda: api.run_experiment(10**5000), "got an integer of about 2**16609")
    api_refused(lambda: OneStepConfig(d=10**5000), "about 2**16609")


# ------------------------------------------------------------------------ sizes within int64


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["xor", "train", *TINY_XOR, "--m", BIG], ("xor training at", "memory")),  # RuntimeError
        (["xor", "train", *TINY_XOR, "--steps", BIG], ("xor training at", "memory")),  # forever
        (["xor", "train-v1", "--n", "4", "--k", "2", "--seeds", BIG], ("v1 training", "memory")),
        (["xor", "train-v1", "--n", "4", "--k", "2", "--epochs", BIG], ("v1 training", "memory")),
        (["select", "train", *TINY_SELECT, "--steps", BIG], ("selector training",)),
        (["select", "train", *TINY_SELECT, "--eval-lengths", BIG], ("selector training",)),
        (["select", "train", *TINY_SELECT, "--steps", "1000000000"], ("priced at",)),
        (["fcn", "xor", "--d", "4", "--width", "2", "--steps", BIG], ("priced at", "--force")),
        (["xor", "one-step", "--d", "8", "--m", "4", "--samples", BIG], ("priced at",)),
        (["frontier", "xor", "--d", BIG, "--seeds", "1"], ("frontier xor at d=",)),
        (["frontier", "xor", "--d", "2", "--seeds", BIG], ("frontier xor at d=2",)),
        (["frontier", "select", "--T", BIG, "--q", "1", "--d", "1"], ("frontier select at T=",)),
        (["frontier", "select", "--T", "4", "--q", "1", "--seeds", BIG], ("frontier select",)),
    ],
    ids=lambda value: " ".join(value[:2] + value[-2:-1]) if isinstance(value, list) else "",
)
def test_a_huge_valid_size_meets_a_resource_guard_at_once(args, words) -> None:
    """Each ran for hours, failed deep in torch, or failed a stored job (exit 2 with the
    store changed); now each is refused before anything is allocated or stored."""
    refused(args, *words)


def test_the_guards_count_what_grows_with_each_knob() -> None:
    config = SelectionTrainConfig()
    assert selection_peak(config.replace(steps=10**6)) > selection_peak(config)
    huge = selection_evaluation_peak(config, [20, 40], 10**4)
    assert huge > selection_evaluation_peak(config, [20, 40], 128)
    assert fcn_peak(XorFCNConfig(samples=10**6)) > fcn_peak(XorFCNConfig())
    api_refused(lambda: api.train_fcn("xor", d=4, samples=2**62), "FCN training", "memory")


# ------------------------------------------------------------------------ paths


@pytest.mark.parametrize(
    "args",
    [
        ["reproduce", "--only", "one-step", "--plan", "--calibration", "0", "--store"],
        ["xor", "train", *TINY_XOR, "--figures"],
        ["runs", "list", "--store"],
    ],
    ids=lambda args: " ".join(args[:2]),
)
def test_a_path_too_long_for_the_system_is_one_line(args) -> None:
    """Was an OSError (File name too long) with a traceback, from every path option."""
    err = refused([*args, "x" * 300], "cannot be used: File name too long", "(302 chars)")
    assert len(err) < 200  # the name is cut in the message


def test_a_config_path_too_long_is_one_line() -> None:
    refused(["sweep", "one-step", "--config", "x" * 5000], "config file", "File name too long")


def test_a_store_name_that_leaves_sqlite_no_room_is_refused_before_any_file() -> None:
    """250 characters fit the system, not SQLite's ``-journal`` beside them: the store was
    made empty, then the open failed (exit 2 with a file left behind)."""
    name = "n" * 243 + ".sqlite"
    refused(["frontier", "xor", "--d", "2", "--seeds", "1", "--store", name], "is too long")


def test_a_long_output_name_is_written(tmp_path) -> None:
    """The temporary file beside it took the whole name, past the system's 255 bytes."""
    name = "n" * 246 + ".npz"
    code, _, err = attnsep("xor", "one-step", "--d", "8", "--m", "4", "--save", name)
    assert code == 0, err
    assert (tmp_path / name).is_file()


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: api.xor_one_step(8, m=4, seeds=2, save=0), "path"),
        (lambda: api.xor_train(4, m=4, seeds=2, steps=2, figures=[]), "path"),
        (lambda: api.runs(store=None), "store"),
        (lambda: api.export_runs("csv", output=b"out.csv"), "path"),
        (lambda: api.report(out=1.5), "out"),
        (lambda: api.sweep("one-step", config_file=7), "config file"),
    ],
)
def test_a_path_of_the_wrong_type_is_named(call, name, store) -> None:
    """Was pathlib's ``expected str, bytes or os.PathLike object, not int``: no name."""
    api_refused(call, f"{name} must be a path (str or os.PathLike), got", kind=TypeError)


def test_a_null_byte_in_a_path_is_one_line(store) -> None:
    """Was ``embedded null byte`` from mkdir or SQLite (no path named)."""
    api_refused(lambda: api.runs(store="a\x00b"), "store 'a\\x00b' cannot be used")
    api_refused(lambda: api.report(out="r\x00"), "out 'r\\x00' cannot be used")


def test_export_to_an_empty_name_is_an_error_not_the_default(tmp_path, store) -> None:
    """``output=""`` (or 0) fell back to results/runs.csv."""
    api_refused(lambda: api.export_runs("csv", output=""), "must end in .csv, got ''")
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == ["attnsep.sqlite"]


# ------------------------------------------------------------------------ config files


def test_a_config_file_that_is_not_utf8_is_named(tmp_path) -> None:
    """Was ``'utf-8' codec can't decode byte 0xff``: no file named."""
    (tmp_path / "bad.toml").write_bytes(b"seeds = 2\n\xff\n")
    refused(["sweep", "one-step", "--config", "bad.toml", "--plan"], "'bad.toml' is not UTF-8")


# ------------------------------------------------------------------------ API values of wrong types


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: api.xor_train(4, m=4, steps=2, progress=5), "progress must be a function"),
        (lambda: api.xor_train_v1(4, 2, 1, epochs=2, progress=""), "progress must be a function"),
        (lambda: api.train_selector(4, 2, 4, progress=[]), "progress must be a function"),
        (lambda: api.train_fcn("xor", progress=1), "progress must be a function"),
        (lambda: api.sweep("one-step", on_start=0), "on_start must be a function"),
        (lambda: api.train_selector(4, 2, 4, eval_lengths=8), "eval length must be a list"),
        (lambda: api.frontier_xor(16), "d must be a list of integers >= 2"),
        (lambda: api.run_experiment("one-step", config=-1), "config must be a dict"),
        (lambda: api.sweep("one-step", fixed=5), "fixed must be a dict or a list"),
        (lambda: api.sweep_plan("one-step", grid=[1, 2]), "grid must be a dict or a list"),
        (lambda: api.reproduce_plan("quick", names="one-step"), "names must be a list"),
    ],
)
def test_a_value_of_the_wrong_type_is_named(call, words) -> None:
    """Each was Python's own TypeError or AttributeError from deep in the call (``'int'
    object is not callable`` after the store was opened, ``has no attribute 'partition'``)."""
    api_refused(call, words, kind=TypeError)


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: api.reproduce_plan("quick", seed=""), "seed must be an integer >= 0, got ''"),
        (lambda: api.sweep_plan("one-step", calibration=None), "calibration must be a finite"),
        (lambda: api.sweep_plan("one-step", calibration=10**400), "calibration must be a finite"),
        (lambda: api.run_experiment(["one-step"]), "experiment must be one of"),
        (lambda: api.runs(experiment=["one-step"]), "experiment must be one of"),
        (lambda: api.sweep("one-step", fixed=""), "fixed must be a dict or a list"),
    ],
)
def test_a_value_that_broke_a_check_is_refused_by_it(call, words, store) -> None:
    """``seed >= 0`` on a text, ``math.isfinite`` on None or a huge integer, a list looked
    up in a set: each raised from the check itself; ``fixed=""`` was taken as no fields."""
    api_refused(call, words, kind=(ValueError, TypeError))


# ------------------------------------------------------------------------ words of the messages


def test_a_long_value_is_cut_in_the_message() -> None:
    line = api_refused(lambda: api.xor_one_step(8, attention="x" * 10_000), "(10002 chars)")
    assert len(line) < 600


def test_a_list_field_says_it_takes_a_list() -> None:
    """``--set series=[fixed]`` said ``series must be a finite number``."""
    refused(
        ["sweep", "one-step", "--set", "series=[fixed]", "--plan"],
        "series must be a non-empty list, each one of fixed, schedule",
    )
    refused(
        ["sweep", "one-step", "--set", "d_values=[1]", "--plan"],
        "d_values must be a non-empty list, each an integer >= 2",
    )


def test_a_guard_offers_force_only_where_there_is_one() -> None:
    """``frontier`` has no ``--force``; ``xor train`` and ``fcn xor`` have, with the API's
    ``force=True``."""
    err = refused(["frontier", "xor", "--d", "2", "--seeds", BIG], "lower seeds or d")
    assert "force" not in err
    refused(["xor", "train", *TINY_XOR, "--m", BIG], "pass --force (force=True)")
    refused(["fcn", "xor", "--d", "4", "--width", "2", "--steps", BIG], "pass --force (force=True)")


def test_a_sweep_job_that_cannot_fit_is_refused_not_failed() -> None:
    """Drawn at 30 examples per option: ``--set m_values=2**53+1`` ran the job, which failed in
    the allocator (exit 1, a failed row stored); the sweep now refuses it before a store."""
    refused(
        ["sweep", "one-step", "--set", "d_values=[16]", "--set", "m_values=9007199254740993",
         "--set", "seeds=2", "--set", 'series=["fixed"]', "--executor", "inline"],
        "a one-step job needs about", "lower the sizes set",
    )  # fmt: skip
