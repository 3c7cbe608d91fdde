"""A7.5b's multi-step searches (``xor_samples.multistep``, ``sample_steps.SampleDescent``, SPEC
A7.5, Part F): one step equals ``SampleSteps``; at a tiny ``d`` every probe of the search equals
a direct computation (autograd through ``V`` on explicitly drawn samples), and ``n*`` is where
the direct rates cross the goal; the jobs, the held-set limit, and the config's checks."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnsep.configs import MAX_DATA_ELEMENTS, OneStepConfig
from attnsep.exact.parity import population_loss
from attnsep.experiments import xor_samples
from attnsep.experiments.xor_samples import multistep
from attnsep.experiments.xor_samples import search as sample_search
from attnsep.metrics.parity import best_assignment
from attnsep.train.one_step import prepare_replicas
from attnsep.train.parity import label_correlation
from attnsep.train.sample_steps import SampleDescent, SampleSteps
from attnsep.train.xor_train import drawn_samples


def test_one_step_of_descent_is_sample_steps() -> None:
    config = OneStepConfig(d=32, m=8, seeds=12, replica_batch=5)
    steps = SampleSteps(config, 512, 0.99)
    descent = SampleDescent(config, 1, 512, 0.99)
    rates = set()
    for n in (None, 256, 2048, 8192):
        ours, theirs = descent.outcomes(n), steps.outcomes(n)
        np.testing.assert_array_equal(ours["certified"], theirs["certified"])
        np.testing.assert_array_equal(ours["test"], theirs["test"])
        rates.add(int(ours["certified"].sum()))
    assert len(rates) > 1  # n matters at these sizes


def direct(config: xor_samples.config.Config, d: int, n: int | None) -> np.ndarray:
    """Each replica's certified success after ``multistep_steps`` GD steps of ``eta / steps`` on
    ``n`` samples drawn at once (``None``: the exact population loss), by autograd through
    ``V``: no code of ``SampleDescent`` involved."""
    one = OneStepConfig(d=d, m=config.m, seeds=config.multistep_seeds, seed=config.seed)
    task, model, support, theta = prepare_replicas(one, 0, one.seeds, False)
    corr = label_correlation(model, task)
    if n is not None:
        x, y = drawn_samples(task, one.seed, support, n)
    eta = one.step_size() / config.multistep_steps
    for _ in range(config.multistep_steps):
        theta = theta.detach().requires_grad_(True)
        gamma = model.weights(theta)
        if n is None:
            loss = population_loss(gamma, support, corr)
        else:
            proj = torch.einsum("ehd,end->enh", gamma, x)
            loss = ((model.sign * proj.prod(dim=2) - y) ** 2).mean(dim=1)
        (grad,) = torch.autograd.grad(loss.sum(), theta)
        theta = theta.detach() - eta * grad
    bound, _ = best_assignment(model.weights(theta), support)
    return (bound <= one.success_tol).numpy()


def test_the_search_at_d8_matches_a_direct_computation() -> None:
    """``d = 8``, 3 steps, 24 replicas: every stored probe's outcomes (and the population
    reference) equal the direct computation, the search's ``n*`` passes the goal by the direct
    rates and the grid point below it does not (or it is the first searched), and ``n*`` of the
    replicas that are not stuck is the first probe passing their goal."""
    d = 8
    config = xor_samples.config.Config(
        d_values=[],
        multistep_d_values=[d],
        multistep_steps=3,
        multistep_seeds=24,
        multistep_n_max=2**12,
        test_samples=256,
    )
    (record,) = multistep.run(config)
    assert record["steps"] == 3 and record["eta"] == pytest.approx(
        OneStepConfig(d=d).step_size() / 3
    )
    search = record["certified"]
    population = direct(config, d, None)
    np.testing.assert_array_equal(search["population"]["outcomes"], population)
    for probe in search["probes"]:
        np.testing.assert_array_equal(probe["outcomes"], direct(config, d, probe["size"]))
    goal = config.target * population.mean() - 1e-12
    k_start, k_limit, _ = sample_search.search_range(d, multistep.search_of(config, d))
    assert search["n_star"] is not None and direct(config, d, search["n_star"]).mean() >= goal
    k = sample_search.grid_k(search["n_star"])
    if k > k_start:
        assert direct(config, d, sample_search.grid_n(k - 1)).mean() < goal
    a = sample_search.analyse([search], config)
    sizes, outcomes = sample_search.probe_matrix(search["probes"])
    kept = ~sample_search.stuck_mask(sizes, outcomes, population)
    kept_goal = config.target * population[kept].mean() - 1e-12
    first = min(
        s for s, col in zip(sizes, outcomes.T, strict=True) if col[kept].mean() >= kept_goal
    )
    assert a["n"][0] == first


def test_the_held_set_limits_n() -> None:
    config = xor_samples.config.Config(multistep_n_max=2**20, multistep_seeds_by_d={256: 8})
    assert multistep.search_of(config, 256).n_limit(256) == MAX_DATA_ELEMENTS // 256
    assert multistep.search_of(config, 16).n_limit(16) == 2**20
    assert multistep.seeds_at(config, 256) == 8 and multistep.seeds_at(config, 16) == 64


def test_jobs_and_their_work() -> None:
    config = xor_samples.EXPERIMENT.config("standard")
    jobs = xor_samples.run.split(config)
    steps = [j for j in jobs if j.multistep_d_values]
    assert [j.multistep_d_values for j in steps] == [[d] for d in config.multistep_d_values]
    assert all(not j.d_values for j in steps)
    assert all(not j.multistep_d_values for j in jobs if j.d_values)
    largest = xor_samples.run.work(steps[-1].model_dump(mode="json"))
    assert set(largest) == {"multistep"} and largest["multistep"] > 0
    assert multistep.seeds_at(steps[-1], 256) == 32  # fewer replicas at the costliest d
    with pytest.raises(ValueError, match="both empty"):
        xor_samples.config.Config(d_values=[], multistep_d_values=[])
