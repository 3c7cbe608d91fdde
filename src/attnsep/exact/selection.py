"""The exact-over-tokens loss for sparse token selection (SPEC B3).

Losses are ``E‖f − STS‖²`` summed over the ``d`` coordinates. The closed forms of SPEC B4 are
in :mod:`attnsep.exact.selection_bounds` (no torch).
"""

from __future__ import annotations

import math

import torch

from ..core.validate import require
from ..models.selector import position_logits
from ..tasks.selection import subset_mask


def depends_on_tokens(W: torch.Tensor, m_p: int) -> torch.Tensor:
    """Per replica: does the content-row block ``W[:d, d:]`` make the logits depend on ``X``?"""
    d = W.shape[-1] - m_p
    return W[:, :d, d:].ne(0).flatten(1).any(dim=1)


def per_sequence_loss(
    W: torch.Tensor, P: torch.Tensor, y: torch.Tensor, *, ignore_content: bool = False
) -> torch.Tensor:
    """``d Σ_i (s_i − 1{i∈y}/q)²`` per sequence, ``E x B`` (SPEC B3): exact over the tokens.

    Applies only when the logits do not depend on ``X``; a nonzero content-row block is a
    ``ValueError`` unless ``ignore_content`` (then only the position block is used). When the
    content block matters, the loss has no such form: use plain Monte Carlo instead.
    """
    m_p = P.shape[-1]
    d = W.shape[-1] - m_p
    require(d >= 1, f"W is {tuple(W.shape)}, too small for m_p={m_p}")
    if not ignore_content:
        bad = depends_on_tokens(W, m_p)
        require(
            not bool(bad.any()),
            f"logits depend on the tokens in replicas {bad.nonzero().flatten().tolist()} "
            "(content block of W nonzero): the exact-over-tokens loss does not apply",
        )
    s = torch.softmax(position_logits(W[:, d:, d:], P, y), dim=-1)
    gap = s - subset_mask(y, P.shape[-2]).to(s) / y.shape[-1]
    return d * gap.pow(2).sum(dim=-1)


def mean_stderr(values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and standard error over the last axis (needs at least 2 samples)."""
    n = values.shape[-1]
    require(n >= 2, f"a standard error needs at least 2 samples, got {n}")
    return values.mean(dim=-1), values.std(dim=-1) / math.sqrt(n)


def exact_loss(
    W: torch.Tensor, P: torch.Tensor, y: torch.Tensor, *, ignore_content: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """Exact over tokens, Monte Carlo over ``(y, PE)``: per-replica mean and standard error."""
    return mean_stderr(per_sequence_loss(W, P, y, ignore_content=ignore_content))
