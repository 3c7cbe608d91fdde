"""Closed forms and the exact-over-tokens loss for sparse token selection (SPEC B3, B4).

Losses are ``E‖f − STS‖²`` summed over the ``d`` coordinates; ``d = 1`` reads as "per
coordinate". The rational ones are returned as exact :class:`fractions.Fraction`.
"""

from __future__ import annotations

import math
from fractions import Fraction

import torch

from ..models.selector import position_logits
from ..tasks.selection import subset_mask
from ..validate import int_at_least, require


def _sizes(T: int, q: int, d: int) -> None:
    int_at_least("T", T, 1)
    int_at_least("q", q, 1)
    int_at_least("d", d, 1)
    require(q <= T, f"q must be <= T (q={q}, T={T})")


def uniform_attention_loss(T: int, q: int, d: int = 1) -> Fraction:
    """``W = 0`` (``s_i = 1/T``): ``L_0 = d (T − q) / (q T)`` (SPEC B4)."""
    _sizes(T, q, d)
    return Fraction(d * (T - q), q * T)


def zero_predictor_loss(q: int, d: int = 1) -> Fraction:
    """Predicting ``0``: ``E‖STS‖² = d / q`` (SPEC B4)."""
    int_at_least("q", q, 1)
    int_at_least("d", d, 1)
    return Fraction(d, q)


def orthonormal_loss(alpha: float, T: int, q: int, d: int = 1) -> float:
    """``L_T(α) = d T (T − q) / (q (q e^α + T − q)²)`` (SPEC B4).

    Orthonormal encodings and ``W = αI`` give logits ``α`` on ``y`` and ``0`` off it. For
    ``α ≥ 0`` it is evaluated as ``d T (T−q) e^{−2α} / (q (q + (T−q) e^{−α})²)`` (no overflow).
    """
    _sizes(T, q, d)
    require(math.isfinite(alpha), f"alpha must be finite, got {alpha!r}")
    if alpha >= 0:
        shrink = math.exp(-alpha)
        return d * T * (T - q) * shrink**2 / (q * (q + (T - q) * shrink) ** 2)
    return d * T * (T - q) / (q * (q * math.exp(alpha) + T - q) ** 2)


def fcn_loss_floor(T: int, q: int, d: int | None = None, width: int | None = None) -> Fraction:
    """FCN lower bound (SPEC B4).

    Without ``width``: ``(T − q) / (q T (T − 1))``, valid for any first-layer width
    ``≤ Td − 1``. With ``d`` and ``width = w``: ``(Td − w)(T − q) / (q T (T − 1))``. For
    ``w ≥ Td`` it returns ``0``: the first layer can then be injective on ``vec X`` and
    there is no obstruction (the width form is ``0`` at ``w = Td`` already).
    """
    _sizes(T, q, 1 if d is None else d)
    unit = Fraction(T - q, q * T * (T - 1)) if T > 1 else Fraction(0)
    if width is None:
        return unit
    require(d is not None, "the width form of the FCN floor needs d as well as width")
    int_at_least("width", width, 0)
    return max(T * d - width, 0) * unit  # type: ignore[operator]


def fcn_bottleneck_loss(T: int, q: int, d: int, width: int) -> Fraction:
    """Least loss of any predictor that sees ``y`` and ``width`` linear functionals of ``vec X``.

    ``E‖STS − E[STS | A vec X, y]‖² = tr((I − Π_A) M)`` with ``M = E_y[B_yᵀ B_y]``; ``M`` has
    eigenvalue ``(T − q)/(qT(T − 1))`` (multiplicity ``(T − 1)d``) and ``1/T`` (multiplicity
    ``d``), so the least loss sums the ``Td − width`` smallest. Equals :func:`fcn_loss_floor`
    for ``d ≤ width ≤ Td`` and exceeds it below ``d``.
    """
    _sizes(T, q, d)
    int_at_least("width", width, 0)
    dropped = max(T * d - width, 0)
    small = min(dropped, (T - 1) * d)
    return small * fcn_loss_floor(T, q) + (dropped - small) * Fraction(1, T)


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
