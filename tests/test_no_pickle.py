"""No code runs from a user's file: ``.npz`` files load without pickle,
config files through safe parsers, and no loader in ``src/`` can unpickle."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import attnsep
from attnsep import load as load_result
from attnsep.core.io import load_npz
from engine_support import attnsep as run_cli
from engine_support import one_line


class Payload:
    """Unpickled, it opens (creates) ``marker``: the code a crafted file would run."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def crafted(folder: Path, marker: Path) -> Path:
    """An ``.npz`` that looks like a saved training result but holds a pickled object."""
    path = folder / "result.npz"
    payload = np.empty(1, dtype=object)
    payload[0] = Payload(marker)
    np.savez(path, config=np.array("{}"), scalars=np.array("{}"), loss=payload)
    return path


def test_the_crafted_file_would_run_code_if_unpickled(tmp_path):
    """The payload is live: numpy's pickle path runs it (so the tests below mean something)."""
    marker = tmp_path / "ran"
    with np.load(crafted(tmp_path, marker), allow_pickle=True) as saved:
        saved["loss"]
    assert marker.exists()


@pytest.mark.parametrize("load", [load_npz, lambda p: load_result(str(p))], ids=["npz", "result"])
def test_a_pickled_npz_is_refused_and_never_unpickled(tmp_path, load):
    marker = tmp_path / "ran"
    path = crafted(tmp_path, marker)
    with pytest.raises(ValueError) as err:
        load(path)
    message = str(err.value)
    assert one_line(message) and str(path) in message and "pickle" in message, message
    assert not marker.exists()


@pytest.mark.parametrize(
    "content",
    [b"not an npz at all\n", np.lib.format.magic(1, 0) + b"junk", b"PK\x03\x04broken zip"],
    ids=["text", "npy", "broken zip"],
)
def test_a_file_that_is_not_an_npz_is_one_line(tmp_path, content):
    path = tmp_path / "x.npz"
    path.write_bytes(content)
    with pytest.raises(ValueError) as err:
        load_npz(path)
    assert one_line(str(err.value)) and str(path) in str(err.value)
    with pytest.raises(ValueError, match="no file"):
        load_npz(tmp_path / "missing.npz")


def test_plain_arrays_still_load(tmp_path):
    path = tmp_path / "x.npz"
    np.savez(path, a=np.arange(3), s=np.array("text"))
    back = load_npz(path)
    assert back["a"].tolist() == [0, 1, 2] and str(back["s"]) == "text"


def test_a_yaml_config_cannot_run_code(tmp_path, monkeypatch):
    marker = tmp_path / "ran"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evil.yaml").write_text(
        f"set:\n  seeds: !!python/object/apply:builtins.open ['{marker}', 'w']\n"
    )
    code, out, err = run_cli("sweep", "one-step", "--config", "evil.yaml", "--plan")
    assert code == 2 and out == "" and err.count("\n") == 1 and "evil.yaml" in err, err
    assert not marker.exists()


def test_no_loader_in_the_package_can_unpickle():
    """Every ``np.load`` passes ``allow_pickle=False``, every ``torch.load`` ``weights_only=
    True``; no pickle, joblib, ``read_pickle`` or unsafe YAML anywhere in ``src/``."""
    found = []
    for path in Path(attnsep.__file__).parent.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for call in re.findall(r"np\.load\([^)]*\)", text):
            if "allow_pickle=False" not in call:
                found.append(f"{path.name}: {call}")
        for call in re.findall(r"torch\.load\([^)]*\)", text):
            if "weights_only=True" not in call:
                found.append(f"{path.name}: {call}")
        for name in ("import pickle", "import joblib", "read_pickle", "yaml.load(", "cloudpickle"):
            if name in text:
                found.append(f"{path.name}: {name}")
    assert found == []
