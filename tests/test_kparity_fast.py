"""``train.grid_descent`` (the kparity-steps runs since version 3) against the loop it replaced
(``reference_grid_descent``: ``Descent`` on a ``G``-fold copy of the model), and the hand-written
loss gradient (``exact.kparity.loss_and_gradient``) against autograd."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnsep.configs import XorTrainConfig
from attnsep.exact import kparity
from attnsep.experiments import xor_kparity as kp
from attnsep.train import grid_descent as gd

RECORDS = ("first", "one_step", "collapsed")
THETA_RTOL = 1e-6
"""How close the final query vectors of the two paths are, relative to their largest entry
(measured at most 8e-10 on these cases; 4e-5 at worst over the quick and standard presets' jobs
up to d = 512): the sums run in another order, and GD carries the rounding along, more so near
a saddle; the records (integer steps, booleans) are identical on all of them."""


def runs(k: int, d: int, m: int, seeds: int, exponents: list[float], budget: int, seed: int = 0):
    config = kp.config.Config(
        series=[{"k": k, "d_values": [d]}],
        m=m,
        seeds=seeds,
        eta_exponents=exponents,
        budget=budget,
        seed=seed,
    )
    return kp.run.train_config(k, d, m, config), kp.run.etas(k, d, config), budget


def assert_same_records(a: gd.GridRuns, b: gd.GridRuns) -> None:
    for field in RECORDS:
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)
    assert a.steps_run == b.steps_run
    assert a.diverged_at == b.diverged_at


@pytest.mark.parametrize("heads", [1, 2, 3, 4])
@pytest.mark.parametrize("d", [5, 16])
def test_hand_gradient_equals_autograd(heads: int, d: int) -> None:
    gen = torch.Generator().manual_seed(10 * heads + d)
    gamma = torch.softmax(3.0 * torch.randn(6, heads, d, generator=gen, dtype=torch.float64), -1)
    gamma[0] = 0.0
    gamma[0, :, 1] = 1.0  # a saturated softmax: every weight exactly 0 or 1
    gamma[1] -= 0.05  # signed weights too
    support = torch.stack([torch.randperm(d, generator=gen)[:heads] for _ in range(6)])
    leaf = gamma.clone().requires_grad_(True)
    loss = kparity.population_loss(leaf, support, 0.7)
    (grad,) = torch.autograd.grad(loss.sum(), leaf)
    by_hand, grad_by_hand = kparity.loss_and_gradient(gamma, support, 0.7)
    torch.testing.assert_close(by_hand, loss.detach(), rtol=0, atol=1e-14)
    torch.testing.assert_close(grad_by_hand, grad, rtol=0, atol=1e-14)


CASES = [
    # k, d, m, seeds, step-size exponents, budget: small and large steps (runs that saturate
    # and freeze), an odd m (operands off 64-byte alignment), k = 2 (the two-head loss before)
    (3, 16, 32, 16, [-8.0, -4.0, 0.0, 4.0], 60),
    (4, 16, 32, 12, [-8.0, -4.0, 0.0, 4.0], 60),
    (3, 64, 16, 8, [-10.0, -6.0, -2.0, 2.0], 80),
    (4, 32, 8, 6, [-6.0, 0.0, 4.0], 60),
    (2, 32, 8, 8, [-4.0, 0.0], 40),
    (3, 16, 7, 6, [-9.0, -2.0, 0.0, 1.0, 3.0], 40),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"k{c[0]}-d{c[1]}-m{c[2]}")
def test_grid_descent_equals_the_loop_it_replaced(case) -> None:
    config, etas, budget = runs(*case)
    new = gd.grid_descent(config, etas, budget)
    old = gd.reference_grid_descent(config, etas, budget)
    assert_same_records(new, old)
    scale = np.abs(old.theta).max()
    assert np.abs(new.theta - old.theta).max() <= THETA_RTOL * scale
    assert new.evaluated < old.evaluated  # some runs froze


@pytest.mark.parametrize("case", [CASES[0], CASES[1], CASES[5]], ids=["k3", "k4", "odd-m"])
def test_freezing_changes_nothing_to_the_bit(case) -> None:
    """A frozen run is set aside exactly: the same records and the same final query vectors,
    bit for bit, as when every run is evaluated at every step; a chunk as small as one block
    changes nothing either."""
    config, etas, budget = runs(*case)
    frozen, every = (
        gd.grid_descent(config, etas, budget),
        gd.grid_descent(config, etas, budget, freeze=False, chunk_bytes=1),
    )
    assert_same_records(frozen, every)
    np.testing.assert_array_equal(frozen.theta, every.theta)
    total = config.seeds * len(etas) * (budget + 1)
    assert every.evaluated == total and frozen.evaluated < 0.9 * total


@pytest.mark.parametrize(
    "case",
    [(3, 16, 16, 4, [-4.0, -2.0], 300, 0), (3, 64, 16, 3, [-4.0, -2.0], 300, 0)],
    ids=["k3-d16", "k3-d64"],
)
def test_stops_when_every_run_has_succeeded(case) -> None:
    """Measured: every run succeeds within 136 and 3 steps (of 300), and both paths stop there."""
    config, etas, budget = runs(*case)
    new = gd.grid_descent(config, etas, budget)
    old = gd.reference_grid_descent(config, etas, budget)
    assert_same_records(new, old)
    assert new.steps_run < budget and (new.first >= 0).all()


def test_a_non_finite_loss_stops_both_paths_at_the_same_step(monkeypatch) -> None:
    """As ``Descent``: the first non-finite loss (here forced at the evaluation after step 2)
    stops the run; the records hold steps 0 and 1, and collapse is read at the last ``theta``."""
    from attnsep.train import xor_train

    def poisoned(loss_of, at: int = 2):
        calls = {"n": 0}

        def wrapped(gamma, *args):
            out = loss_of(gamma, *args)
            calls["n"] += 1
            if calls["n"] > at:
                loss = out[0] if isinstance(out, tuple) else out
                loss = loss + float("nan")
                return (loss, *out[1:]) if isinstance(out, tuple) else loss
            return out

        return wrapped

    config, etas, budget = runs(3, 16, 8, 4, [-6.0, 0.0], 20)
    monkeypatch.setattr(xor_train, "exact_loss", poisoned(xor_train.exact_loss))
    old = gd.reference_grid_descent(config, etas, budget)
    monkeypatch.setattr(gd, "loss_and_gradient", poisoned(kparity.loss_and_gradient))
    new = gd.grid_descent(config, etas, budget)
    assert old.diverged_at == 2
    assert_same_records(new, old)


def test_the_experiment_runs_through_grid_descent() -> None:
    """Plain GD on the population gradient (the finding's ``constant`` rule); its collapse is
    two heads on one support bit after the last step (``shared_support_bit``)."""
    from attnsep.train.capped_descent import shared_support_bit

    config = kp.config.Config(
        series=[{"k": 3, "d_values": [16]}],
        m=8,
        seeds=4,
        budget=10,
        rules=["constant"],
        gradients=["population"],
    )
    (record,) = kp.run.run(config)
    base, etas, _ = runs(3, 16, 8, 4, config.eta_exponents, 10)
    old = gd.reference_grid_descent(base, etas, 10)
    steps = [[None if t < 0 else int(t) for t in row] for row in old.first.tolist()]
    assert record["steps"] == steps
    assert record["one_step"] == old.one_step.tolist()
    assert record["collapsed"] == shared_support_bit(base, old.theta).tolist()


def test_needs_softmax_and_the_population_gradient() -> None:
    for bad in ({"attention": "linear"}, {"gradient": "fresh", "samples": 8}):
        config = XorTrainConfig(d=8, m=4, k=3, seeds=2, **bad)
        with pytest.raises(ValueError, match="grid descent needs"):
            gd.grid_descent(config, [1.0], 2)
