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
from .memory import one_step_batch, one_step_streamed
from .one_step import prepare_replicas
from .parity import (
    WeightsGradient,
    apply_step,
    blocks_loss_gradient,
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
        require(
            not one_step_streamed(config), "steps at many sample sizes need V held, not streamed"
        )
        self.config = config
        self.test_samples = test_samples
        self.test_accuracy = test_accuracy
        surrogate = config.gradient == "surrogate"
        self.batches = []
        size = one_step_batch(config)
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


class SampleDescent:
    """``steps`` full-batch gradient-descent steps on one fixed set of ``n`` samples per replica
    (SPEC A7.5b, beyond the papers: the paper's "empirically ``O(d)``" concerns trained models),
    for ``config``'s replicas at any ``n`` a search asks. The set is samples ``0 .. n-1`` of the
    streams a one-step run on ``n`` samples draws (nested in ``n``), drawn once and held
    (``n x d`` numbers per replica, one replica at a time), and every step has size
    ``config.step_size() / steps`` (*choice*: the one step's ``eta`` spread over the steps, so the
    total step is the one step's). ``outcomes(None)`` takes the same steps on the population
    gradient. Exact sampling only (``config.gradient``); outcomes as ``SampleSteps``'s. With
    ``steps = 1`` each ``n``'s outcomes are ``SampleSteps``'s."""

    def __init__(
        self, config: OneStepConfig, steps: int, test_samples: int, test_accuracy: float
    ) -> None:
        int_at_least("steps", steps, 1)
        int_at_least("test_samples", test_samples, 1)
        require(0 < test_accuracy <= 1, f"test_accuracy must be in (0, 1], got {test_accuracy}")
        require(config.gradient == "exact-samples", "several steps on n samples draw the samples")
        require(not one_step_streamed(config), "steps on held samples need V held, not streamed")
        self.config, self.steps = config, steps
        self.test_samples, self.test_accuracy = test_samples, test_accuracy
        self.eta = config.step_size() / steps

    def _descend(
        self, e: int, samples: int | None
    ) -> tuple[torch.Tensor, torch.Tensor, QueryHeads]:
        """Replica ``e``'s weights after the steps, its support and model."""
        task, model, support, theta = prepare_replicas(self.config, e, 1, False)
        if samples is None:
            gradient = population_weights_gradient(model, task, support)
        else:
            drawn = task.samples(self.config.seed, support.cpu(), samples, e)
            blocks = [(x.to(theta.device), y.to(theta.device)) for x, y in drawn]
            gradient = held_weights_gradient(model, blocks, samples)
        for _ in range(self.steps):
            theta = apply_step(
                theta, query_gradient(model, model.scores(theta), gradient)[1], self.eta
            )
        return model.weights(theta), support, model

    def outcomes(self, samples: int | None) -> dict[str, np.ndarray]:
        """``{"certified": E bools, "test": E bools}`` after the steps on ``samples`` samples
        (``None``: on the population gradient)."""
        if samples is not None:
            int_at_least("samples", samples, 1)
        certified, test = [], []
        for e in range(self.config.seeds):
            gamma, support, model = self._descend(e, samples)
            bound, _ = best_assignment(gamma, support)
            error = step_sign_error(
                gamma, support.cpu(), bound, model.sign, self.test_samples, self.config.seed, e
            )
            certified.append(bool(bound[0] <= self.config.success_tol))
            test.append(bool(error[0] <= 1 - self.test_accuracy + 1e-12))
        return {"certified": np.array(certified), "test": np.array(test)}


def held_weights_gradient(model: QueryHeads, blocks: list, n: int) -> WeightsGradient:
    """``gamma -> (mean (f - y)^2, its gamma-gradient)`` of one replica over its held sample
    ``blocks`` (``(x, y)`` of ``task.samples``, ``n`` rows in all): ``empirical_weights_gradient``'s
    arithmetic (``blocks_loss_gradient``) without drawing the samples again."""

    def loss_of_weights(gamma: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        total, grad = blocks_loss_gradient(model, gamma[0], blocks)
        return total[None] / n, grad[None] / n

    return loss_of_weights
