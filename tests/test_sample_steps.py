"""One step at many sample sizes (``sample_steps``, SPEC A7.5): each ``n``'s outcomes equal a
``run_one_step`` with ``samples = n``, by exact sampling and by the surrogate, at any batch
split; test success follows from certified success; bad input is refused."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnsep.metrics.parity import step_sign_error
from attnsep.train.one_step import OneStepConfig, run_one_step
from attnsep.train.sample_steps import SampleSteps


@pytest.mark.parametrize("gradient", ["exact-samples", "surrogate"])
def test_outcomes_equal_one_step_runs_at_every_n(gradient: str) -> None:
    config = OneStepConfig(d=32, m=8, seeds=12, gradient=gradient, replica_batch=5)
    steps = SampleSteps(config, test_samples=512, test_accuracy=0.99)
    seen = set()
    for n in (None, 256, 2048, 8192):
        outcomes = steps.outcomes(n)
        run = run_one_step(config.replace(samples=n))
        np.testing.assert_array_equal(outcomes["certified"], run.success)
        assert (outcomes["test"] >= outcomes["certified"]).all()  # certified implies accuracy 1
        seen.add(int(outcomes["certified"].sum()))
    assert len(seen) > 1  # n matters at these sizes


def test_test_success_reads_fresh_inputs() -> None:
    """A replica whose certified error is 1 or more is judged on sampled inputs: a wrong
    head gives about half the signs wrong, a sharp right one none."""
    d = 16
    support = torch.tensor([[2, 5], [2, 5]])
    gamma = torch.zeros(2, 2, d, dtype=torch.float64)
    gamma[0, 0, 2] = gamma[0, 1, 5] = 1.0  # exact: error 0
    gamma[1, 0, 2] = gamma[1, 1, 7] = 1.0  # reads x_7 for x_5: wrong half the time
    certified = torch.tensor([1.5, 1.5])  # force sampling for both
    errors = step_sign_error(gamma, support, certified, -1, 4000, seed=0)
    assert errors[0] == 0 and abs(errors[1] - 0.5) < 4 * (0.25 / 4000) ** 0.5


def test_bad_input_is_refused() -> None:
    config = OneStepConfig(d=16, m=4, seeds=2)
    with pytest.raises(ValueError, match="test_samples"):
        SampleSteps(config, 0, 0.99)
    with pytest.raises(ValueError, match="test_accuracy"):
        SampleSteps(config, 16, 1.5)
    with pytest.raises(ValueError, match="samples"):
        SampleSteps(config, 16, 0.99).outcomes(0)
