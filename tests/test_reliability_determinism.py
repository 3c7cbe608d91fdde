"""Determinism: one seed, one answer, bit for bit.

DESIGN.md: "results must not depend on the executor, the chunk size or the batch of
replicas a replica landed in." Checked for ``run_one_step`` (repeated runs, ``replica_batch``
1 vs 3 vs all, a run of fewer replicas, more torch threads) and for ``select train --json``
(two runs print the same object, but for its wall-clock ``seconds``).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from attnsep.train.one_step import REPLICA_FIELDS, OneStepConfig, OneStepResult, run_one_step
from cli_support import attnsep

# (d, m, k, extra): XOR at the usual shapes, an empirical gradient, other attention maps,
# and odd shapes (k = 1 or 3 heads, m not a multiple of 4) where batched BLAS kernels may
# block a replica differently depending on how many replicas share the call.
SHAPES = [
    pytest.param(48, 8, 2, {}, id="xor d48 m8"),
    pytest.param(120, 16, 2, {"attention": "erf"}, id="xor erf d120 m16"),
    pytest.param(64, 8, 2, {"samples": 300, "noise": 0.1}, id="xor empirical d64"),
    pytest.param(40, 8, 2, {"support": (3, 17), "init": "independent"}, id="fixed support"),
    pytest.param(32, 8, 3, {}, id="k3 d32 m8"),
    pytest.param(33, 5, 3, {}, id="k3 d33 m5"),
    pytest.param(100, 5, 1, {}, id="k1 d100 m5"),
]
SEEDS = 7


def differences(a: OneStepResult, b: OneStepResult, rows: slice = slice(None)) -> dict:
    """``{field: max |a - b|}`` for every field that is not bitwise equal."""
    out = {}
    for name in REPLICA_FIELDS:
        x, y = getattr(a, name)[rows], getattr(b, name)
        if not np.array_equal(x, y):
            out[name] = float(np.abs(x.astype(np.float64) - y.astype(np.float64)).max())
    return out


@pytest.mark.parametrize(("d", "m", "k", "extra"), SHAPES)
def test_one_step_is_bitwise_reproducible_and_independent_of_the_replica_batch(d, m, k, extra):
    config = {"d": d, "m": m, "k": k, "seeds": SEEDS, "seed": 11, **extra}
    reference = run_one_step(OneStepConfig(**config))
    assert differences(reference, run_one_step(OneStepConfig(**config))) == {}
    for batch in (1, 3, SEEDS):
        split = run_one_step(OneStepConfig(**config, replica_batch=batch))
        assert differences(split, reference) == {}, f"replica_batch={batch}"
    # the first three replicas of a 7-replica run are the replicas of a 3-replica run
    prefix = run_one_step(OneStepConfig(**{**config, "seeds": 3}))
    assert differences(reference, prefix, slice(0, 3)) == {}, "seeds=3 vs first 3 of 7"


def test_one_step_with_two_threads_is_independent_of_the_replica_batch():
    """The CLI's ``xor one-step`` runs with torch's default thread count; the replica batch
    must not change its numbers there either (m = 33: an odd embedding width)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        config = {"d": 64, "m": 33, "seeds": SEEDS, "seed": 0}
        reference = run_one_step(OneStepConfig(**config))
        for batch in (1, 3):
            split = run_one_step(OneStepConfig(**config, replica_batch=batch))
            assert differences(split, reference) == {}, f"replica_batch={batch}"
    finally:
        torch.set_num_threads(previous)


def test_select_train_json_is_identical_across_two_runs():
    args = ("select", "train", "--d", "2", "--T", "4", "--q", "1", "--pe-dim", "8")
    args += ("--steps", "20", "--seeds", "2", "--json")
    outputs = []
    for _ in range(2):
        code, stdout, stderr = attnsep(*args)
        assert code == 0, stderr
        report = json.loads(stdout)
        report.pop("seconds")  # wall-clock time, the one field that may differ
        outputs.append(json.dumps(report, sort_keys=True))
    assert outputs[0] == outputs[1]
    report = json.loads(outputs[0])
    assert report["steps"] == 20 and len(report["eval"]) == 4


def test_xor_one_step_json_is_identical_across_two_runs():
    args = ("xor", "one-step", "--d", "40", "--m", "8", "--seeds", "5", "--seed", "2", "--json")
    first, second = tuple(attnsep(*args)), tuple(attnsep(*args))
    assert first[0] == second[0] == 0
    assert first[1] == second[1]
