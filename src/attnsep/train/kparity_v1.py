"""Training of the authors' earlier k-parity model (``models.kparity_v1``), as they describe it.

Adam for up to ``epochs`` epochs on a fixed training set of ``train_fraction * 2^n`` of the
``2^n`` inputs, tested on the rest; defaults ``n = 16``, ``k = 3``. An epoch is one full-batch
Adam step (*choice*: the description fixes neither batch size nor step size; full batch with
``lr = 0.01`` and the squared error to the parity bit are ours). The split and the support of
replica ``e`` are the ones ``train.xor_train`` draws for the same seed, so both models can be
compared on the same data.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch

from ..configs import V1Config
from ..core.validate import require
from ..models import kparity_v1 as v1
from ..tasks.parity import SparseParity
from .descent import Adam, Descent
from .xor_train import cube_split, first_reached


@dataclass
class V1Result:
    """Per replica and epoch (``t = 0``: the initialization): training loss, test accuracy."""

    config: V1Config
    seconds: float
    support: np.ndarray  # E x k
    params: np.ndarray  # E x (T+1) x k x 2
    loss: np.ndarray  # E x (T+1)
    test_accuracy: np.ndarray  # E x (T+1)

    @property
    def epochs_run(self) -> int:
        return self.loss.shape[1] - 1

    def epochs_to_accuracy(self, target: float) -> list[int | None]:
        """Per replica, the first epoch with test accuracy ``>= target`` (``None``: never)."""
        return first_reached(self.test_accuracy >= target)

    def curve(self, epochs: list[int]) -> dict[int, float]:
        """Median test accuracy over replicas at the given epochs (those that were run)."""
        return {
            t: float(np.median(self.test_accuracy[:, t])) for t in epochs if t <= self.epochs_run
        }


def train_v1(config: V1Config, progress=None) -> V1Result:
    """Full-batch Adam on every replica at once; ``progress(epoch, epochs)`` after each."""
    start = time.perf_counter()
    task = SparseParity(config.n, config.k)
    support = task.supports(config.seed, config.seeds)
    x_train, x_test = cube_split(config.n, config.train_fraction, config.seed, config.seeds)
    b_train, b_test = (x_train + 1) / 2, (x_test + 1) / 2
    y_train, y_test = v1.parity_bits(b_train, support), v1.parity_bits(b_test, support)

    def objective(params: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        with torch.enable_grad():
            leaf = params.detach().requires_grad_(True)
            loss = ((v1.forward(leaf, b_train) - y_train) ** 2).mean(dim=1)
            (grad,) = torch.autograd.grad(loss.sum(), leaf)
        return loss.detach(), grad

    def watch(params: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        correct = (v1.forward(params, b_test) > 0.5).double() == y_test
        return params.detach().clone(), correct.double().mean(dim=1)

    def reached(run: Descent) -> bool:
        return config.target is not None and bool((run.trace[-1][1] >= config.target).all())

    params = v1.initial_params(config.seed, config.seeds, config.k)
    run = Descent(objective, params, config.lr, Adam(config.lr), watch)
    tick = None if progress is None else (lambda t: progress(t, config.epochs))
    run.run_to(config.epochs, until=reached, progress=tick)
    require(run.diverged_at is None, f"training diverged at epoch {run.diverged_at}")
    return V1Result(
        config=config,
        seconds=time.perf_counter() - start,
        support=support.numpy().astype("int64"),
        params=torch.stack([p for p, _ in run.trace], dim=1).numpy(),
        loss=torch.stack(run.losses, dim=1).numpy(),
        test_accuracy=torch.stack([a for _, a in run.trace], dim=1).numpy(),
    )
