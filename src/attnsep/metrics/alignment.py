"""How the first gradient step moves the attention scores: relevant against ambient (SPEC A7.4).

The step ``theta_h' = theta_h - eta g_h`` moves head ``h``'s scores by
``Delta s_h = V (theta_h' - theta_h) = -eta V g_h`` (``E x H x d``). The paper's mechanism is that
this change is far larger at the support positions ``i*, j*`` than at any ambient one (SPEC Part
E, A7.4): per head, the *signed* change at its own support bit (``own_bits``) over the largest
absolute change at a position outside the support (``signed_ratio``); the change itself is
``train.parity.score_change``.
"""

from __future__ import annotations

import itertools

import torch

from .parity import support_mass


def own_bits(scores: torch.Tensor, support: torch.Tensor) -> torch.Tensor:
    """Each head's own support bit, from the scores *before* the step: ``E x H`` positions.

    The one-to-one assignment of heads to support bits with the largest sum of the heads'
    initial scores on their bits; the softmax normalizers do not depend on the assignment, so it
    is also the one with the largest product of initial weights. Under the anti-symmetric init
    (``theta_2 = -theta_1``, ``s_2 = -s_1``) it gives each head the support bit its own initial
    score favours; under the independent init, where both heads may favour the same bit, it
    keeps the bits distinct, as specialization does. Needs as many heads as support bits.
    """
    at = support_mass(scores, support)  # E x H x k: the heads' initial scores on the support
    heads = at.shape[1]
    perms = torch.tensor(list(itertools.permutations(range(heads))), device=at.device)
    rows = torch.arange(heads, device=at.device)
    totals = torch.stack([at[:, rows, perm].sum(dim=1) for perm in perms])  # P x E
    best = perms[totals.argmax(dim=0)]  # E x H: support column of each head
    return support.to(at.device).gather(1, best)


def ambient_change(change: torch.Tensor, support: torch.Tensor) -> torch.Tensor:
    """``max_{a not in S} |Delta s_h,a|`` per replica and head (``E x H``)."""
    idx = support[:, None, :].expand(change.shape[0], change.shape[1], support.shape[1])
    return change.abs().scatter(2, idx.to(change.device), 0.0).max(dim=2).values


def signed_ratio(change: torch.Tensor, support: torch.Tensor, own: torch.Tensor) -> torch.Tensor:
    """Per replica and head (``E x H``): ``Delta s_h`` at the head's own bit ``own`` (signed:
    negative when the step lowers that score) over ``ambient_change``."""
    relevant = change.gather(2, own[:, :, None].to(change.device)).squeeze(2)
    return relevant / ambient_change(change, support)
