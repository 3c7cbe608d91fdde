"""Attention maps ``sigma``: scores ``s = V theta`` (last axis, length ``d``) to weights (SPEC A2).

Each map is one function registered by name; ``softmax`` is the exact map of the papers,
``linear`` and ``erf`` are the component-wise substitutes they compare against, and
``normalized-erf`` and ``shifted-erf`` normalized substitutes with bounded tails (SPEC Part D,
A7.3).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from .validate import one_of

AttentionMap = Callable[[torch.Tensor], torch.Tensor]
ATTENTION: dict[str, AttentionMap] = {}


def register(name: str) -> Callable[[AttentionMap], AttentionMap]:
    """Decorator adding an attention map to the registry under ``name``."""

    def add(fn: AttentionMap) -> AttentionMap:
        ATTENTION[name] = fn
        return fn

    return add


def get(name: str) -> AttentionMap:
    """The attention map registered as ``name``."""
    return ATTENTION[one_of("attention", name, sorted(ATTENTION))]


@register("softmax")
def softmax(scores: torch.Tensor) -> torch.Tensor:
    """``exp(s_i) / sum_j exp(s_j)``, computed stably (max subtracted)."""
    return torch.softmax(scores, dim=-1)


@register("linear")
def linear(scores: torch.Tensor) -> torch.Tensor:
    """``s_i / d`` (SPEC A2 choice)."""
    return scores / scores.shape[-1]


@register("erf")
def erf(scores: torch.Tensor) -> torch.Tensor:
    """``erf(s_i) / d`` (SPEC A2 choice)."""
    return torch.erf(scores) / scores.shape[-1]


@register("sigmoid")
def sigmoid(scores: torch.Tensor) -> torch.Tensor:
    """``sigmoid(s_i) / d``: a bounded component-wise map, not normalized across positions."""
    return torch.sigmoid(scores) / scores.shape[-1]


@register("normalized-erf")
def normalized_erf(scores: torch.Tensor) -> torch.Tensor:
    """``(1 + erf(s_i)) / sum_j (1 + erf(s_j))`` (SPEC D, A7.3): normalized like softmax, with
    bounded tails. Since ``1 + erf(s) = 2 Phi(sqrt(2) s)``, it is the softmax of
    ``log Phi(sqrt(2) s)``, which stays finite where ``1 + erf(s)`` underflows to 0."""
    return torch.softmax(torch.special.log_ndtr(scores * 2**0.5), dim=-1)


@register("shifted-erf")
def shifted_erf(scores: torch.Tensor) -> torch.Tensor:
    """``(1 + erf(s_i − max s)) / sum_j (1 + erf(s_j − max s))``: the normalized erf made
    shift-invariant like softmax. ``normalized-erf`` cannot put more than about ``2/d`` on one
    position when ``s = V theta`` (about half the scores are positive, and ``1 + erf`` saturates at
    2); this one can represent ``e_i``, so A7.3 is not decided by expressivity alone."""
    top = scores.max(dim=-1, keepdim=True).values
    return normalized_erf(scores - top)
