"""Gradient steps for the query-vector model on sparse parity (SPEC A4 gradients, A5 steps).

An *objective* maps ``theta`` (``E x H x m``) to ``(loss, grad)``, both per replica. Two are
provided: the exact population loss (autograd through the closed form, ``sigma`` and ``V``)
and the empirical loss on ``n`` samples, streamed in blocks so ``n x d`` is never held at once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import torch

from .. import attention
from ..core.validate import require
from ..exact.parity import population_loss
from ..models.query_heads import QueryHeads
from ..tasks.parity import SparseParity

Objective = Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]


def label_correlation(model: QueryHeads, task: SparseParity) -> float:
    """``s_model * s_task * (1 - 2 noise)``: the weight of the cross term in the loss."""
    return model.sign * task.sign * (1 - 2 * task.noise)


WeightsGradient = Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]
"""``gamma -> (loss, d loss / d gamma)``, per replica."""


def query_gradient(
    model: QueryHeads, scores: torch.Tensor, loss_of_weights: WeightsGradient
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(loss, d loss / d theta)`` at the scores ``s = V theta``.

    The chain rule runs by autograd through ``sigma`` only (``E x H x d``); the last factor
    ``d s / d theta = V`` is one back-projection, so ``V`` is never part of a graph and may be
    streamed.
    """
    with torch.enable_grad():
        leaf = scores.detach().requires_grad_(True)
        gamma = attention.get(model.attention)(leaf)
        loss, grad_gamma = loss_of_weights(gamma.detach())
        (grad_scores,) = torch.autograd.grad(gamma, leaf, grad_outputs=grad_gamma)
    return loss.detach(), model.backproject(grad_scores)


def population_weights_gradient(
    model: QueryHeads, task: SparseParity, support: torch.Tensor
) -> WeightsGradient:
    """``gamma -> (L, dL/dgamma)`` for the exact population loss (SPEC A4), by autograd."""
    corr = label_correlation(model, task)
    return autograd_weights_gradient(
        lambda gamma: population_loss(gamma, support.to(gamma.device), corr)
    )


def score_change(
    model: QueryHeads, theta: torch.Tensor, task: SparseParity, support: torch.Tensor
) -> torch.Tensor:
    """``V g_h`` for the exact population gradient ``g_h = dL/dtheta_h`` at ``theta`` (SPEC A4):
    ``E x H x d``, the scores' change per unit step (with the opposite sign)."""
    weights_grad = population_weights_gradient(model, task, support)
    _, grad = query_gradient(model, model.scores(theta), weights_grad)
    return model.scores(grad)


def autograd_weights_gradient(loss_of: Callable[[torch.Tensor], torch.Tensor]) -> WeightsGradient:
    """``gamma -> (loss, d loss / d gamma)`` per replica, by autograd on ``loss_of``."""

    def both(gamma: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        with torch.enable_grad():
            gamma = gamma.detach().requires_grad_(True)
            loss = loss_of(gamma)
            (grad,) = torch.autograd.grad(loss.sum(), gamma)
        return loss.detach(), grad

    return both


def population_objective(model: QueryHeads, task: SparseParity, support: torch.Tensor) -> Objective:
    """Exact population loss and gradient (SPEC A4)."""
    weights_grad = population_weights_gradient(model, task, support)
    return lambda theta: query_gradient(model, model.scores(theta), weights_grad)


def empirical_weights_gradient(
    model: QueryHeads,
    task: SparseParity,
    support: torch.Tensor,
    seed: int,
    n: int,
    first_replica: int = 0,
) -> WeightsGradient:
    """``gamma -> (mean (f - y)^2, its gamma-gradient)`` over ``n`` streamed samples (SPEC A4).

    Replica by replica and block by block, so each block's ``x`` stays in the cache for both of
    its products (``x gamma^T`` and ``coef^T x``), and a replica's result never depends on the
    batch it is in.
    """
    support = support.cpu()

    def loss_of_weights(gamma: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        total = torch.zeros(gamma.shape[0], dtype=gamma.dtype, device=gamma.device)
        grad = torch.zeros_like(gamma)
        for e, weights in enumerate(gamma):
            blocks = task.samples(seed, support[e : e + 1], n, first_replica + e)
            total[e], grad[e] = blocks_loss_gradient(model, weights, blocks)
        return total / n, grad / n

    return loss_of_weights


def blocks_loss_gradient(
    model: QueryHeads, weights: torch.Tensor, blocks: Iterable[tuple[torch.Tensor, torch.Tensor]]
) -> tuple[torch.Tensor, torch.Tensor]:
    """One replica's summed squared error ``sum (f - y)^2`` over its sample ``blocks`` (``(x, y)``
    of ``task.samples``, one replica each) and its gradient in the weights ``weights`` (``H x
    d``); each block's ``x`` serves both of its products (``x gamma^T`` and ``coef^T x``)."""
    total = torch.zeros((), dtype=weights.dtype, device=weights.device)
    grad = torch.zeros_like(weights)
    for x, y in blocks:
        x, y = x[0].to(weights.device, weights.dtype), y[0].to(weights.device, weights.dtype)
        proj = x @ weights.T  # rows x H
        residual = model.sign * proj.prod(dim=1) - y
        total += residual @ residual
        coef = (2 * model.sign) * residual[:, None] * other_heads(proj)
        grad += coef.T @ x
    return total, grad


def other_heads(proj: torch.Tensor) -> torch.Tensor:
    """``rows x H``: entry ``h`` is the product of the other heads' projections (``d f / d proj_h``
    up to the sign), without dividing by ``proj_h``."""
    if proj.shape[1] == 2:  # sparse XOR: one op
        return proj.flip(1)
    ones = proj.new_ones(proj.shape[0], 1)
    before = torch.cat([ones, proj[:, :-1]], dim=1).cumprod(dim=1)
    after = torch.cat([proj[:, 1:], ones], dim=1).flip(1).cumprod(dim=1).flip(1)
    return before * after


def empirical_objective(
    model: QueryHeads,
    task: SparseParity,
    support: torch.Tensor,
    seed: int,
    n: int,
    first_replica: int = 0,
) -> Objective:
    """Empirical loss and gradient on ``n`` fresh samples per replica, streamed (SPEC A4)."""
    weights_grad = empirical_weights_gradient(model, task, support, seed, n, first_replica)
    return lambda theta: query_gradient(model, model.scores(theta), weights_grad)


def apply_step(theta: torch.Tensor, grad: torch.Tensor, eta: float) -> torch.Tensor:
    """``theta - eta * grad``, refusing a non-finite result (SPEC A5)."""
    require(math.isfinite(eta) and eta > 0, f"eta must be a finite number > 0, got {eta!r}")
    stepped = theta - eta * grad
    require(
        bool(torch.isfinite(stepped).all()),
        f"the step with eta={eta:g} produced non-finite query vectors; "
        "use a smaller eta or float64",
    )
    return stepped


def gradient_step(
    objective: Objective, theta: torch.Tensor, eta: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """``theta - eta * grad`` and the loss before the step (SPEC A5)."""
    loss, grad = objective(theta)
    return apply_step(theta, grad, eta), loss


def gradient_descent(
    objective: Objective, theta: torch.Tensor, eta: float, steps: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """``steps`` full-batch steps: final ``theta``, the loss before each step (``steps x E``)."""
    history = []
    for _ in range(steps):
        theta, loss = gradient_step(objective, theta, eta)
        history.append(loss)
    return theta, torch.stack(history)
