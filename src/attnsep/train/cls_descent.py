"""Gradient descent of the CLS transformer and the query-vector model side by side (SPEC A3;
SPEC Part G, item 3).

Both models start from the same state: the query-vector model at ``theta_0`` (SPEC A2's
anti-symmetric init), the CLS block (``models.cls_transformer``) built from it with Haar-random
orthogonal key blocks ``K_h``, so that ``theta_h = K_hᵀ W_Q,h e_cls`` and one step on ``W_Q``
moves ``theta`` exactly as the query-vector step does (``K_hᵀ K_h = I``). Each model then takes
``steps`` gradient steps of size ``eta`` on its own loss by its own autograd:

* ``population``: the exact population loss (SPEC A4's closed form) of each model's attention
  weights; the CLS block's weights come from its full Q/K attention with the structural mask;
* ``cube``: the mean squared error over all ``2^d`` inputs (the population loss by enumeration),
  each model through its own forward (the CLS block's tokens, values and head product).

Three further trajectories measure what a deviation would mean: the *rounding twin*, the
query-vector model started from ``theta_0`` perturbed by one unit in the last place
(relative ``2^-52``, random signs), shows how much this trajectory amplifies float64 rounding;
the *control*, the CLS block trained on ``W_Q`` and ``W_K`` together (a map of the training
step other than SPEC A3's), shows the size of a real mismatch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from ..core.rng import generator, stream_seed
from ..core.validate import require
from ..exact.parity import MAX_ENUMERATION_D, cube, population_loss
from ..models.cls_transformer import ClsTransformer, random_orthogonal
from ..models.query_heads import QueryHeads, initial_queries
from ..tasks.parity import SparseParity
from .parity import apply_step, label_correlation

LOSSES = ("population", "cube")
ULP = 2.0**-52
"""The rounding twin's relative perturbation of ``theta_0``: one unit in the last place."""


@dataclass
class SideBySide:
    """Per step (``steps + 1`` rows: before each step and after the last) and replica
    (columns): losses and the largest absolute deviations of loss and attention weights."""

    loss: np.ndarray  # the query-vector model's loss
    loss_dev: np.ndarray  # |L_cls - L_qv|
    attn_dev: np.ndarray  # max_{h, i} |gamma_cls - gamma_qv|
    twin_dev: np.ndarray  # max(|L_twin - L_qv|, max |gamma_twin - gamma_qv|)
    control_loss_dev: np.ndarray  # as loss_dev, for the CLS block trained on W_Q and W_K
    control_attn_dev: np.ndarray


QvLoss = Callable[[torch.Tensor], torch.Tensor]
ClsLoss = Callable[[ClsTransformer], torch.Tensor]


def objectives(
    model: QueryHeads, task: SparseParity, support: torch.Tensor, loss: str
) -> tuple[QvLoss, ClsLoss]:
    """Per-replica losses of ``theta`` (query-vector model) and of the CLS block (``loss``)."""
    corr = label_correlation(model, task)
    if loss == "population":
        return (
            lambda theta: population_loss(model.weights(theta), support, corr),
            lambda block: population_loss(block.weights(), support, corr),
        )
    x = cube(task.d).expand(support.shape[0], 2**task.d, task.d)
    y = task.labels(x, support)
    return (
        lambda theta: ((model.predict(theta, x) - y) ** 2).mean(dim=1),
        lambda block: ((block(x) - y) ** 2).mean(dim=1),
    )


def gradient(value: torch.Tensor, params: list[torch.Tensor]) -> list[torch.Tensor]:
    """The gradient of the replicas' summed losses (each replica's own: they do not interact)."""
    return list(torch.autograd.grad(value.sum(), params))


def side_by_side(
    seed: int, replicas: int, d: int, m: int, steps: int, eta: float, loss: str = "population"
) -> SideBySide:
    """``steps`` steps of size ``eta`` of both models (and the twin and the control) from one
    draw of embeddings, supports and initial queries (streams of ``seed``)."""
    require(loss in LOSSES, f"loss must be one of {', '.join(LOSSES)}, got {loss!r}")
    require(
        loss != "cube" or d <= MAX_ENUMERATION_D,
        f"the cube loss needs d <= {MAX_ENUMERATION_D}, got d={d}",
    )
    task = SparseParity(d, k=2)
    model = QueryHeads.sample(seed, replicas, d, m)
    support = task.supports(seed, replicas)
    theta = initial_queries(seed, replicas, 2, m)
    signs = torch.randint(0, 2, theta.shape, generator=generator(seed, "twin"))
    twin = theta * (1 + ULP * (2 * signs - 1).to(theta))
    keys = random_orthogonal(stream_seed(seed, "keys"), replicas, 2, m)
    block = ClsTransformer.from_query_heads(model, theta, keys)
    control = ClsTransformer.from_query_heads(model, theta, keys)
    qv_loss, cls_loss = objectives(model, task, support, loss)
    rows: list[list[torch.Tensor]] = []
    with torch.enable_grad():
        for t in range(steps + 1):
            theta, twin = theta.detach().requires_grad_(True), twin.detach().requires_grad_(True)
            values = [qv_loss(theta), qv_loss(twin), cls_loss(block), cls_loss(control)]
            gammas = [model.weights(theta), model.weights(twin), block.weights(), control.weights()]
            rows.append(deviations(values, gammas))
            if t == steps:
                break
            (g_theta,), (g_twin,) = gradient(values[0], [theta]), gradient(values[1], [twin])
            g_block = gradient(values[2], [block.W_Q])
            g_control = gradient(values[3], [control.W_Q, control.W_K])
            with torch.no_grad():
                theta, twin = apply_step(theta, g_theta, eta), apply_step(twin, g_twin, eta)
                block.W_Q.sub_(eta * g_block[0])
                control.W_Q.sub_(eta * g_control[0])
                control.W_K.sub_(eta * g_control[1])
    table = [torch.stack(column).numpy() for column in zip(*rows, strict=True)]
    return SideBySide(*table)


def deviations(values: list[torch.Tensor], gammas: list[torch.Tensor]) -> list[torch.Tensor]:
    """One step's row of ``SideBySide`` from the losses and weights of the query-vector model,
    its twin, the CLS block and the control (in that order)."""
    values = [v.detach() for v in values]
    gammas = [g.detach() for g in gammas]

    def attn(g: torch.Tensor) -> torch.Tensor:
        return (g - gammas[0]).abs().amax(dim=(1, 2))

    twin = torch.maximum((values[1] - values[0]).abs(), attn(gammas[1]))
    return [
        values[0],
        (values[2] - values[0]).abs(),
        attn(gammas[2]),
        twin,
        (values[3] - values[0]).abs(),
        attn(gammas[3]),
    ]
