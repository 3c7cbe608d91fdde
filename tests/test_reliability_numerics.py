"""Numerical safety: huge rates, overflowing scores, float32, NaN at the store.

DESIGN.md: "Softmax always through a stable form. No NaN may leave the library silently."
Every check accepts exactly two outcomes: finite numbers, or a one-line ``ValueError``.
(``d = 10**7`` is covered by the scale tests elsewhere.)
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
import torch

from attnsep import attention
from attnsep.engine.store import Store
from attnsep.train.fcn import (
    Diverged,
    SelectionFCNConfig,
    XorFCNConfig,
    train_selection,
    train_xor,
)
from attnsep.train.one_step import OneStepConfig, run_one_step
from attnsep.train.selection import SelectionTrainConfig, train

ONE_STEP_ARRAYS = (
    "theta_before",
    "theta_after",
    "loss_before",
    "loss_after",
    "mass_after",
    "certified_error",
)


def finite_or_clear_error(compute, *words: str):
    """``compute()`` or ``None`` when it raised a one-line ``ValueError`` naming ``words``."""
    try:
        return compute()
    except ValueError as err:
        message = str(err)
        assert message and "\n" not in message, repr(message)
        for word in words:
            assert word in message, f"{word!r} not in {message!r}"
        return None


# ---------------------------------------------------------------- one step, huge eta


@pytest.mark.parametrize("eta", [1e15, 1e300, 1.7e308])
@pytest.mark.parametrize("name", ["softmax", "linear", "erf"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_one_step_with_a_huge_eta_is_finite_or_a_clear_error(name, eta, dtype):
    config = OneStepConfig(d=64, m=16, seeds=3, attention=name, eta=eta, dtype=dtype)
    result = finite_or_clear_error(lambda: run_one_step(config), "eta")
    if result is None:
        return
    for key in ONE_STEP_ARRAYS:
        assert np.isfinite(getattr(result, key)).all(), key
    assert (result.loss_after >= 0).all() and (result.certified_error >= 0).all()


def test_one_step_at_eta_1e15_softmax_solves_and_the_others_stay_finite():
    """``eta = 1e15``, d = 64: softmax saturates onto the support; linear and erf stay finite."""
    for name in ("softmax", "linear", "erf"):
        result = run_one_step(OneStepConfig(d=64, m=16, seeds=4, attention=name, eta=1e15))
        for key in ONE_STEP_ARRAYS:
            assert np.isfinite(getattr(result, key)).all(), (name, key)
    softmax = run_one_step(OneStepConfig(d=64, m=16, seeds=4, eta=1e15))
    assert softmax.success.all()


def test_overflow_error_does_not_advise_float64_to_a_float64_run():
    """The message must name eta and not tell a float64 run to "use float64"."""
    config = OneStepConfig(d=64, m=16, seeds=2, attention="linear", eta=1e300, dtype="float64")
    with pytest.raises(ValueError) as info:
        run_one_step(config)
    message = str(info.value)
    assert "eta" in message and "\n" not in message
    assert "use float64" not in message, message


# ---------------------------------------------------------------- softmax of huge scores


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_softmax_of_scores_that_overflow_exp_is_finite_and_sums_to_one(dtype):
    big = torch.finfo(dtype).max / 4
    scores = torch.tensor(
        [
            [big, -big, big / 2, 0.0],
            [-big, -big, -big, -big],
            [big, big, big, big],
            [1e3, 1e3 - 1.0, -1e3, 0.0],
        ],
        dtype=dtype,
    )
    weights = attention.softmax(scores)
    assert torch.isfinite(weights).all()
    assert torch.allclose(weights.sum(dim=-1), torch.ones(4, dtype=dtype))
    assert weights[0, 0] == 1 and torch.allclose(weights[1], torch.full((4,), 0.25, dtype=dtype))


def test_softmax_of_scores_near_1e300_in_float64():
    scores = torch.tensor(
        [[1e300, 5e299, -1e300, 0.0], [1e300, 1e300, 0.0, 0.0]], dtype=torch.float64
    )
    weights = attention.softmax(scores)
    assert torch.isfinite(weights).all()
    assert torch.equal(weights.sum(dim=-1), torch.ones(2, dtype=torch.float64))
    assert weights[0].tolist() == [1.0, 0.0, 0.0, 0.0] and weights[1].tolist() == [0.5, 0.5, 0, 0]


@pytest.mark.parametrize("name", ["linear", "erf", "sigmoid"])
def test_componentwise_maps_of_huge_scores_are_finite(name):
    scores = torch.tensor([[1e300, -1e300, 0.0, 3.0]], dtype=torch.float64)
    assert torch.isfinite(attention.get(name)(scores)).all()


# ---------------------------------------------------------------- float32 against float64


def test_float32_one_step_at_d1000_is_finite_and_close_to_float64():
    common = {"d": 1000, "m": 32, "seeds": 16, "seed": 5}
    single = run_one_step(OneStepConfig(**common, dtype="float32"))
    double = run_one_step(OneStepConfig(**common, dtype="float64"))
    for key in ONE_STEP_ARRAYS:
        assert np.isfinite(getattr(single, key)).all(), key
    success_gap = abs(float(single.success.mean()) - float(double.success.mean()))
    loss_gap = float(np.abs(single.loss_after.astype(np.float64) - double.loss_after).max())
    error_gap = float(np.abs(single.certified_error - double.certified_error).max())
    print(
        f"float32 vs float64 at d=1000: success {success_gap}, loss {loss_gap:.3g}, "
        f"certified error {error_gap:.3g}"
    )
    assert success_gap <= 1 / 16  # at most one replica on the other side of the tolerance
    assert loss_gap <= 1e-3
    assert np.array_equal(single.support, double.support)


# ---------------------------------------------------------------- selection training


@pytest.mark.parametrize("lr", [1e12, 1e300])
@pytest.mark.parametrize("trainable", ["full", "position"])
def test_selection_training_with_a_huge_lr_is_finite_or_a_clear_error(lr, trainable):
    config = SelectionTrainConfig(lr=lr, steps=5, batch=64, trainable=trainable)
    result = finite_or_clear_error(lambda: train(config), "lr")
    if result is None:
        return
    assert torch.isfinite(result.W).all()
    assert torch.isfinite(result.losses).all() and (result.losses >= 0).all()
    assert torch.isfinite(result.train_loss).all()


def test_selection_training_that_overflows_is_a_value_error():
    """``lr = 1e308`` with wide tokens (d = 50) sends ``W`` to inf after one step, so the
    loss of step 1 is NaN. That must surface as a one-line ``ValueError`` (the CLI's exit
    2), not as a ``RuntimeError`` (a traceback from ``attnsep select train``)."""
    config = SelectionTrainConfig(d=50, T=4, q=1, pe_dim=4, steps=4, batch=16, lr=1e308)
    with pytest.raises(ValueError) as info:
        train(config)
    assert "\n" not in str(info.value) and "lr" in str(info.value)


# ---------------------------------------------------------------- FCN baselines


@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
@pytest.mark.parametrize("lr", [1e15, 1e300])
def test_fcn_xor_with_a_huge_lr_diverges_cleanly_or_is_finite(optimizer, lr):
    config = XorFCNConfig(
        d=16, width=8, seeds=2, steps=20, lr=lr, optimizer=optimizer, test_samples=256
    )
    try:
        result = train_xor(config)
    except Diverged as err:
        assert "\n" not in str(err) and "lower lr" in str(err)
        return
    assert torch.isfinite(result.test_loss).all() and torch.isfinite(result.losses).all()
    assert ((result.test_error >= 0) & (result.test_error <= 1)).all()
    assert all(torch.isfinite(w).all() for w in result.model.weights)


@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
@pytest.mark.parametrize("lr", [1e15, 1e300])
def test_fcn_selection_with_a_huge_lr_diverges_cleanly_or_is_finite(optimizer, lr):
    config = SelectionFCNConfig(
        d=2,
        T=4,
        q=1,
        width=8,
        seeds=2,
        steps=20,
        batch=32,
        lr=lr,
        optimizer=optimizer,
        eval_samples=64,
    )
    try:
        result = train_selection(config)
    except Diverged as err:
        assert "\n" not in str(err) and "lower lr" in str(err)
        return
    for values in (result.loss, result.stderr, result.train_loss, result.losses):
        assert torch.isfinite(values).all()


# ---------------------------------------------------------------- the store refuses NaN


def job_row(records, config=None):
    return {
        "experiment": "one-step",
        "config_hash": "nan-test",
        "config": config or {"seed": 0},
        "seed": 0,
        "status": "done",
        "started": time.time(),
        "finished": time.time(),
        "seconds": 0.0,
        "versions": {"attnsep": "test"},
        "git_commit": None,
        "device": "cpu",
        "host": "test",
        "records": records,
        "error": None,
    }


@pytest.mark.parametrize(
    "records",
    [
        [{"rate": math.nan}],
        [{"rate": 0.5}, {"nested": {"values": [1.0, math.inf]}}],
        [{"loss": -math.inf}],
    ],
    ids=["nan", "nested inf", "-inf"],
)
def test_store_put_refuses_non_finite_records_and_writes_nothing(tmp_path, records):
    store = Store(tmp_path / "s.sqlite")
    with pytest.raises(ValueError) as info:
        store.put(job_row(records))
    assert "\n" not in str(info.value)
    assert store.rows() == [] and store.done_keys(["nan-test"]) == set()
    assert store.put(job_row([{"rate": 0.5}]))  # the store is still usable
    store.close()


def test_store_put_refuses_a_non_finite_config(tmp_path):
    """A NaN in the config would be stored as the non-JSON token ``NaN`` and break
    ``runs show`` later; it must be refused like a NaN in the records."""
    store = Store(tmp_path / "s.sqlite")
    with pytest.raises(ValueError):
        store.put(job_row([{"rate": 0.5}], config={"seed": 0, "eta_exponents": [math.nan]}))
    assert store.rows() == []
    store.close()
