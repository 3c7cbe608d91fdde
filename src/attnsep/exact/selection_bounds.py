"""Closed forms for sparse token selection: the FCN floor and the reference losses (SPEC B4).

Losses are ``E‖f − STS‖²`` summed over the ``d`` coordinates; ``d = 1`` reads as "per
coordinate". The rational ones are exact :class:`fractions.Fraction`. Plain Python: no torch,
so ``attnsep select bound`` answers at once.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from ..core.validate import int_at_least, require


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
    if d is None:
        raise ValueError("the width form of the FCN floor needs d as well as width")
    int_at_least("width", width, 0)
    return max(T * d - width, 0) * unit


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


def selection_bounds_report(
    T: int, q: int, d: int | None = None, width: int | None = None
) -> dict[str, Any]:
    """The FCN floor (:func:`fcn_loss_floor`) and the losses of uniform attention and of
    predicting zero, each as a float and as its exact fraction (SPEC B4).

    ``d = None`` gives the floor without a width and the reference losses per coordinate
    (``d = 1``); with ``d``, the references are summed over ``d`` coordinates and ``width``
    (which needs ``d``) gives the width form of the floor.
    """
    dims = 1 if d is None else d
    floor = fcn_loss_floor(T, q, d, width)
    uniform, zero = uniform_attention_loss(T, q, dims), zero_predictor_loss(q, dims)
    return {
        "T": T,
        "q": q,
        "d": dims,
        "width": width,
        "per_coordinate": d is None,
        "fcn_loss_floor": float(floor),
        "fcn_loss_floor_fraction": str(floor),
        "fcn_loss_floor_form": "(T-q)/(qT(T-1)), any first-layer width <= Td-1"
        if width is None
        else "(Td-w)(T-q)/(qT(T-1)), 0 once w >= Td",
        "uniform_attention_loss": float(uniform),
        "uniform_attention_loss_fraction": str(uniform),
        "zero_predictor_loss": float(zero),
        "zero_predictor_loss_fraction": str(zero),
        "reference_losses": "per coordinate (d=1)"
        if d is None
        else f"summed over d={d} coordinates",
    }
