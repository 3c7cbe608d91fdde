"""One gradient step on ``n`` samples, for one ensemble at every ``n`` a search asks (SPEC A7.5).

What the sample size does not change is computed once per replica: the embeddings, the support,
the initial query vectors, the population gradient and, for the Gaussian surrogate
(``train.surrogate``), the noise direction ``Sigma^(1/2) z``. A step on ``n`` samples then costs
the empirical gradient's ``O(n d)`` with exact sampling, and with the surrogate only the step
itself: its gradient is the population gradient plus the direction over ``sqrt n``, the draw a
``run_one_step`` with ``samples = n`` makes (the same stream, scaled), so each ``n``'s outcome is
the one that run gives.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..configs import OneStepConfig
from ..core.validate import int_at_least, require
from ..metrics.parity import best_assignment, step_sign_error
from ..models.query_heads import QueryHeads
from ..tasks.parity import SparseParity
from .one_step import prepare_replicas
from .parity import (
    apply_step,
    empirical_weights_gradient,
    population_weights_gradient,
    query_gradient,
)
from .surrogate import gradient_covariance, surrogate_noise


@dataclass
class _Batch:
    """One batch of replicas before the step."""

    first: int
    task: SparseParity
    model: QueryHeads
    support: torch.Tensor
    theta: torch.Tensor
    scores: torch.Tensor  # E x 2 x d: the scores at theta
    population: torch.Tensor  # E x 2 x m: the population query gradient
    direction: torch.Tensor | None  # E x 2 x m: the surrogate's noise on one sample


class SampleSteps:
    """One step on ``n`` samples for ``config``'s replicas at any ``n`` (``config.samples`` is
    ignored; ``config.gradient`` says exact sampling or the surrogate). ``outcomes(n)`` gives
    each replica's certified success (SPEC A6) and test success: sign error at most
    ``1 - test_accuracy`` on ``test_samples`` fresh inputs (``metrics.parity.step_sign_error``)."""

    def __init__(self, config: OneStepConfig, test_samples: int, test_accuracy: float) -> None:
        int_at_least("test_samples", test_samples, 1)
        require(0 < test_accuracy <= 1, f"test_accuracy must be in (0, 1], got {test_accuracy}")
        require(not config.streamed(), "steps at many sample sizes need V held, not streamed")
        self.config = config
        self.test_samples = test_samples
        self.test_accuracy = test_accuracy
        surrogate = config.gradient == "surrogate"
        self.batches = []
        size = config.batch_size()
        for first in range(0, config.seeds, size):
            count = min(size, config.seeds - first)
            task, model, support, theta = prepare_replicas(config, first, count, False)
            scores = model.scores(theta)
            grad_of_weights = population_weights_gradient(model, task, support)
            _, population = query_gradient(model, scores, grad_of_weights)
            direction = None
            if surrogate:
                cov = gradient_covariance(model, task, support, scores, population)
                direction = surrogate_noise(cov, 1, config.seed, first).view_as(population)
            self.batches.append(
                _Batch(first, task, model, support, theta, scores, population, direction)
            )

    def _gradient(self, batch: _Batch, samples: int | None) -> torch.Tensor:
        if samples is None:
            return batch.population
        if batch.direction is not None:
            return batch.population + batch.direction / samples**0.5
        weights = empirical_weights_gradient(
            batch.model, batch.task, batch.support, self.config.seed, samples, batch.first
        )
        return query_gradient(batch.model, batch.scores, weights)[1]

    def outcomes(self, samples: int | None) -> dict[str, np.ndarray]:
        """``{"certified": E bools, "test": E bools}`` after one step on ``samples`` samples
        (``None``: the population step)."""
        if samples is not None:
            int_at_least("samples", samples, 1)
        certified, test = [], []
        for batch in self.batches:
            theta = apply_step(batch.theta, self._gradient(batch, samples), self.config.step_size())
            gamma = batch.model.weights(theta)
            bound, _ = best_assignment(gamma, batch.support)
            error = step_sign_error(
                gamma,
                batch.support.cpu(),
                bound,
                self.config.sign,
                self.test_samples,
                self.config.seed,
                batch.first,
            )
            certified.append((bound <= self.config.success_tol).cpu().numpy())
            test.append((error <= 1 - self.test_accuracy + 1e-12).numpy())
        return {"certified": np.concatenate(certified), "test": np.concatenate(test)}
