"""Many steps of an update rule on all replicas at once (SPEC A5, repeated; A7.3).

``Descent`` evaluates an objective (``theta -> (loss, grad)``, per replica, as in
``train.parity``) after every step, keeps the losses, and stops at the first non-finite value.
The update rule is plain gradient steps (``eta`` a number, or one per replica) or ``Adam``,
whose state is per coordinate, so replicas stay independent in one batched tensor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from .parity import Objective

Rule = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
"""``(theta, grad) -> next theta``."""


class GradientStep:
    """``theta - eta * grad``; ``eta`` a number or a tensor broadcast against ``theta``."""

    def __init__(self, eta: float | torch.Tensor) -> None:
        self.eta = eta

    def __call__(self, theta: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
        return theta - self.eta * grad


class Adam:
    """Adam (Kingma & Ba) with bias correction; ``lr`` a number or a tensor broadcast against
    ``theta``. Every coordinate has its own moments, so each replica trains as if alone."""

    def __init__(
        self,
        lr: float | torch.Tensor,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
    ) -> None:
        self.lr, self.betas, self.eps = lr, betas, eps
        self.count = 0
        self.first: torch.Tensor | None = None
        self.second: torch.Tensor | None = None

    def __call__(self, theta: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
        b1, b2 = self.betas
        if self.first is None or self.second is None:
            self.first, self.second = torch.zeros_like(grad), torch.zeros_like(grad)
        self.count += 1
        self.first = b1 * self.first + (1 - b1) * grad
        self.second = b2 * self.second + (1 - b2) * grad * grad
        scale = (1 - b2**self.count) ** 0.5
        denom = self.second.sqrt() / scale + self.eps
        return theta - (self.lr / (1 - b1**self.count)) * self.first / denom


class Descent:
    """An update rule (default: gradient steps of size ``eta``) on all replicas, extendable,
    stopping at the first non-finite loss, gradient or parameter.

    ``losses[t]`` is the objective after ``t`` steps (``t = 0`` is the initialization);
    ``watch(theta)``, when given, is called at the same points and its results kept in
    ``trace``. ``after_one`` holds the parameters after the first step."""

    def __init__(
        self,
        objective: Objective,
        theta: torch.Tensor,
        eta: float | torch.Tensor,
        rule: Rule | None = None,
        watch: Callable[[torch.Tensor], Any] | None = None,
    ) -> None:
        self.objective, self.theta, self.eta = objective, theta, eta
        self.rule = GradientStep(eta) if rule is None else rule
        self.watch = watch
        self.losses: list[torch.Tensor] = []
        self.trace: list[Any] = []
        self.after_one: torch.Tensor | None = None
        self.diverged_at: int | None = None
        self._grad: torch.Tensor | None = None
        self._evaluate()

    def _evaluate(self) -> None:
        loss, grad = self.objective(self.theta)
        if not (torch.isfinite(loss).all() and torch.isfinite(grad).all()):
            self.diverged_at = len(self.losses)
            return
        self.losses.append(loss.cpu())
        self._grad = grad
        if self.watch is not None:
            self.trace.append(self.watch(self.theta))

    @property
    def steps(self) -> int:
        return len(self.losses) - 1

    def run_to(
        self,
        steps: int,
        until: Callable[[Descent], bool] | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        """Step until ``steps`` steps are done, a value is non-finite, or ``until(self)`` holds
        (checked before each step); ``progress(steps done)`` after each step."""
        while self.diverged_at is None and self.steps < steps:
            if until is not None and until(self):
                return
            assert self._grad is not None  # set by every evaluation that did not diverge
            stepped = self.rule(self.theta, self._grad)
            if not torch.isfinite(stepped).all():
                self.diverged_at = len(self.losses)
                return
            self.theta = stepped
            self.after_one = stepped if self.after_one is None else self.after_one
            self._evaluate()
            if progress is not None:
                progress(self.steps)

    def steps_to(self, target: float) -> list[int | None]:
        """Per replica, the first step count with loss <= ``target`` (``None``: not reached)."""
        reached = torch.stack(self.losses) <= target  # steps x E
        first = reached.double().argmax(dim=0)
        return [int(t) if reached[t, e] else None for e, t in enumerate(first.tolist())]
