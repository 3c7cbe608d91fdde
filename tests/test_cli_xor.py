"""End-to-end tests of ``attnsep xor one-step`` (SPEC A5, A6): output, saved state, bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from attnsep.exact.parity import population_loss
from attnsep.metrics.parity import certified_error, specialized
from attnsep.models.query_heads import QueryHeads
from cli_support import attnsep

BASE = ["xor", "one-step", "--d", "120", "--m", "16", "--seeds", "6", "--seed", "3"]


def test_console_script_prints_no_traceback():
    code = "import sys; from attnsep.cli import main; main(sys.argv[1:])"
    proc = subprocess.run(
        [sys.executable, "-c", code, "xor", "one-step", "--d", "1"], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert proc.stderr == "error: d must be an integer >= 2, got 1\n"


def test_json_contract_and_saved_state_agree(tmp_path):
    out = tmp_path / "run.npz"
    proc = attnsep(*BASE, "--json", "--save", str(out))
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    for key in (
        "d",
        "m",
        "seeds",
        "attention",
        "eta",
        "trainable_params",
        "success_rate",
        "specialization_rate",
        "collapse_rate",
        "support_mass",
        "certified_error",
    ):
        assert key in report
    assert report["trainable_params"] == 2 * 16
    assert report["eta"] == pytest.approx(16 * 120**2 * np.log(120), rel=1e-12)
    saved = np.load(out)
    assert saved["V"].shape == (6, 120, 16)
    assert saved["theta_before"].shape == saved["theta_after"].shape == (6, 2, 16)
    assert saved["support"].shape == (6, 2) and saved["support"].dtype.kind == "i"
    assert float(saved["eta"]) == report["eta"]
    # Recompute everything from the saved state with the library's own pieces.
    model = QueryHeads(torch.from_numpy(saved["V"]))
    support = torch.from_numpy(saved["support"])
    theta_before = torch.from_numpy(saved["theta_before"])
    theta_after = torch.from_numpy(saved["theta_after"])
    gamma = model.weights(theta_after)
    np.testing.assert_array_equal(
        population_loss(gamma, support).numpy(), report["loss_after"]["values"]
    )
    np.testing.assert_array_equal(
        population_loss(model.weights(theta_before), support).numpy(),
        report["loss_before"]["values"],
    )
    bound = certified_error(gamma, support).numpy()
    np.testing.assert_array_equal(bound, report["certified_error"]["values"])
    assert report["success_rate"] == pytest.approx(float((bound <= 0.1).mean()))
    assert report["specialization_rate"] == pytest.approx(
        float(specialized(gamma, support).float().mean())
    )
    # the saved step is one gradient step of size eta from theta_before
    assert np.allclose(theta_before[:, 0], -theta_before[:, 1])


def test_human_table_mentions_the_rates():
    proc = attnsep(*BASE)
    assert proc.returncode == 0, proc.stderr
    assert "success rate" in proc.stdout and "certified error" in proc.stdout


def test_json_is_one_object_and_deterministic():
    first, second = attnsep(*BASE, "--json"), attnsep(*BASE, "--json")
    assert first.stdout == second.stdout
    assert len(first.stdout.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--d", "1"], "d must be an integer >= 2"),
        (["--d", "abc"], "--d"),
        (["--m", "0"], "m must be an integer >= 1"),
        (["--seeds", "0"], "seeds must be an integer >= 1"),
        (["--attention", "relu6"], "attention must be one of"),
        (["--eta", "-1"], "eta must be a finite number > 0"),
        (["--eta", "nan"], "eta must be a finite number > 0"),
        (["--eta", "inf"], "eta must be a finite number > 0"),
        (["--eta", "x"], "--eta must be 'auto' or a number"),
        (["--eta-scale", "0"], "eta scale must be"),
        (["--samples", "zero"], "--samples must be"),
        (["--support", "3,3"], "support must be 2 distinct integers"),
        (["--support", "3,500"], "support must be 2 distinct integers"),
        (["--support", "a,b"], "--support must be comma-separated"),
        (["--init", "simplex"], "init must be one of"),
        (["--dtype", "float16"], "dtype must be one of"),
        (["--device", "tpu"], "device must be one of"),
        (["--noise", "0.5"], "noise must be in [0, 0.5)"),
        (["--save", "state.txt"], "must end in .npz"),
        (["--save", "/proc/state.npz"], "not writable"),
        (["--unknown"], "No such option"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, needle, tmp_path):
    proc = attnsep("xor", "one-step", "--d", "20", "--seeds", "1", *args)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], proc.stderr


def test_failed_save_leaves_nothing(tmp_path):
    target = tmp_path / "out.npz"
    proc = attnsep(
        "xor", "one-step", "--d", "20", "--seeds", "1", "--eta", "-1", "--save", str(target)
    )
    assert proc.returncode == 2
    assert list(tmp_path.iterdir()) == []
