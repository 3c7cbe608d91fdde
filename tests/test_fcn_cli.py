"""End-to-end tests of ``attnsep fcn xor`` and ``attnsep fcn select`` (SPEC A7.6, B4, B5.4)."""

from __future__ import annotations

import json

import pytest

from cli_support import attnsep


def test_xor_json_contract() -> None:
    code, out, err = attnsep(
        "fcn", "xor", "--d", "16", "--width", "8", "--seeds", "3", "--steps", "300", "--json"
    )
    assert code == 0, err
    report = json.loads(out)
    for key in (
        "d",
        "width",
        "seeds",
        "params",
        "success_rate",
        "test_error",
        "final_loss",
        "steps_run",
        "optimizer",
        "loss",
        "lr",
    ):
        assert key in report
    assert report["params"] == 8 * (16 + 2) + 1
    assert len(report["test_error"]["values"]) == 3
    assert report["test_error"]["mean"] == pytest.approx(sum(report["test_error"]["values"]) / 3)
    assert 0 <= report["success_rate"] <= 1


def test_select_json_contract() -> None:
    code, out, err = attnsep(
        "fcn",
        "select",
        "--d",
        "2",
        "--T",
        "4",
        "--q",
        "2",
        "--width",
        "5",
        "--seeds",
        "2",
        "--steps",
        "40",
        "--json",
    )
    assert code == 0, err
    report = json.loads(out)
    for key in ("d", "T", "q", "width", "params", "loss", "stderr", "fcn_loss_floor"):
        assert key in report
    assert report["T"] == 4
    assert report["params"] == (4 * 2 + 4) * 5 + 5 + 5 * 2 + 2
    assert len(report["loss"]["values"]) == 2 and len(report["stderr"]["values"]) == 2
    assert report["fcn_loss_floor"] == pytest.approx(3 * (4 - 2) / (2 * 4 * 3))
    assert report["fcn_loss_floor_exact"] == "1/4"


def test_human_tables() -> None:
    code, out, _ = attnsep(
        "fcn", "xor", "--d", "16", "--width", "4", "--seeds", "2", "--steps", "50"
    )
    assert code == 0 and "success rate" in out
    code, out, _ = attnsep("fcn", "select", "--steps", "5", "--seeds", "2")
    assert code == 0 and "FCN floor" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("xor", "--d", "1"), "error: d must be an integer >= 2, got 1\n"),
        (("xor", "--d", "16", "--optimizer", "lbfgs"), "error: optimizer must be one of"),
        (("xor", "--d", "16", "--loss", "l1"), "error: loss must be one of mse, hinge"),
        (("xor", "--d", "16", "--lr", "0"), "error: lr must be a finite number > 0"),
        (("xor", "--d", "16", "--width", "0"), "error: width must be an integer >= 1"),
        (("select", "--T", "2", "--q", "3"), "error: q must be <= T"),
        (("select", "--seeds", "0"), "error: seeds must be an integer >= 1"),
        (
            ("xor", "--d", "16", "--optimizer", "sgd", "--lr", "1e6", "--width", "64"),
            "error: training diverged",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line(args: tuple[str, ...], message: str) -> None:
    code, out, err = attnsep("fcn", *args)
    assert code == 2
    assert err.startswith(message) and err.count("\n") == 1
    assert out == ""
