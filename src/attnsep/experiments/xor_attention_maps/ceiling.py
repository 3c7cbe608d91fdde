"""The expressivity ceiling of an attention map (SPEC Parts E-F, A7.3): the largest weight a map
can put on one position of a run's own embeddings, beside the weight that population loss <=
``target`` needs. A map whose ceiling is well below it fails by expressivity, not learning.

The weight is counted per unit of total weight: ``|gamma_i| / max(1, ||gamma||_1)``. For a
probability map (softmax) it is the weight itself; for a map whose scale is free (linear: ``theta``
scales ``gamma``) it is the l1 share ``|gamma_i| / ||gamma||_1``; for a map whose weights stay
small (erf: ``|gamma_i| = |erf(s_i)| / d <= 1 / d``) it is that small weight, at every ``m``.

At ``m >= d`` the rows of ``V`` span ``R^d``, so ``theta = V^+ u`` gives the scores ``s = u``
exactly, for any ``u``: the starts ``u = c e_i`` (one score high) and ``u = c (2 e_i - 1)`` (one
high, the rest low) then reach every map's largest weight on one position (softmax and linear:
1, erf: ``1 / d``). At ``m < d`` the same starts are the best approximations in the span of
``V``'s columns, and a gradient ascent refines the best of them.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import torch

CEILING_SCALES = tuple(10.0**k for k in range(-2, 5))
"""Scales ``c`` of the starts (one per decade); the ascent then moves freely."""
CEILING_POSITIONS = 256
"""Positions tried per replica: all of them up to this ``d``, the first this many beyond (rows
of ``V`` are exchangeable, so this only bounds the cost at large ``d``)."""
CEILING_STARTS = 2
"""Best (direction, scale) starts per replica that the gradient ascent refines."""
CEILING_STEPS = 200
CEILING_RATE = 0.01
"""Adam's step on ``theta / c`` (``c`` the start's scale): scale-free."""
CEILING_CHUNK = 1 << 22
"""Most scores held at once while the starts are screened."""


def unit_weight(gamma: torch.Tensor, own: torch.Tensor) -> torch.Tensor:
    """``|gamma_own| / max(1, ||gamma||_1)`` along the last axis (``own``: index per row,
    trailing 1): the weight on ``own`` per unit of total weight (module docstring)."""
    size = gamma.abs()
    return size.gather(-1, own).squeeze(-1) / size.sum(dim=-1).clamp(min=1.0)


def directions(V: torch.Tensor, positions: int) -> torch.Tensor:
    """Per replica the ``3 P`` start directions of ``theta`` (``E x 3P x m``): ``v_i``, and
    ``V^+ e_i``, ``V^+ (2 e_i - 1)`` (minimum-norm least squares; exact scores at ``m >= d``),
    for the first ``P = positions`` positions ``i``."""
    import torch

    E, d, _ = V.shape
    pinv = torch.linalg.pinv(V)  # E x m x d
    one_hot = torch.eye(d, positions, dtype=V.dtype)  # d x P: column i is e_i
    high_low = 2 * one_hot - 1
    rows = V[:, :positions]
    return torch.cat([rows, (pinv @ one_hot).transpose(1, 2), (pinv @ high_low).transpose(1, 2)], 1)


def replica_ceilings(V: torch.Tensor, name: str) -> np.ndarray:
    """Per replica of ``V`` (``E x d x m``, float64), the largest weight per unit of total weight
    (``unit_weight``) map ``name`` puts on one position (SPEC Part E): the ``directions`` at every
    scale of ``CEILING_SCALES``, then ``CEILING_STEPS`` of Adam ascent on the log weight from the
    ``CEILING_STARTS`` best starts. A lower bound on the supremum over ``theta`` (exact at
    ``m >= d`` for the maps whose best ``s`` is one of the starts' directions)."""
    import torch

    from ... import attention
    from ...train.optimizers import adam_step

    weights = attention.get(name)
    V = V.detach().cpu()
    E, d, m = V.shape
    P = min(d, CEILING_POSITIONS)
    Vt = V.transpose(1, 2)
    K = 3 * P
    best = torch.full((E, K), -1.0, dtype=V.dtype)
    scale = torch.ones(E, K, dtype=V.dtype)
    found_dirs = torch.empty(E, K, m, dtype=V.dtype)
    chunk = max(1, CEILING_CHUNK // (K * d))
    for lo in range(0, E, chunk):
        part = slice(lo, lo + chunk)
        found_dirs[part] = dirs = directions(V[part], P)
        dots = dirs @ Vt[part]  # chunk x K x d
        own = (torch.arange(K) % P).expand(len(dots), K)[..., None]
        for c in CEILING_SCALES:
            share = torch.nan_to_num(unit_weight(weights(c * dots), own), nan=-1.0)
            better = share > best[part]
            best[part] = torch.where(better, share, best[part])
            scale[part] = torch.where(better, c, scale[part])
    found, top = best.topk(min(CEILING_STARTS, K), dim=1)
    c0 = scale.gather(1, top)[..., None]
    own = (top % P)[..., None]
    phi = found_dirs.gather(1, top[..., None].expand(-1, -1, m)).clone()
    first, second = torch.zeros_like(phi), torch.zeros_like(phi)
    with torch.enable_grad():
        for step in range(1, CEILING_STEPS + 1):
            if bool((found >= 1 - 1e-12).all()):
                break  # every start already puts all its weight on one position
            phi.requires_grad_(True)
            share = unit_weight(weights((c0 * phi) @ Vt), own)
            found = torch.maximum(found, torch.nan_to_num(share.detach(), nan=-1.0))
            (grad,) = torch.autograd.grad(-torch.log(share).sum(), phi)
            phi = phi.detach()
            adam_step(phi, torch.nan_to_num(grad), first, second, step, CEILING_RATE)
    return found.max(dim=1).values.numpy()


def needed_share(d: int, target: float) -> float:
    """The l1 share on each head's support bit of the most spread-out weights that reach
    population loss ``target``: ``gamma_1 = t (e_i + r)``, ``gamma_2 = t (e_j + q)`` with ``r``,
    ``q`` of equal magnitudes ``eps`` on the other ``n = d - 2`` positions, orthogonal sign
    patterns and the best ``t``. The loss is then ``1 - 1 / A`` with ``A = (1 + n eps^2)^2 - 2 n
    eps^4``, so ``loss <= target`` allows ``eps^2`` up to the root of ``(n^2 - 2n) x^2 + 2n x
    + 1 - 1 / (1 - target)``, and the share is ``1 / (1 + n eps)``. Spreading the rest evenly
    is what lets a share this small reach the target (a rest concentrated anywhere costs more
    loss per unit of l1 mass)."""
    n = d - 2
    if n < 1:
        return 1.0
    a, b, c = n * n - 2 * n, 2 * n, 1 - 1 / (1 - target)
    x = -2 * c / (b + math.sqrt(b * b - 4 * max(a, 0) * c))  # the positive root, stably
    return 1 / (1 + n * math.sqrt(x))


def needed_small_weight(target: float) -> float:
    """The weight on one position that loss ``target`` needs of weights of total at most 1:
    with ``p = g_i h_j + g_j h_i = E[f y]``, Cauchy-Schwarz gives ``E[f^2] >= p^2``, so the
    loss is at least ``(1 - p)^2`` and needs ``p >= 1 - sqrt(target)``, while ``p <= 2 w^2``
    for weights at most ``w``: ``w >= sqrt((1 - sqrt(target)) / 2)``."""
    return math.sqrt(max(0.0, 1 - math.sqrt(target)) / 2)


def needed_weight(d: int, target: float) -> float:
    """What ``unit_weight``'s ceiling must reach for loss ``target`` at ``d``: weights of total
    above 1 are counted by their share (``needed_share``), those of total at most 1 by their
    weight (``needed_small_weight``), so a ceiling below the smaller of the two cannot reach the
    target (SPEC Part E: expressivity, not learning)."""
    return min(needed_share(d, target), needed_small_weight(target))


def expressivity_bound(summary: dict, needed: float) -> bool:
    """True when the map's ceiling (upper end) is below half the weight the target needs: it
    cannot represent the target (the half leaves room for an ascent that stopped short)."""
    return summary["ceiling"][2] < needed / 2


def represents(summary: dict, needed: float) -> bool:
    """True when the map's ceiling (lower end) reaches the weight the target needs."""
    return summary["ceiling"][1] >= needed
