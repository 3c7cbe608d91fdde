"""The one-step experiment (SPEC A5, A6): success, recomputed metrics, determinism, validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from attnsep.configs import default_eta
from attnsep.embeddings import sphere_embeddings
from attnsep.exact.parity import population_loss
from attnsep.metrics.parity import assigned_mass, certified_error, collapsed, specialized
from attnsep.models.query_heads import QueryHeads, initial_queries
from attnsep.tasks.parity import SparseParity
from attnsep.train.one_step import (
    REPLICA_FIELDS,
    OneStepConfig,
    _run_batch,
    run_one_step,
    summarize,
)
from attnsep.train.parity import label_correlation, population_objective

FIELDS = (*REPLICA_FIELDS, "embeddings")


@pytest.fixture(scope="module")
def softmax_d200():
    config = OneStepConfig(d=200, m=32, seeds=32, seed=0, attention="softmax", device="cpu")
    return run_one_step(config, keep_embeddings=True)


def test_softmax_one_step_succeeds(softmax_d200) -> None:
    summary = summarize(softmax_d200)
    # measured: 27/32 successes, 31/32 specialized, 1/32 collapsed (seed 0)
    assert summary["success_rate"] >= 0.8
    assert summary["specialization_rate"] >= 0.9
    assert summary["collapse_rate"] <= 0.1
    assert summary["loss_after"]["median"] < 0.05
    assert summary["loss_before"]["mean"] == pytest.approx(1.0, abs=0.05)  # near-uniform init
    assert summary["gradient"] == "population"
    assert summary["trainable_params"] == 64
    assert summary["eta"] == default_eta(200)
    assert summary["success_rate"] == softmax_d200.success.mean()


@pytest.mark.parametrize("attention", ["linear", "erf"])
def test_componentwise_maps_fail(attention: str) -> None:
    result = run_one_step(
        OneStepConfig(d=200, m=32, seeds=32, seed=0, attention=attention, device="cpu")
    )
    summary = summarize(result)
    assert summary["success_rate"] <= 0.1
    assert summary["loss_after"]["median"] > 0.9


def test_reported_metrics_recompute_from_embeddings(softmax_d200) -> None:
    r = softmax_d200
    config = r.config
    V = torch.from_numpy(r.embeddings)
    assert torch.equal(V, sphere_embeddings(config.seed, config.seeds, config.d, config.m))
    model = QueryHeads(V, config.attention, config.sign)
    support = torch.from_numpy(r.support)
    assert torch.equal(support, SparseParity.of(config).supports(config.seed, config.seeds))
    theta0 = torch.from_numpy(r.theta_before)
    assert torch.equal(theta0, initial_queries(config.seed, config.seeds, 2, config.m))
    theta1 = torch.from_numpy(r.theta_after)
    corr = label_correlation(model, SparseParity.of(config))
    # the step is theta - eta * (exact population gradient)
    _, grad = population_objective(model, SparseParity.of(config), support)(theta0)
    torch.testing.assert_close(theta1, theta0 - r.eta * grad, rtol=1e-12, atol=1e-12)
    gamma0, gamma1 = model.weights(theta0), model.weights(theta1)
    torch.testing.assert_close(
        torch.from_numpy(r.loss_before),
        population_loss(gamma0, support, corr),
        rtol=1e-12,
        atol=1e-12,
    )
    torch.testing.assert_close(
        torch.from_numpy(r.loss_after),
        population_loss(gamma1, support, corr),
        rtol=1e-12,
        atol=1e-12,
    )
    torch.testing.assert_close(
        torch.from_numpy(r.certified_error),
        certified_error(gamma1, support),
        rtol=1e-12,
        atol=1e-12,
    )
    torch.testing.assert_close(
        torch.from_numpy(r.mass_after), assigned_mass(gamma1, support), rtol=1e-12, atol=1e-12
    )
    assert np.array_equal(r.specialized, specialized(gamma1, support).numpy())
    assert np.array_equal(r.collapsed, collapsed(gamma1, support).numpy())
    assert np.array_equal(r.success, r.certified_error <= config.success_tol)


def test_default_eta_formula() -> None:
    for d in (2, 30, 200, 4000):
        assert default_eta(d) == pytest.approx(16 * d**2 * math.log(d), rel=1e-15)
        assert OneStepConfig(d=d).step_size() == default_eta(d)
    assert OneStepConfig(d=30, eta_scale=2.0).step_size() == pytest.approx(2 * 900 * math.log(30))
    assert OneStepConfig(d=30, eta=123.0).step_size() == 123.0


def test_explicit_eta_is_used() -> None:
    a = run_one_step(OneStepConfig(d=12, m=8, seeds=3, eta=10.0, device="cpu"))
    b = run_one_step(OneStepConfig(d=12, m=8, seeds=3, eta=20.0, device="cpu"))
    assert a.eta == 10.0 and b.eta == 20.0
    np.testing.assert_allclose(
        b.theta_after - b.theta_before, 2 * (a.theta_after - a.theta_before), rtol=1e-12, atol=1e-15
    )


def test_same_seed_is_bitwise_identical_and_other_seed_differs() -> None:
    config = OneStepConfig(d=40, m=16, seeds=4, seed=3, device="cpu")
    a = run_one_step(config, keep_embeddings=True)
    b = run_one_step(config, keep_embeddings=True)
    for name in FIELDS:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    c = run_one_step(config.replace(seed=4))
    assert not np.array_equal(a.theta_before, c.theta_before)


@pytest.mark.parametrize("samples", [None, 300])
def test_results_do_not_depend_on_the_replica_batch(samples) -> None:
    config = OneStepConfig(d=40, m=16, seeds=5, seed=3, samples=samples, noise=0.1, device="cpu")
    whole = run_one_step(config, keep_embeddings=True)
    for batch in (1, 2, 3):
        split = run_one_step(config.replace(replica_batch=batch), keep_embeddings=True)
        for name in FIELDS:
            assert np.array_equal(getattr(whole, name), getattr(split, name)), (batch, name)
    for e in range(5):  # replica e alone (first_replica = e)
        alone = _run_batch(config, e, 1, True)
        for name in FIELDS:
            assert np.array_equal(alone[name][0], getattr(whole, name)[e]), (e, name)


def test_progress_reports_every_batch() -> None:
    calls = []
    run_one_step(
        OneStepConfig(d=10, m=4, seeds=5, replica_batch=2, device="cpu"),
        progress=lambda done, total: calls.append((done, total)),
    )
    assert calls == [(2, 5), (4, 5), (5, 5)]


def test_fixed_support_and_k3_plus_sign() -> None:
    r = run_one_step(
        OneStepConfig(d=12, m=8, seeds=3, k=3, sign=1, support=(9, 2, 5), noise=0.1, device="cpu"),
        keep_embeddings=True,
    )
    assert r.support.tolist() == [[2, 5, 9]] * 3
    assert r.theta_after.shape == (3, 3, 8)
    assert r.trainable_params == 24
    model = QueryHeads(torch.from_numpy(r.embeddings), "softmax", 1)
    gamma = model.weights(torch.from_numpy(r.theta_after))
    corr = 1 * 1 * (1 - 2 * 0.1)
    torch.testing.assert_close(
        torch.from_numpy(r.loss_after), population_loss(gamma, torch.from_numpy(r.support), corr)
    )
    assert np.isfinite(r.certified_error).all()


def test_float32_agrees_with_float64() -> None:
    a = run_one_step(OneStepConfig(d=20, m=16, seeds=6, device="cpu"))
    b = run_one_step(OneStepConfig(d=20, m=16, seeds=6, dtype="float32", device="cpu"))
    assert b.theta_after.dtype == np.float32
    np.testing.assert_allclose(b.loss_after, a.loss_after, rtol=0, atol=1e-4)
    assert np.array_equal(a.specialized, b.specialized)


INVALID = [
    ({"d": 1}, "d must be an integer >= 2, got 1"),
    ({"m": 0}, "m must be an integer >= 1, got 0"),
    ({"seeds": 0}, "seeds must be an integer >= 1, got 0"),
    ({"seed": -1}, "seed must be an integer >= 0, got -1"),
    ({"attention": "foo"}, "attention must be one of"),
    ({"eta": -1}, "eta must be a finite number > 0, got -1"),
    ({"eta": float("nan")}, "eta must be a finite number > 0, got nan"),
    ({"eta": 0.0}, "eta must be a finite number > 0, got 0.0"),
    ({"eta_scale": float("inf")}, "eta scale must be a finite number > 0, got inf"),
    ({"support": (3, 3)}, "support must be 2 distinct integers in [0, 10), got [3, 3]"),
    ({"support": (0, 10)}, "support must be 2 distinct integers in [0, 10), got [0, 10]"),
    ({"support": (1, 2, 3)}, "got [1, 2, 3]"),
    ({"init": "foo"}, "init must be one of antisymmetric, independent, orthogonal; got 'foo'"),
    ({"dtype": "float16"}, "dtype must be one of float64, float32; got 'float16'"),
    ({"noise": 0.7}, "noise must be in [0, 0.5), got 0.7"),
    ({"samples": 0}, "samples must be an integer >= 1, got 0"),
    ({"device": "tpu"}, "device must be one of auto, cpu, cuda; got 'tpu'"),
    ({"replica_batch": 0}, "replica batch must be an integer >= 1, got 0"),
    ({"success_tol": 0}, "success tolerance must be a finite number > 0, got 0"),
    ({"sign": 2}, "sign must be one of -1, 1; got 2"),
    ({"k": 11}, "k must be <= d=10, got 11"),
    ({"m": 2.5}, "m must be an integer >= 1, got 2.5"),
]


@pytest.mark.parametrize(("changes", "message"), INVALID, ids=[str(c) for c, _ in INVALID])
def test_invalid_configs_raise_one_line_value_errors(changes: dict, message: str) -> None:
    with pytest.raises(ValueError) as info:
        OneStepConfig(**{"d": 10, **changes})
    text = str(info.value)
    assert "\n" not in text
    assert message in text


@pytest.mark.parametrize(
    ("changes", "named"),
    [({"k": 4, "m": 2}, "m=2"), ({"k": 7, "m": 8}, "7")],
)
def test_configs_beyond_the_model_fail_naming_the_value(changes: dict, named: str) -> None:
    # antisymmetric init of H heads needs m >= H - 1; the cumulant path holds k <= 6.
    # Either the config or the run must refuse them with a ValueError naming the value.
    with pytest.raises(ValueError) as info:
        run_one_step(OneStepConfig(d=10, seeds=1, device="cpu", **changes))
    assert named in str(info.value)


# --- empirical gradient (SPEC A4 finite samples) ------------------------------------------


def test_empirical_step_approaches_the_population_step() -> None:
    base = OneStepConfig(d=20, m=16, seeds=4, seed=0, device="cpu")
    pop = run_one_step(base)
    update = (pop.theta_after - pop.theta_before).reshape(4, -1)
    errors = []
    for n in (1000, 16000):
        emp = run_one_step(base.replace(samples=n))
        assert np.array_equal(emp.theta_before, pop.theta_before)
        diff = (emp.theta_after - emp.theta_before).reshape(4, -1) - update
        errors.append(np.linalg.norm(diff, axis=1) / np.linalg.norm(update, axis=1))
    # the gradient noise falls like 1/sqrt(n): 16x the samples, ~4x smaller error
    assert (errors[1] < errors[0] / 2.5).all(), errors
    assert (errors[1] < 0.2).all()
    assert summarize(emp)["gradient"] == "empirical"


def test_empirical_step_with_many_samples_succeeds_and_with_few_fails() -> None:
    base = OneStepConfig(d=20, m=32, seeds=32, seed=0, device="cpu")
    population = summarize(run_one_step(base))["success_rate"]
    many = summarize(run_one_step(base.replace(samples=20000)))["success_rate"]
    few = summarize(run_one_step(base.replace(samples=50)))["success_rate"]
    # measured: population 28/32, 20000 samples 26/32, 50 samples 5/32; the binomial
    # standard error of each rate is <= 0.09, so the margins below are >= 2.5 of them
    assert many >= 0.6
    assert many >= population - 0.25
    assert few <= 0.35
    assert few < many - 0.4


@pytest.mark.parametrize("attention", ["softmax", "linear", "erf"])
def test_d1000_m32_64_replicas_separates_softmax(attention: str) -> None:
    # the documented reference run: softmax learns, the component-wise maps do not
    summary = summarize(
        run_one_step(OneStepConfig(d=1000, m=32, seeds=64, seed=0, attention=attention))
    )
    if attention == "softmax":
        assert summary["success_rate"] >= 0.85 and summary["specialization_rate"] >= 0.85
    else:
        assert summary["success_rate"] <= 0.1 and summary["specialization_rate"] <= 0.1
