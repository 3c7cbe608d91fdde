"""Every public result has one shape (``attnsep.results``): ``save(path)`` and ``attnsep.load``
give back an equal result of the same type, ``summary()`` is one flat dict of scalars naming
the device used, ``plot()`` is a ``matplotlib`` ``Figure`` with data, ``repr`` is one short
line; a file that is not a saved result is refused with one line, never unpickled; the files
``--save`` wrote before the format still load."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import torch
from matplotlib.figure import Figure

import attnsep
import attnsep.api as api
from attnsep.results import (
    ExperimentResult,
    FCNResult,
    FrontierResult,
    SelectorResult,
    SweepResult,
    XorStepResult,
    XorTrainResult,
)
from attnsep.train.one_step import REPLICA_FIELDS

TINY_STEP = {"d_values": [16], "seeds": 2, "m_values": [4], "series": ["fixed"]}
SCALARS = (int, float, str, bool, type(None))


def _build(kind: str, store: Path) -> Any:
    """A small result of each kind (the engine's share one store)."""
    if kind == "step":
        return attnsep.xor_one_step(d=16, m=4, seeds=4, keep_embeddings=True)
    if kind == "step-without-V":
        return attnsep.xor_one_step(d=16, m=4, seeds=3, device="cpu")
    if kind == "train":
        return attnsep.xor_train(d=8, m=4, seeds=3, steps=4, gradient="fixed", cube_fraction=0.5)
    if kind == "selector":
        return attnsep.train_selector(T=6, q=2, pe_dim=8, d=3, seeds=2, steps=20, batch=16)
    if kind == "selector-fixed":
        return attnsep.train_selector(
            T=6, q=2, pe_dim=8, d=3, seeds=2, steps=20, batch=16, pe="fixed",
            trainable="position", eval_lengths=[12],
        )  # fmt: skip
    if kind == "fcn-xor":
        return attnsep.train_fcn("xor", d=8, width=4, seeds=2, steps=60)
    if kind == "fcn-select":
        return attnsep.train_fcn("select", d=2, T=4, q=2, width=3, seeds=2, steps=20)
    if kind == "experiment":
        return attnsep.run_experiment("one-step", config=TINY_STEP, store=store)
    if kind == "sweep":
        fixed = {key: value for key, value in TINY_STEP.items() if key != "d_values"}
        return attnsep.sweep("one-step", {"d_values": [[16], [32]]}, fixed=fixed, store=store)
    if kind == "frontier-xor":
        return api.frontier_xor(d_values=(8, 16), seeds=2, store=store)
    if kind == "frontier-select":
        return api.frontier_select(T_values=(8, 16), d=4, seeds=2, store=store)
    raise AssertionError(kind)


TYPES = {
    "step": XorStepResult,
    "step-without-V": XorStepResult,
    "train": XorTrainResult,
    "selector": SelectorResult,
    "selector-fixed": SelectorResult,
    "fcn-xor": FCNResult,
    "fcn-select": FCNResult,
    "experiment": ExperimentResult,
    "sweep": SweepResult,
    "frontier-xor": FrontierResult,
    "frontier-select": FrontierResult,
}
KINDS = list(TYPES)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Any]:
    store = tmp_path_factory.mktemp("store") / "runs.sqlite"
    return {kind: _build(kind, store) for kind in KINDS}


def _same(a: Any, b: Any) -> None:
    """Equal as JSON text (``NaN`` equals ``NaN``; tuples and lists alike)."""
    assert json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def _arrays(result: Any) -> dict[str, np.ndarray]:
    """The arrays a result holds, by name."""
    if isinstance(result, XorStepResult):
        out = {name: getattr(result.raw, name) for name in REPLICA_FIELDS}
        if result.raw.embeddings is not None:
            out["V"] = result.raw.embeddings
        return out
    if isinstance(result, XorTrainResult):
        fields = ("theta_init", "theta", "weights", "loss", "population_loss", "mass")
        out = {name: getattr(result.raw, name) for name in fields}
        return {**out, "test_accuracy": result.raw.test_accuracy}
    if isinstance(result, SelectorResult):
        out = {"W": result.W, "losses": result.raw.losses.numpy()}
        if hasattr(result.raw.encodings, "table"):
            out["P"] = result.raw.encodings.table.numpy()
        for ev in result.evals:
            for name in ("loss", "stderr", "exact", "exact_stderr"):
                value = getattr(ev, name)
                out[f"{name}_{ev.length}"] = None if value is None else value.numpy()
        return out
    if isinstance(result, FCNResult):
        r = result.raw
        out = {f"w{i}": w.numpy() for i, w in enumerate(r.model.weights)}
        out.update({f"b{i}": b.numpy() for i, b in enumerate(r.model.biases)})
        names = ("support", "test_error", "test_loss", "steps_run", "loss", "stderr", "losses")
        return {**out, **{name: getattr(r, name).numpy() for name in names if hasattr(r, name)}}
    return {}


@pytest.mark.parametrize("kind", KINDS)
def test_save_and_load_give_back_the_same_result(kind: str, built, tmp_path: Path) -> None:
    result = built[kind]
    assert type(result) is TYPES[kind]
    path = result.save(tmp_path / "result.npz")
    assert path == tmp_path / "result.npz" and sorted(p.name for p in tmp_path.iterdir()) == [
        "result.npz"
    ]  # nothing else left beside it
    back = attnsep.load(path)
    assert type(back) is type(result)
    _same(back.summary(), result.summary())
    assert repr(back) == repr(result)
    pd.testing.assert_frame_equal(back.to_frame(), result.to_frame())
    if hasattr(result, "report"):
        _same(back.report(), result.report())
    expected = _arrays(result)
    found = _arrays(back)
    assert found.keys() == expected.keys()
    for name, value in expected.items():
        if value is None:
            assert found[name] is None, name
        else:
            assert found[name].dtype == value.dtype, name
            np.testing.assert_array_equal(found[name], value, err_msg=name)
    if isinstance(result, ExperimentResult | FrontierResult):
        ran = result if isinstance(result, ExperimentResult) else result.experiment
        again = back if isinstance(back, ExperimentResult) else back.experiment
        assert again.config == ran.config and again.records == ran.records
        assert again.rows == ran.rows and again.outcome == ran.outcome
    if isinstance(result, SweepResult):
        assert back.rows == result.rows and back.configs == result.configs
        assert back.job_hashes == result.job_hashes


@pytest.mark.parametrize("kind", KINDS)
def test_summary_is_flat_scalars_and_names_the_device_used(kind: str, built) -> None:
    summary = built[kind].summary()
    assert summary and all(isinstance(key, str) for key in summary)
    wrong = {key: value for key, value in summary.items() if not isinstance(value, SCALARS)}
    assert not wrong, f"not scalars: {wrong}"
    if "device" in summary:
        used = "cuda:0" if torch.cuda.is_available() else "cpu"
        assert summary["device"] in ("cpu", used), summary["device"]  # never "auto"


@pytest.mark.parametrize("kind", KINDS)
def test_plot_is_a_figure_with_data(kind: str, built) -> None:
    figure = built[kind].plot()
    assert isinstance(figure, Figure)
    assert any(ax.has_data() for ax in figure.axes)


@pytest.mark.parametrize("kind", KINDS)
def test_repr_is_one_short_line(kind: str, built) -> None:
    text = repr(built[kind])
    assert text.startswith(f"{TYPES[kind].__name__}(") and text.endswith(")")
    assert len(text) < 200 and "\n" not in text


def test_the_device_is_resolved_not_auto(built) -> None:
    step = built["step"]
    assert step.config.device == "auto" and step.summary()["device"] != "auto"
    assert step.report()["device"] == step.summary()["device"]


def test_save_writes_only_into_an_existing_folder(built, tmp_path: Path) -> None:
    step = built["step"]
    with pytest.raises(ValueError, match="folder .*missing' does not exist") as err:
        step.save(tmp_path / "missing" / "step.npz")
    assert "\n" not in str(err.value) and list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match=r"must end in \.npz"):
        step.save(tmp_path / "step.txt")
    (tmp_path / "afile").write_text("a file, not a folder")
    with pytest.raises(ValueError, match="afile"):
        step.save(tmp_path / "afile" / "step.npz")


def test_a_failed_save_leaves_the_old_file_and_no_temporary(built, tmp_path, monkeypatch) -> None:
    path = built["train"].save(tmp_path / "run.npz")
    before = path.read_bytes()

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", broken)
    with pytest.raises(OSError, match="disk full"):
        built["step"].save(path)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["run.npz"]


def _refused(path: Path, message: str) -> None:
    with pytest.raises(ValueError, match=message) as err:
        attnsep.load(path)
    assert "\n" not in str(err.value)


def test_load_refuses_what_is_not_a_saved_result(tmp_path: Path) -> None:
    _refused(tmp_path / "none.npz", "no file")
    random = tmp_path / "random.npz"
    random.write_bytes(np.random.default_rng(0).bytes(512))
    _refused(random, "not a saved attnsep result")
    pickled = tmp_path / "pickled.npz"
    pickled.write_bytes(pickle.dumps({"W": np.ones(3)}))
    _refused(pickled, "not a saved attnsep result")
    plain = tmp_path / "plain.npz"
    np.savez(plain, W=np.ones((2, 2)))
    _refused(plain, "not a saved attnsep result")
    npy = tmp_path / "array.npz"
    with npy.open("wb") as handle:
        np.save(handle, np.ones(3))
    _refused(npy, "not a saved attnsep result")


def _with_header(path: Path, header: dict, **arrays: Any) -> Path:
    text = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    np.savez(path, attnsep=text, **arrays)
    return path


def test_load_never_unpickles_and_checks_the_header(tmp_path: Path) -> None:
    objects = np.array([{"run": "code"}], dtype=object)  # np.savez pickles object arrays
    crafted = _with_header(tmp_path / "crafted.npz", {"type": "XorStepResult", "version": 1})
    np.savez(crafted, attnsep=np.load(crafted)["attnsep"], V=objects)
    _refused(crafted, "pickled")
    _refused(_with_header(tmp_path / "kind.npz", {"type": "Bogus", "version": 1}), "'Bogus'")
    newer = _with_header(tmp_path / "newer.npz", {"type": "XorStepResult", "version": 99})
    _refused(newer, "newer attnsep")
    _refused(_with_header(tmp_path / "none.npz", {"hello": 1}), "no type and version")
    damaged = _with_header(tmp_path / "damaged.npz", {"type": "XorStepResult", "version": 1})
    _refused(damaged, "damaged saved XorStepResult")
    bad = tmp_path / "bad.npz"
    np.savez(bad, attnsep=np.frombuffer(b"{not json", dtype=np.uint8))
    _refused(bad, "not JSON")


# --- the files ``--save`` wrote before this format -------------------------------------------


def test_an_older_one_step_file_loads(built, tmp_path: Path) -> None:
    step = built["step"]
    r = step.raw
    path = tmp_path / "old.npz"
    np.savez(
        path,
        V=r.embeddings,
        theta_before=r.theta_before,
        theta_after=r.theta_after,
        support=r.support.astype("int64"),
        eta=r.eta,
        loss_before=r.loss_before,
        loss_after=r.loss_after,
        certified_error=r.certified_error,
        config=json.dumps(r.config.model_dump()),
    )  # what OneStepResult.save wrote
    back = attnsep.load(path)
    assert isinstance(back, XorStepResult) and back.config == step.config
    assert back.raw.device == "unknown"
    for name, value in _arrays(step).items():
        np.testing.assert_allclose(_arrays(back)[name], value, rtol=1e-12, err_msg=name)
    assert back.summary()["success_rate"] == step.summary()["success_rate"]


def test_an_older_training_file_loads(built, tmp_path: Path) -> None:
    train = built["train"]
    r = train.raw
    names = ("support", "theta_init", "theta", "weights", "loss", "population_loss", "mass")
    arrays = {name: getattr(r, name) for name in names}
    scalars = {"eta": r.eta, "seconds": r.seconds, "diverged_at": r.diverged_at}
    path = tmp_path / "old.npz"
    np.savez(
        path,
        **arrays,
        certified_error=r.certified_error,
        test_accuracy=r.test_accuracy,
        config=np.array(json.dumps(r.config.model_dump())),
        scalars=np.array(json.dumps(scalars)),
    )  # what XorTrainResult.save wrote
    back = attnsep.load(path)
    assert isinstance(back, XorTrainResult)
    assert {k: v for k, v in back.report().items() if k != "device"} == {
        k: v for k, v in train.report().items() if k != "device"
    }


def test_an_older_selector_file_loads(built, tmp_path: Path) -> None:
    sel = built["selector-fixed"]
    c, rows = sel.config, sel.evals
    path = tmp_path / "old.npz"
    np.savez(
        path,
        W=sel.W,
        train_losses=sel.raw.losses.numpy(),
        seed=c.seed, d=c.d, T=c.T, q=c.q, pe_dim=c.pe_dim, pe=c.pe, pe_kind=c.pe_kind,
        eval_size=sel.eval_size,
        config=json.dumps(c.model_dump()),
        eval_lengths=[row.length for row in rows],
        eval_loss=torch.stack([row.loss for row in rows], dim=1).numpy(),
        eval_stderr=torch.stack([row.stderr for row in rows], dim=1).numpy(),
        eval_exact=torch.stack([row.exact for row in rows], dim=1).numpy(),
        P=sel.raw.encodings.table.numpy(),
    )  # fmt: skip  # what SelectorResult.save wrote
    back = attnsep.load(path)
    assert isinstance(back, SelectorResult)
    expected, found = _arrays(sel), _arrays(back)
    for name, value in expected.items():
        np.testing.assert_allclose(found[name], value, rtol=1e-12, err_msg=name)


def test_new_files_keep_the_entries_older_readers_used(built, tmp_path: Path) -> None:
    with np.load(built["selector"].save(tmp_path / "sel.npz")) as sel:
        assert {"W", "seed", "d", "T", "q", "pe_dim", "pe", "pe_kind", "eval_size"} <= set(sel)
        assert (
            str(sel["pe"]) == "stochastic" and int(sel["eval_size"]) == built["selector"].eval_size
        )
    with np.load(built["step"].save(tmp_path / "step.npz")) as step:
        assert float(step["eta"]) == built["step"].raw.eta and step["V"].shape == (4, 16, 4)


def test_import_attnsep_stays_light_with_load() -> None:
    code = (
        "import sys, attnsep; assert 'load' in attnsep.__all__ and 'load' in dir(attnsep); "
        "print(sorted(m for m in ('torch', 'numpy', 'matplotlib') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
