"""Outputs go only into folders that exist: a file into a missing folder,
or an output folder two levels deep, is one error line naming the folder, exit 2, and nothing
is created. An output folder one level below an existing one is made; the tool's own defaults
(``results/attnsep.sqlite``, ``results/report``, ``results/runs.FORMAT``) may make ``results/``.
"""

from __future__ import annotations

import numpy as np
import pytest

from attnsep.core.io import atomic_write, save_npz, writable_folder, writable_target
from attnsep.engine.store import Store
from attnsep.experiments import plotting
from engine_support import attnsep, one_line

MISSING = "folder 'missing' does not exist; create it first"
SMALL_SELECT = ["--d", "2", "--T", "4", "--q", "1", "--pe-dim", "8", "--steps", "5"]


def listing(folder) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@pytest.fixture
def guarded(monkeypatch):
    """Nothing may be computed: a missing output folder is found before any work."""

    def guard(*args, **kwargs):
        raise AssertionError("computed although the output folder is missing")

    for target in (
        "attnsep.train.one_step.run_one_step",
        "attnsep.train.selection.train",
        "attnsep.train.xor_train.train_xor",
        "attnsep.engine.sweep.run_sweep",
    ):
        monkeypatch.setattr(target, guard)


PARQUET = ["--format", "parquet", "--output", "missing/p.parquet"]
ROWS = {
    "runs export --output": ["runs", "export", "--format", "csv", "--output", "missing/x.csv"],
    "runs export parquet": ["runs", "export", *PARQUET],
    "xor one-step --save": ["xor", "one-step", "--d", "8", "--save", "missing/x.npz"],
    "xor train --save": ["xor", "train", "--d", "8", "--steps", "2", "--save", "missing/x.npz"],
    "xor train --figures": ["xor", "train", "--d", "8", "--steps", "2", "--figures", "missing/f"],
    "select train --save": ["select", "train", *SMALL_SELECT, "--save", "missing/x.npz"],
    "report --out": ["report", "--out", "missing/r"],
    "reproduce --out": ["reproduce", "--only", "one-step", "--out", "missing/r", "--quiet"],
    "sweep --store": ["sweep", "one-step", "--store", "missing/s.sqlite", "--quiet"],
    "frontier xor --store": ["frontier", "xor", "--store", "missing/s.sqlite"],
    "frontier select --store": ["frontier", "select", "--store", "missing/s.sqlite"],
}


@pytest.mark.parametrize("row", ROWS)
def test_an_output_in_a_missing_folder_exits_2_and_creates_nothing(
    tmp_path, monkeypatch, guarded, row
):
    monkeypatch.chdir(tmp_path)
    Store(tmp_path / "ok.sqlite").close()  # the store the read commands read
    args = ROWS[row] + (["--store", "ok.sqlite"] if row.split()[0] in ("runs", "report") else [])
    before = listing(tmp_path)
    code, out, err = attnsep(*args)
    assert code == 2 and out == "", err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert MISSING in err, err
    assert listing(tmp_path) == before, sorted(listing(tmp_path) - before)


def test_the_tools_own_defaults_may_make_results(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Store(tmp_path / "ok.sqlite").close()
    code, _, err = attnsep("runs", "export", "--format", "csv", "--store", "ok.sqlite")
    assert code == 0, err
    assert (tmp_path / "results" / "runs.csv").is_file()
    Store().close()  # results/attnsep.sqlite
    assert (tmp_path / "results" / "attnsep.sqlite").is_file()


def test_an_output_folder_may_be_one_new_level_never_two(tmp_path):
    assert writable_folder(tmp_path / "new") == tmp_path / "new"  # made when written
    assert writable_folder(tmp_path) == tmp_path
    with pytest.raises(ValueError) as err:
        writable_folder(tmp_path / "a" / "b")
    message = str(err.value)
    assert one_line(message) and f"folder {str(tmp_path / 'a')!r} does not exist" in message
    assert str(tmp_path / "a" / "b") in message
    writable_folder(tmp_path / "a" / "b", default=True)  # the tool's own default: allowed
    assert listing(tmp_path) == set()  # checks create nothing


def test_a_file_goes_only_into_an_existing_folder(tmp_path):
    with pytest.raises(ValueError, match="does not exist; create it first"):
        writable_target(tmp_path / "new" / "x.npz", ".npz")
    with pytest.raises(ValueError, match="does not exist; create it first"):
        save_npz(tmp_path / "new" / "x.npz", a=np.zeros(2))
    with pytest.raises(ValueError, match="does not exist; create it first"):
        atomic_write(tmp_path / "new" / "x.txt", lambda handle: handle.write(b"x"))
    assert listing(tmp_path) == set()
    save_npz(tmp_path / "x.npz", a=np.zeros(2))
    assert listing(tmp_path) == {"x.npz"}  # no temporary file left beside it


def test_figures_go_into_a_new_folder_one_level_deep(tmp_path):
    with pytest.raises(ValueError, match="does not exist; create it first"):
        with plotting.figure(tmp_path / "a" / "b" / "x.png") as (_, (ax,)):
            ax.plot([0, 1])
    assert listing(tmp_path) == set()
    with plotting.figure(tmp_path / "figs" / "x.png") as (_, (ax,)):
        ax.plot([0, 1])
    assert listing(tmp_path) == {"figs", "figs/x.png"}
