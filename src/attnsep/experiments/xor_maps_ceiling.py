"""The expressivity ceiling of an attention map (SPEC Part E, A7.3): the largest l1 share of its
weights that a map can put on one position of a run's own embeddings, and the share that
population loss <= ``target`` needs. A map whose ceiling is well below the needed share fails
by expressivity, not learning.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..metrics import calibration

if TYPE_CHECKING:
    import torch

    from .xor_attention_maps import Config

CEILING_SCALES = tuple(10.0**k for k in range(-2, 5))
"""Starting scales ``c`` of ``theta = c v_i`` (one per decade); the ascent then moves freely."""
CEILING_POSITIONS = 256
"""Positions tried per replica: all of them up to this ``d``, the first this many beyond (rows
of ``V`` are exchangeable, so this only bounds the cost at large ``d``)."""
CEILING_STARTS = 2
"""Best (position, scale) starts per replica that the gradient ascent refines."""
CEILING_STEPS = 200
CEILING_RATE = 0.01
"""Adam's step on ``theta / c`` (``c`` the start's scale): scale-free."""
CEILING_CHUNK = 1 << 22
"""Most scores held at once while the starts are screened."""
_CEILINGS: dict[tuple[int, int, int, str], np.ndarray] = {}
"""Per-replica ceilings computed so far, by (master seed, d, m, map): replica ``e``'s
embeddings depend only on these and ``e``, so a run with more seeds extends the array."""


def l1_share(gamma: torch.Tensor, own: torch.Tensor) -> torch.Tensor:
    """``|gamma_own| / ||gamma||_1`` along the last axis (``own``: index per row, trailing 1)."""
    size = gamma.abs()
    return size.gather(-1, own).squeeze(-1) / size.sum(dim=-1)


def replica_ceilings(V: torch.Tensor, name: str) -> np.ndarray:
    """Per replica of ``V`` (``E x d x m``), the largest l1 share map ``name`` puts on one
    position (SPEC Part E): ``theta = c v_i`` over ``CEILING_SCALES`` and the positions, then
    ``CEILING_STEPS`` of Adam ascent on the log share from the ``CEILING_STARTS`` best starts."""
    import torch

    from .. import attention
    from ..train.optimizers import adam_step

    weights = attention.get(name)
    E, d, m = V.shape
    P = min(d, CEILING_POSITIONS)
    Vt = V.transpose(1, 2)
    best = torch.full((E, P), -1.0, dtype=V.dtype)
    scale = torch.ones(E, P, dtype=V.dtype)
    chunk = max(1, CEILING_CHUNK // (P * d))
    for lo in range(0, E, chunk):
        dots = V[lo : lo + chunk, :P] @ Vt[lo : lo + chunk]
        own = torch.arange(P).expand(len(dots), P)[..., None]
        for c in CEILING_SCALES:
            share = torch.nan_to_num(l1_share(weights(c * dots), own), nan=-1.0)
            better = share > best[lo : lo + chunk]
            best[lo : lo + chunk] = torch.where(better, share, best[lo : lo + chunk])
            scale[lo : lo + chunk] = torch.where(better, c, scale[lo : lo + chunk])
    found, top = best.topk(min(CEILING_STARTS, P), dim=1)
    c0 = scale.gather(1, top)[..., None]
    phi = V.gather(1, top[..., None].expand(-1, -1, m)).clone()
    first, second = torch.zeros_like(phi), torch.zeros_like(phi)
    for step in range(1, CEILING_STEPS + 1):
        if bool((found >= 1 - 1e-12).all()):
            break  # every start already puts all its weight on one position
        phi.requires_grad_(True)
        share = l1_share(weights((c0 * phi) @ Vt), top[..., None])
        found = torch.maximum(found, torch.nan_to_num(share.detach(), nan=-1.0))
        (grad,) = torch.autograd.grad(-torch.log(share).sum(), phi)
        phi = phi.detach()
        adam_step(phi, grad, first, second, step, CEILING_RATE)
    return found.max(dim=1).values.numpy()


def ceilings(config: Config, name: str) -> np.ndarray:
    """Map ``name``'s per-replica ceilings on the embeddings ``run`` draws for ``config`` (the
    same ``V``: ``QueryHeads.sample(seed, seeds, d, m)``), computed once per process; ``nan``
    on simulated runs (``calibration.in_simulation``: the ceiling words the reason, it does
    not decide the outcome)."""
    if calibration.in_simulation():
        return np.full(config.seeds, math.nan)
    key = (config.seed, config.d, config.m, name)
    have = _CEILINGS.get(key, np.empty(0))
    if len(have) < config.seeds:
        import torch

        from ..core.device import torch_threads
        from ..embeddings import sphere_embeddings

        V = sphere_embeddings(
            config.seed, config.seeds - len(have), config.d, config.m, first_replica=len(have)
        )
        with torch_threads(1), torch.enable_grad():
            have = np.concatenate([have, replica_ceilings(V, name)])
        _CEILINGS[key] = have
    return have[: config.seeds]


def needed_share(d: int, target: float) -> float:
    """The l1 share on each head's support bit of the most spread-out weights that reach
    population loss ``target``: ``gamma_1 = t (e_i + r)``, ``gamma_2 = t (e_j + q)`` with ``r``,
    ``q`` of equal magnitudes ``eps`` on the other ``n = d - 2`` positions, orthogonal sign
    patterns and the best ``t``. The loss is then ``1 - 1 / A`` with ``A = (1 + n eps^2)^2 - 2 n
    eps^4``, so ``loss <= target`` allows ``eps^2`` up to the root of ``(n^2 - 2n) x^2 + 2n x
    + 1 - 1 / (1 - target)``, and the share is ``1 / (1 + n eps)``. Spreading the rest evenly
    is what lets a share this small reach the target (a rest concentrated anywhere costs more
    loss per unit of l1 mass); a map whose ceiling is well below it cannot represent the target
    at these sizes (SPEC Part E: expressivity, not learning)."""
    n = d - 2
    if n < 1:
        return 1.0
    a, b, c = n * n - 2 * n, 2 * n, 1 - 1 / (1 - target)
    x = -2 * c / (b + math.sqrt(b * b - 4 * max(a, 0) * c))  # the positive root, stably
    return 1 / (1 + n * math.sqrt(x))


def expressivity_bound(summary: dict, needed: float) -> bool:
    """True when the map's ceiling (upper end) is below half the share the target needs."""
    return summary["ceiling"][2] < needed / 2
