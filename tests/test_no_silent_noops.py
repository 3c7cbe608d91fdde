"""No silent no-ops: a name or a file that does nothing is an error.

An unknown experiment name, wherever one is taken, lists the known ones (exit 2 on the command
line, ``ValueError`` from the API) instead of an empty answer; an empty config file is an
error, not a sweep of the preset alone; and the API says the same words as the command line
for the same mistake: one validation path, at the typed boundary.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from attnsep import api
from attnsep.configs import SelectionTrainConfig
from cli_support import attnsep

TINY = ["--set", "d_values=[16]", "--set", "m_values=[4]", "--set", "seeds=2"]
TINY += ["--set", 'series=["fixed"]', "--executor", "inline", "--quiet"]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with the one job of a tiny one-step sweep."""
    path = tmp_path_factory.mktemp("noops") / "runs.sqlite"
    code, _, err = attnsep("sweep", "one-step", *TINY, "--store", str(path))
    assert code == 0, err
    return path


def refused(code: int, err: str, *words: str) -> None:
    """Exit 2 with one ``error:`` line holding ``words``."""
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    for word in words:
        assert word in err, (word, err)


# ------------------------------------------------------------------------ unknown experiment names


@pytest.mark.parametrize(
    "args",
    [
        ["runs", "list", "--experiment", "nope"],
        ["runs", "export", "--format", "csv", "--experiment", "nope"],
        ["sweep", "nope"],
        ["sweep", "nope", "--plan", "--calibration", "0"],
        ["reproduce", "--only", "nope", "--plan"],
        ["reproduce", "--only", "one-step,nope", "--plan", "--calibration", "0"],
    ],
    ids=" ".join,
)
def test_an_unknown_experiment_name_lists_the_known_ones(args, store, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    if args[0] == "runs":
        args = [*args, "--store", str(store)]
    code, out, err = attnsep(*args)
    refused(code, err, "experiment must be one of", "one-step", "separation-xor", "'nope'")
    assert out == "" and list(tmp_path.iterdir()) == []  # no runs.csv, no store


@pytest.mark.parametrize(
    "call",
    [
        lambda store: api.runs(store, experiment="nope"),
        lambda store: api.load_runs(store, experiment="nope"),
        lambda store: api.export_runs("csv", experiment="nope", store=store),
        lambda store: api.run_experiment("nope", store=store, executor="inline"),
        lambda store: api.sweep("nope", store=store, executor="inline"),
        lambda store: api.sweep_plan("nope", store=store, executor="inline", calibration=0),
        lambda store: api.reproduce_plan("quick", ["nope"], store=store, calibration=0),
    ],
    ids=["runs", "load_runs", "export_runs", "run_experiment", "sweep", "sweep_plan", "plan"],
)
def test_the_api_refuses_an_unknown_experiment_name_alike(call, store, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=r"experiment must be one of .*one-step.*got 'nope'"):
        call(store)
    assert list(tmp_path.iterdir()) == []


def test_a_known_name_with_no_stored_jobs_is_an_empty_answer(store) -> None:
    """Registered but not run yet: nothing stored is a true answer, not a mistake."""
    assert api.runs(store, experiment="separation-select") == []
    assert len(api.runs(store, experiment="one-step")) == 1


def test_an_experiment_only_the_store_knows_is_found(store, tmp_path) -> None:
    """A job of an experiment registered in another process (a notebook) stays readable."""
    copy = tmp_path / "copy.sqlite"
    copy.write_bytes(store.read_bytes())
    db = sqlite3.connect(copy)
    db.execute("UPDATE jobs SET experiment = 'my-notebook-claim' WHERE id = 1")
    db.commit()
    db.close()
    assert [row["id"] for row in api.runs(copy, experiment="my-notebook-claim")] == [1]
    code, out, err = attnsep("runs", "list", "--store", str(copy), "--experiment", "nope")
    refused(code, err, "my-notebook-claim", "one-step")


# ------------------------------------------------------------------------ empty config files


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("empty.toml", ""),
        ("blank.toml", "# nothing set yet\n\n"),
        ("tables.toml", "[set]\n[grid]\n"),
        ("empty.yaml", ""),
        ("null.yaml", "null\n"),
        ("tables.yaml", "set: {}\ngrid: {}\n"),
    ],
)
def test_an_empty_config_file_is_an_error(name, text, tmp_path, monkeypatch) -> None:
    """A file that sets nothing is a mistake (the wrong file, or one not saved yet): an error,
    not a sweep of the preset alone, which needs no file (``sweep one-step`` runs it)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_text(text)
    for plan in ([], ["--plan", "--calibration", "0"]):
        code, _, err = attnsep("sweep", "one-step", "--config", name, *plan)
        refused(code, err, f"config file '{name}' is empty", "set or a grid table")
    with pytest.raises(ValueError, match=f"config file '{name}' is empty"):
        api.sweep("one-step", config_file=name, executor="inline")
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no store made


def test_a_config_table_that_is_not_a_table_is_named(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    for text in ("set = 5\n", "set = 'ab'\n", "grid = [1, 2]\n"):
        (tmp_path / "bad.toml").write_text(text)
        code, _, err = attnsep("sweep", "one-step", "--config", "bad.toml", "--plan")
        refused(code, err, "config file 'bad.toml':", "must be a table of keys")


# ------------------------------------------------------------------------ one validation path


def api_error(call) -> str:
    with pytest.raises((ValueError, TypeError)) as raised:
        call()
    return str(raised.value)


SAME = [
    (["select", "train", "--T", "5", "--q", "7"], lambda: api.train_selector(5, 7)),
    (["select", "train", "--seeds", "0"], lambda: api.train_selector(20, 3, seeds=0)),
    (["select", "bound", "--T", "5", "--q", "7"], lambda: api.selection_bounds(5, 7)),
    (
        ["xor", "one-step", "--d", "8", "--attention", "nope"],
        lambda: api.xor_one_step(8, attention="nope"),
    ),
    (["xor", "one-step", "--d", "8", "--seeds", "0"], lambda: api.xor_one_step(8, seeds=0)),
    (["xor", "one-step", "--d", "1"], lambda: api.xor_one_step(1)),
    (["xor", "one-step", "--d", str(10**30)], lambda: api.xor_one_step(10**30)),
    (["xor", "train", "--d", "8", "--seed", "-1"], lambda: api.xor_train(8, seed=-1)),
    (["xor", "train", "--d", "8", "--noise", "0.5"], lambda: api.xor_train(8, noise=0.5)),
    (["fcn", "xor", "--d", "8", "--seeds", "0"], lambda: api.train_fcn("xor", d=8, seeds=0)),
    (["fcn", "select", "--T", "2", "--q", "3"], lambda: api.train_fcn("select", T=2, q=3)),
    (["sweep", "nope"], lambda: api.sweep("nope")),
    (["sweep", "one-step", "--preset", "huge"], lambda: api.sweep("one-step", preset="huge")),
    (
        ["sweep", "one-step", "--set", "seeds=0", "--plan"],
        lambda: api.sweep_plan("one-step", fixed={"seeds": 0}),
    ),
    (["reproduce", "--only", "nope", "--plan"], lambda: api.reproduce_plan("quick", ["nope"])),
    (["reproduce", "--plan", "--seed", "-1"], lambda: api.reproduce_plan("quick", seed=-1)),
    (
        ["reproduce", "--plan", "--executor", "inline", "--workers", "2"],
        lambda: api.reproduce_plan("quick", executor=api.executor("inline", workers=2)),
    ),
]


@pytest.mark.parametrize(("args", "call"), SAME, ids=[" ".join(a) for a, _ in SAME])
def test_the_api_says_what_the_command_says(args, call, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = attnsep(*args)
    assert code == 2, err
    assert err == f"error: {api_error(call)}\n"


def test_seeds_are_named_seeds_wherever_they_are_given() -> None:
    """The command line's ``--seeds``, the API's ``seeds=`` and the configs' field are one
    name: an error names what the user wrote."""
    for call in (
        lambda: api.train_selector(8, 2, seeds=0),
        lambda: api.train_fcn("xor", seeds=0),
        lambda: api.train_fcn("select", seeds=-3),
        lambda: SelectionTrainConfig(seeds=0),
    ):
        assert api_error(call).startswith("seeds must be an integer >= 1, got ")
