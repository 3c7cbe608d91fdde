"""How the first population gradient aligns with the support positions (SPEC A7.4).

The step ``theta_h <- theta_h - eta g_h`` moves the scores by ``-eta V g_h``: the vector
``V g_h`` (``E x H x d``) says how much each position's score changes. The paper's mechanism is
that this change is far larger at the support positions ``i*, j*`` than at any ambient one.
"""

from __future__ import annotations

import torch

from ..models.query_heads import QueryHeads
from ..tasks.parity import SparseParity
from ..train.parity import population_weights_gradient, query_gradient
from .parity import support_mass


def score_change(
    model: QueryHeads, theta: torch.Tensor, task: SparseParity, support: torch.Tensor
) -> torch.Tensor:
    """``V g_h`` for the exact population gradient ``g_h = dL/dtheta_h`` at ``theta`` (SPEC A4):
    ``E x H x d``, the scores' change per unit step (with the opposite sign)."""
    weights_grad = population_weights_gradient(model, task, support)
    _, grad = query_gradient(model, model.scores(theta), weights_grad)
    return model.scores(grad)


def alignment_ratio(change: torch.Tensor, support: torch.Tensor) -> torch.Tensor:
    """Per replica and head (``E x H``): relevant / ambient, where relevant is
    ``min_{a in S} |change_a|`` and ambient is ``max_{a not in S} |change_a|``."""
    size = change.abs()
    relevant = support_mass(size, support).min(dim=2).values
    idx = support[:, None, :].expand(size.shape[0], size.shape[1], support.shape[1])
    ambient = size.scatter(2, idx.to(size.device), 0.0).max(dim=2).values
    return relevant / ambient
