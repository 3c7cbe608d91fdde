"""End-to-end ``attnsep select ...`` (SPEC B3-B5): output contract, saved state, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from attnsep.positional_encodings import StochasticPE
from attnsep.tasks.selection import TokenSelection
from cli_support import attnsep

SMALL = [
    "select",
    "train",
    "--d",
    "3",
    "--T",
    "6",
    "--q",
    "2",
    "--pe-dim",
    "16",
    "--steps",
    "40",
    "--batch",
    "64",
    "--eval-lengths",
    "6,12,24",
    "--eval-size",
    "32",
]


def test_bound_is_exactly_17_over_1140() -> None:
    code, out, _ = attnsep("select", "bound", "--T", "20", "--q", "3", "--json")
    report = json.loads(out)
    assert code == 0 and report["fcn_loss_floor_fraction"] == "17/1140"
    assert report["fcn_loss_floor"] == 17 / 1140 and report["per_coordinate"] is True
    assert report["uniform_attention_loss_fraction"] == "17/60"
    assert report["zero_predictor_loss_fraction"] == "1/3"
    code, out, _ = attnsep(
        "select", "bound", "--T", "20", "--q", "3", "--d", "10", "--width", "150", "--json"
    )
    report = json.loads(out)
    assert (
        report["fcn_loss_floor_fraction"] == "85/114" and report["uniform_attention_loss"] == 17 / 6
    )
    code, out, _ = attnsep("select", "bound", "--T", "20", "--q", "3")
    assert code == 0 and "17/1140" in out and "per coordinate" in out


def naive_eval_losses(saved: dict, length: int) -> np.ndarray:
    """Per-replica eval loss at ``length``, recomputed from the saved W with plain loops."""
    d, m_p, seed, size = (
        int(saved["d"]),
        int(saved["pe_dim"]),
        int(saved["seed"]),
        int(saved["eval_size"]),
    )
    W = saved["W"]
    E = W.shape[0]
    data = TokenSelection(d, int(saved["T"]), int(saved["q"])).sample(
        seed, E, size, ("eval", length), length=length
    )
    if str(saved["pe"]) == "fixed":
        P = np.broadcast_to(saved["P"][:, None, :length], (E, size, length, m_p))
    else:
        P = (
            StochasticPE(seed, E, m_p, str(saved["pe_kind"]))
            .draw(("eval", length), size, length)
            .numpy()
        )
    X, y = data.X.numpy(), data.y.numpy()
    losses = np.zeros(E)
    for e in range(E):
        for b in range(size):
            z_q = np.concatenate([np.zeros(d), P[e, b, y[e, b]].sum(axis=0)])
            z = np.concatenate([X[e, b], P[e, b]], axis=1)
            a = z @ W[e] @ z_q
            s = np.exp(a - a.max()) / np.exp(a - a.max()).sum()
            losses[e] += ((s @ X[e, b] - X[e, b, y[e, b]].mean(axis=0)) ** 2).sum() / size
    return losses


@pytest.mark.parametrize("pe", ["stochastic", "fixed"])
def test_train_json_and_save_round_trip(pe: str, tmp_path: Path) -> None:
    target = tmp_path / "run.npz"
    code, out, err = attnsep(*SMALL, "--pe", pe, "--seeds", "2", "--json", "--save", str(target))
    assert code == 0, err
    report = json.loads(out)
    assert {"train_loss", "cos_to_ground_truth", "steps", "eval"} <= report.keys()
    assert report["steps"] == 40 and len(report["cos_to_ground_truth"]["values"]) == 2
    assert [row["T"] for row in report["eval"]] == [6, 12, 24]
    saved = dict(np.load(target))
    assert saved["W"].shape == (2, 19, 19)
    assert ("P" in saved) == (pe == "fixed")
    if pe == "fixed":
        assert saved["P"].shape == (2, 24, 16)  # positions up to the longest eval length
    for row in report["eval"]:
        assert {"T", "loss", "loss_per_coord", "stderr"} <= row.keys()
        recomputed = naive_eval_losses(saved, row["T"])
        np.testing.assert_allclose(row["per_replica"]["loss"], recomputed, rtol=1e-10)
        assert row["loss"] == pytest.approx(recomputed.mean(), rel=1e-10)
        assert row["loss_per_coord"] == pytest.approx(row["loss"] / 3)


def test_train_table_and_exact_column_with_position_training() -> None:
    code, out, err = attnsep(*SMALL, "--trainable", "position")
    assert code == 0, err
    assert "length generalization" in out and "applies" in out
    code, out, _ = attnsep(*SMALL, "--trainable", "position", "--json")
    assert all(row["exact_loss"] is not None for row in json.loads(out)["eval"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--q", "7"], "q must be <= T"),
        (["--d", "0"], "d must be an integer >= 1"),
        (["--pe", "learned"], "pe must be one of stochastic, fixed"),
        (["--eval-lengths", "6,x"], "--eval-lengths must be comma-separated integers"),
        (["--eval-lengths", "1,6"], "eval length must be an integer >= 2, got 1"),
        (["--lr", "nan"], "lr must be a finite number > 0"),
        (["--lr", "-1"], "lr must be a finite number > 0"),
        (["--trainable", "content"], "trainable must be one of full, position"),
        (["--save", "out.txt"], "output file must end in .npz"),
        (["--steps", "many"], "Invalid value"),
    ],
)
def test_bad_train_input_exits_2_with_one_line(args: list[str], message: str) -> None:
    code, out, err = attnsep(*SMALL, *args)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err


def test_bad_bound_input_exits_2_with_one_line() -> None:
    for args, message in [
        (["--T", "2", "--q", "3"], "q must be <= T"),
        (["--T", "20", "--q", "3", "--width", "5"], "width needs d"),
        (["--T", "20"], "Missing option"),
    ]:
        code, _, err = attnsep("select", "bound", *args)
        assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and message in err


def test_the_position_block_by_exact_descent_from_the_command_line() -> None:
    """B5.1's setting (the position block, the loss exact over the tokens, float32 products)
    runs from the command line, and the table says which objective trained it."""
    options = ["--trainable", "position", "--objective", "population", "--products", "float32"]
    code, out, _ = attnsep(*SMALL, *options, "--quiet")
    assert code == 0
    assert "position, population" in out
    code, out, _ = attnsep(*SMALL, *options, "--json")
    report = json.loads(out)
    assert (report["trainable"], report["objective"], report["products"]) == (
        "position",
        "population",
        "float32",
    )
