"""The prepared accelerator check (bench/device_check.py) runs the same code on the CPU."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "bench" / "device_check.py"


def test_device_check_runs_on_the_cpu_at_small_sizes() -> None:
    args = [sys.executable, str(SCRIPT), "--device", "cpu", "--small", "--rounds", "1"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["target1_one_step"]["success_rate"] == 1.0
    for target in ("target2_ensemble", "target5_fcn_xor"):
        timing = report[target]
        assert timing["batched_s"] > 0 and timing["looped_s"] > 0
        assert timing["ratio"] == timing["looped_s"] / timing["batched_s"]


def test_device_check_refuses_a_missing_device() -> None:
    args = [sys.executable, str(SCRIPT), "--device", "cuda:64", "--small"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert "--device cuda:64: torch sees" in done.stderr
