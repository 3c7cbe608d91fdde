"""The loss of a fixed positional encoding that sees nothing beyond its training length
(SPEC Part G, item B5.6): a reference line for fixed PE out of distribution.

A fixed PE trained at length ``T`` moves ``W`` only on the span of its first ``T`` rows (the
gradient of ``a_i = p_iᵀ W u_y`` is a sum of ``p_i u_yᵀ`` over trained rows). Its limit, once it
fits (``W = α Π`` with ``Π`` the projector on the trained rows, orthonormal, ``α → ∞``), puts
logit ``α`` on the subset's members among the first ``T`` positions and ``0`` on every other
position, trained or not, as long as the untrained rows are orthogonal to the trained ones
(``m_p ≫ T``; at finite ``m_p`` an untrained row keeps ``≈ T / m_p`` of its norm in the trained
span, so the measured loss sits below this line). At length ``T' ≥ T`` the number ``k`` of the
``q`` members among the first ``T`` positions is hypergeometric; the output is the mean of those
``k`` tokens, whose squared error against the mean of all ``q`` is ``d (1/k − 1/q)``, and with
``k = 0`` the attention is uniform over the ``T'`` tokens: ``d (T' − q) / (q T')`` (SPEC B4).
Exact rational arithmetic; plain Python.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb

from ..core.validate import int_at_least, require
from .selection_bounds import uniform_attention_loss


def members_law(T: int, length: int, q: int) -> list[Fraction]:
    """``P(k)`` for ``k = 0..q``: of a uniform ``q``-subset of ``length`` positions, ``k`` lie among
    the first ``T`` (hypergeometric)."""
    int_at_least("T", T, 1)
    int_at_least("q", q, 1)
    require(q <= T <= length, f"need q <= T <= T', got q={q}, T={T}, T'={length}")
    total = comb(length, q)
    return [Fraction(comb(T, k) * comb(length - T, q - k), total) for k in range(q + 1)]


def blind_fixed_pe_loss(T: int, length: int, q: int, d: int = 1) -> Fraction:
    """``E‖f − STS‖²`` at length ``T'`` (``length``) of the fitted fixed PE's limit (module
    docstring): ``Σ_k P(k) · d (1/k − 1/q)`` over ``k ≥ 1``, plus ``P(0) · d (T' − q) / (q T')``.
    ``0`` at ``T' = T``."""
    int_at_least("d", d, 1)
    law = members_law(T, length, q)
    seen = sum((p * d * (Fraction(1, k) - Fraction(1, q)) for k, p in enumerate(law) if k), 0)
    return Fraction(seen) + law[0] * uniform_attention_loss(length, q, d)


def blind_ratio(T: int, length: int, q: int) -> float:
    """:func:`blind_fixed_pe_loss` over uniform attention's loss at ``T'`` (``d`` cancels)."""
    return float(blind_fixed_pe_loss(T, length, q) / uniform_attention_loss(length, q))
