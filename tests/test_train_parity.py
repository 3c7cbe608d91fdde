"""Gradients and steps (SPEC A4 gradients, A5): population and empirical objectives."""

from __future__ import annotations

import math

import pytest
import torch

from attnsep.configs import default_eta
from attnsep.exact.parity import population_loss
from attnsep.models.query_heads import QueryHeads, initial_queries
from attnsep.tasks.parity import SparseParity
from attnsep.train.parity import (
    empirical_objective,
    empirical_weights_gradient,
    gradient_descent,
    gradient_step,
    label_correlation,
    population_objective,
)

ATTENTIONS = ["softmax", "linear", "erf"]


def setup(
    attention: str,
    d: int = 6,
    m: int = 4,
    replicas: int = 3,
    k: int = 2,
    sign: int = -1,
    noise: float = 0.0,
    task_sign: int = -1,
    scale: float = 2.0,
):
    model = QueryHeads.sample(seed=1, replicas=replicas, d=d, m=m, attention=attention, sign=sign)
    task = SparseParity(d, k, task_sign, noise)
    support = task.supports(seed=1, replicas=replicas)
    theta = scale * initial_queries(seed=1, replicas=replicas, heads=k, m=m, init="independent")
    if attention != "softmax":  # component-wise maps need weights of order 1 to matter
        model = QueryHeads(model.V * d, attention, sign)
    return model, task, support, theta


def direct_population_loss(model, task, support, theta):
    return population_loss(model.weights(theta), support, label_correlation(model, task))


@pytest.mark.parametrize("attention", ATTENTIONS)
@pytest.mark.parametrize(
    ("k", "sign", "task_sign", "noise"), [(2, -1, -1, 0.0), (2, 1, -1, 0.2), (3, 1, 1, 0.1)]
)
def test_population_gradient_matches_autograd_and_finite_differences(
    attention, k, sign, task_sign, noise
) -> None:
    model, task, support, theta = setup(attention, k=k, sign=sign, task_sign=task_sign, noise=noise)
    loss, grad = population_objective(model, task, support)(theta)
    assert loss.shape == (3,) and grad.shape == theta.shape
    leaf = theta.clone().requires_grad_(True)
    direct = direct_population_loss(model, task, support, leaf)
    (auto,) = torch.autograd.grad(direct.sum(), leaf)
    torch.testing.assert_close(loss, direct.detach(), rtol=1e-13, atol=1e-13)
    torch.testing.assert_close(grad, auto, rtol=1e-10, atol=1e-13)
    # central differences, float64: error O(h^2) + O(eps/h)
    h = 1e-5
    fd = torch.zeros_like(theta)
    for idx in torch.cartesian_prod(*(torch.arange(n) for n in theta.shape[1:])):
        i, j = idx.tolist()
        step = torch.zeros_like(theta)
        step[:, i, j] = h
        up = direct_population_loss(model, task, support, theta + step)
        down = direct_population_loss(model, task, support, theta - step)
        fd[:, i, j] = (up - down) / (2 * h)
    torch.testing.assert_close(grad, fd, rtol=1e-6, atol=1e-8)
    assert grad.abs().max() > 1e-4  # the check is not vacuous


def explicit_empirical_loss(model, task, support, theta, seed, n, first_replica=0):
    x, y = (
        torch.cat(parts, dim=1)
        for parts in zip(*task.samples(seed, support, n, first_replica), strict=True)
    )
    return ((model.predict(theta, x) - y) ** 2).mean(dim=1)


@pytest.mark.parametrize("attention", ATTENTIONS)
@pytest.mark.parametrize(("k", "noise"), [(2, 0.0), (2, 0.3), (3, 0.1)])
def test_empirical_gradient_matches_autograd_on_the_same_samples(attention, k, noise) -> None:
    d = 3000  # blocks of 87 rows: n = 200 spans three blocks
    model, task, support, theta = setup(attention, d=d, k=k, noise=noise, scale=8.0)
    assert task.block_rows() < 200 // 2
    loss, grad = empirical_objective(model, task, support, seed=5, n=200)(theta)
    leaf = theta.clone().requires_grad_(True)
    direct = explicit_empirical_loss(model, task, support, leaf, seed=5, n=200)
    (auto,) = torch.autograd.grad(direct.sum(), leaf)
    torch.testing.assert_close(loss, direct.detach(), rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(grad, auto, rtol=1e-9, atol=1e-14 * float(auto.abs().max()))
    assert auto.abs().max() > 0


def test_empirical_gradient_does_not_depend_on_replica_batching() -> None:
    d, m, E = 12, 5, 4
    task = SparseParity(d, 2, noise=0.1)
    model = QueryHeads.sample(seed=2, replicas=E, d=d, m=m)
    support = task.supports(seed=2, replicas=E)
    theta = 3 * initial_queries(seed=2, replicas=E, heads=2, m=m)
    loss, grad = empirical_objective(model, task, support, seed=2, n=700)(theta)
    for e in range(E):
        single = QueryHeads(model.V[e : e + 1])
        l1, g1 = empirical_objective(
            single, task, support[e : e + 1], seed=2, n=700, first_replica=e
        )(theta[e : e + 1])
        assert torch.equal(l1[0], loss[e])
        assert torch.equal(g1[0], grad[e])
    # same seed: bitwise the same; another seed: different samples
    l2, g2 = empirical_objective(model, task, support, seed=2, n=700)(theta)
    assert torch.equal(l2, loss) and torch.equal(g2, grad)
    l3, _ = empirical_objective(model, task, support, seed=3, n=700)(theta)
    assert not torch.equal(l3, loss)


def test_empirical_loss_converges_to_the_population_loss() -> None:
    model, task, support, theta = setup("softmax", d=10, m=6, replicas=3, noise=0.1, scale=4.0)
    exact = direct_population_loss(model, task, support, theta)
    errors = []
    for n in (500, 8000, 64000):
        loss, _ = empirical_objective(model, task, support, seed=9, n=n)(theta)
        x, y = (torch.cat(p, dim=1) for p in zip(*task.samples(9, support, n), strict=True))
        sq = (model.predict(theta, x) - y) ** 2
        se = sq.std(dim=1) / math.sqrt(n)
        torch.testing.assert_close(loss, sq.mean(dim=1), rtol=1e-12, atol=0)
        assert ((loss - exact).abs() < 5 * se).all(), (n, loss, exact, se)
        errors.append(float(se.max()))
    assert errors[2] < errors[0] / 5  # the standard error shrinks like 1/sqrt(n)


def test_empirical_weight_gradient_is_unbiased() -> None:
    # mean per-sample gradient in gamma vs the exact population gradient, within 5 SE
    d, n = 8, 40000
    model, task, support, theta = setup("softmax", d=d, m=4, replicas=2, noise=0.2, scale=3.0)
    gamma = model.weights(theta).detach()
    g = gamma.clone().requires_grad_(True)
    exact_loss = population_loss(g, support, label_correlation(model, task))
    (exact_grad,) = torch.autograd.grad(exact_loss.sum(), g)
    loss, grad = empirical_weights_gradient(model, task, support, seed=4, n=n)(gamma)
    x, y = (torch.cat(p, dim=1) for p in zip(*task.samples(4, support, n), strict=True))
    proj = torch.bmm(x, gamma.transpose(1, 2))
    residual = model.sign * proj.prod(dim=2) - y
    per_sample = torch.stack([2 * model.sign * residual * proj[:, :, 1 - h] for h in range(2)], 2)
    per_sample = per_sample[:, :, :, None] * x[:, :, None, :]  # E x n x H x d
    torch.testing.assert_close(grad, per_sample.mean(dim=1), rtol=1e-10, atol=1e-13)
    se = per_sample.std(dim=1) / math.sqrt(n)
    assert ((grad - exact_grad).abs() < 5 * se).all()


def test_default_eta() -> None:
    for d in (2, 10, 200, 4096):
        assert default_eta(d) == pytest.approx(16 * d**2 * math.log(d), rel=1e-15)
        assert default_eta(d, 3.0) == pytest.approx(3 * d**2 * math.log(d), rel=1e-15)
    for bad in (0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="eta scale must be a finite number > 0"):
            default_eta(10, bad)


def test_label_correlation() -> None:
    V = torch.zeros(1, 4, 2, dtype=torch.float64)
    assert label_correlation(QueryHeads(V, sign=-1), SparseParity(4, 2, -1, 0.25)) == 0.5
    assert label_correlation(QueryHeads(V, sign=1), SparseParity(4, 2, -1, 0.0)) == -1.0


def test_gradient_step_and_descent() -> None:
    model, task, support, theta = setup("softmax", d=10, m=6, scale=1.0)
    objective = population_objective(model, task, support)
    loss0, grad0 = objective(theta)
    stepped, loss = gradient_step(objective, theta, 50.0)
    assert torch.equal(loss, loss0)
    assert torch.equal(stepped, theta - 50.0 * grad0)
    final, history = gradient_descent(objective, theta, 5.0, steps=5)
    assert history.shape == (5, 3)
    assert torch.equal(history[0], loss0)
    # small steps on a smooth loss: monotone decrease
    assert (history[1:] <= history[:-1]).all()
    assert (objective(final)[0] < history[0]).all()


@pytest.mark.parametrize("eta", [0.0, -1.0, float("nan"), float("inf")])
def test_gradient_step_rejects_bad_eta(eta: float) -> None:
    model, task, support, theta = setup("softmax")
    with pytest.raises(ValueError, match=r"eta must be a finite number > 0, got"):
        gradient_step(population_objective(model, task, support), theta, eta)


def test_gradient_step_refuses_non_finite_queries() -> None:
    model, task, support, theta = setup("linear", scale=1.0)
    with pytest.raises(ValueError, match="non-finite query vectors"):
        gradient_step(population_objective(model, task, support), theta, 1e308)
