"""One head instead of two on sparse XOR (SPEC A7.10; SPEC Part G, item 8): the two-head
query-vector model beside two one-head ablations, on the same replicas.

* ``two``: SPEC A2's model, ``f = -(g.x)(h.x)``, ``theta_2 = -theta_1`` at the start;
* ``tied``: one head used twice (``theta_1 = theta_2 = theta``), ``f = -(g.x)^2``; its population
  loss is SPEC A4's with ``h = g``: ``3|g|^4 - 2 sum_a g_a^4 - 4 g_i g_j + 1``;
* ``one``: the product model with ``H = 1``, ``f = -(g.x)``; ``E[(g.x) x_i x_j] = 0`` (odd
  moments vanish), so the label term has no gradient and the loss is ``|g|^2 + 1 >= 1``: the
  step only pulls ``g`` towards uniform.

All three start from SPEC A2's ``theta_1`` of the replica, take one population step with SPEC A5's
``eta`` and then ``budget - 1`` further steps of gradient descent, each shortened so that no score
moves by more than ``cap`` (``train.capped_descent``'s rule; the first step is not capped, so
that the two-head model's state after it is SPEC A7.1's one-step result).

The tied head's best loss over all attention weights is ``1/2``, at ``g = (e_i + e_j)/2``:
writing ``p = g_i``, ``q = g_j``, the rest's mass spread, the loss is at least
``s^4 - 4 s^2 t + 8 t^2 - 4t + 1`` with ``s = p + q <= 1``, ``t = pq <= s^2/4``, smallest at
``s = 1``, ``t = 1/4`` (``tied_best_loss``). One head's best is ``1 + 1/d`` (uniform weights).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..exact.parity import population_loss
from ..metrics.parity import best_assignment
from ..models.query_heads import QueryHeads, initial_queries
from ..tasks.parity import SparseParity
from .parity import label_correlation

ARMS = ("two", "tied", "one")
TIED_BEST_LOSS = 0.5


def tied_best_loss(p: float, q: float) -> float:
    """The tied head's population loss at ``g_i = p``, ``g_j = q`` and no other mass (the
    infimum over the rest's spread as ``d`` grows): ``p^4 + q^4 + 6 p^2 q^2 - 4 p q + 1``."""
    return p**4 + q**4 + 6 * p**2 * q**2 - 4 * p * q + 1


def weights(model: QueryHeads, theta: torch.Tensor, arm: str) -> torch.Tensor:
    """The heads' weights as the product model uses them: the tied head twice."""
    gamma = model.weights(theta)
    return torch.cat([gamma, gamma], dim=1) if arm == "tied" else gamma


def loss(model: QueryHeads, theta: torch.Tensor, support: torch.Tensor, arm: str) -> torch.Tensor:
    """Exact population loss per replica (SPEC A4's moment expansion; ``H = 1`` included)."""
    corr = label_correlation(model, SparseParity(model.d, k=2))
    return population_loss(weights(model, theta, arm), support, corr)


def start(model: QueryHeads, seed: int, arm: str) -> torch.Tensor:
    """SPEC A2's initial queries of the replicas (anti-symmetric pair); one head keeps the first."""
    theta = initial_queries(seed, model.V.shape[0], 2, model.m)
    return theta if arm == "two" else theta[:, :1].clone()


@dataclass
class ArmRun:
    """Per replica: the loss at the start, after the first step and after the budget; the
    certified error bound (SPEC A6; ``inf`` for one head, which has none) after the first step
    and after the budget."""

    loss0: np.ndarray
    loss1: np.ndarray
    loss_final: np.ndarray
    bound1: np.ndarray
    bound_final: np.ndarray
    on_support1: np.ndarray  # the first head's largest weight is on a support bit (bool)


def certified(model: QueryHeads, theta: torch.Tensor, support: torch.Tensor, arm: str):
    """SPEC A6's bound for the two heads (the tied head as two equal heads); ``inf`` for one."""
    if arm == "one":
        return np.full(theta.shape[0], np.inf)
    return best_assignment(weights(model, theta, arm), support)[0].numpy()


def descend(
    model: QueryHeads,
    support: torch.Tensor,
    theta: torch.Tensor,
    arm: str,
    eta: float,
    budget: int,
    cap: float,
) -> ArmRun:
    """One step of size ``eta``, then capped steps (module docstring), ``budget >= 1`` in all."""
    losses, bounds, on_support = [], [], np.zeros(0, dtype=bool)
    for t in range(budget + 1):
        with torch.enable_grad():
            leaf = theta.detach().requires_grad_(True)
            value = loss(model, leaf, support, arm)
            (grad,) = torch.autograd.grad(value.sum(), leaf)
        losses.append(value.detach().numpy())
        if t == 1:
            bounds.append(certified(model, theta, support, arm))
            top = model.weights(theta)[:, 0].argmax(dim=1)
            on_support = (top[:, None] == support).any(dim=1).numpy()
        if t == budget:
            break
        step = torch.full((theta.shape[0], 1, 1), eta, dtype=theta.dtype)
        if t > 0:
            move = model.scores(grad).abs().amax(dim=(1, 2))  # the largest score change per eta
            step = torch.minimum(step, (cap / move.clamp_min(1e-300))[:, None, None])
        theta = theta.detach() - step * grad
    bounds.append(certified(model, theta, support, arm))
    return ArmRun(losses[0], losses[1], losses[-1], bounds[0], bounds[-1], on_support)


def run_arms(
    seed: int, replicas: int, d: int, m: int, eta: float, budget: int, cap: float
) -> dict[str, ArmRun]:
    """Every arm of ``ARMS`` on the same replicas (embeddings, supports, ``theta_1``)."""
    model = QueryHeads.sample(seed, replicas, d, m)
    support = SparseParity(d, k=2).supports(seed, replicas)
    return {
        arm: descend(model, support, start(model, seed, arm), arm, eta, budget, cap) for arm in ARMS
    }
