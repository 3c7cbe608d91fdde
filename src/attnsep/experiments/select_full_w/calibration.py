"""B5.7's error rates (SPEC Part E): GD at the ``W = αI`` family's best or stalled above it,
on the measured floors, curvatures and seed noise."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...metrics import calibration
from ..base import Record
from .verdict import OFF_FAMILY, kappas, summarize

RIVAL = 1.2
"""The rival of the error rates: GD stalled at ``1.2 x`` the family's best (as B5.1)."""


def _relative_spread(records: list[Record], block: str) -> float:
    """The seeds' relative spread of ``κ`` on ``block``, pooled (root mean square) over widths."""
    spreads = []
    for m in {r["pe_dim"] for r in records}:
        values = np.array([kappas(r)[block] for r in records if r["pe_dim"] == m])
        if len(values) >= 2:
            spreads.append(np.std(values, ddof=1) / abs(np.mean(values)))
    return float(np.sqrt(np.mean(np.square(spreads)))) if spreads else 0.0


def _simulated(m: int, seed: int, loss: float, best: float, bends: dict, check: float) -> Record:
    """One simulated record (the fields the verdict reads)."""
    return {
        "pe_dim": m,
        "seed": seed,
        "alpha": 1.0,
        "steps": 1,
        "rule": "converged",
        "loss": loss,
        "family": best,
        "family_alpha": 1.0,
        "uniform": 1.0,
        "lr_per_dim": bends.pop("lr"),
        "cos": 1.0,
        "curvature": bends,
        "check": {"columns": 0.0, "content": check, "content_plain": 1.0},
        "path": "simulated",
    }


def hypotheses(records: list[Record], config: Any) -> calibration.Hypotheses:
    """Paper: GD at the family's best (ratio 1); rival: stalled at :data:`RIVAL` x it. Both keep
    the measured floors per width (the nearest measured width's), the seeds' relative spread of
    the per-seed ratio and of the family's best, and each block's ``κ`` (the width's mean, the
    seeds' relative spread pooled over widths) on the measured ``L''(α)`` (GD's rate as run); the
    autograd check as measured."""
    rows = summarize(records)
    floors = {r["pe_dim"]: r["family"]["mean"] for r in rows}
    scales = {r["pe_dim"]: r["scale"]["mean"] for r in rows}
    lr = float(np.mean([r["lr_per_dim"] for r in records]))
    ratios = np.array([r["loss"] / r["family"] for r in records])
    spread_ratio = float(ratios.std(ddof=1)) if len(ratios) > 1 else 0.0
    family = [r["family"] / floors[r["pe_dim"]] for r in records]
    spread_family = float(np.std(family, ddof=1)) if len(family) > 1 else 0.0
    k_mean = {r["pe_dim"]: {b: r["kappa"][b][0] for b in OFF_FAMILY} for r in rows}
    k_sd = {b: _relative_spread(records, b) for b in OFF_FAMILY}
    check = max((max(r["check"]["columns"], r["check"]["content"]) for r in records), default=0)

    def simulate(ratio: float) -> calibration.Simulate:
        def draw(cfg: Any, rng: np.random.Generator) -> list[Record]:
            out = []
            for m in cfg.pe_dims:
                near = min(floors, key=lambda w: abs(np.log(w / m)))
                for seed in cfg.seeds:
                    z = rng.standard_normal(2 + len(OFF_FAMILY))
                    best = floors[near] * (1 + spread_family * z[0])
                    bends = {"scale": scales[near], "lr": lr}
                    for i, b in enumerate(OFF_FAMILY):
                        bends[b] = scales[near] * k_mean[near][b] * (1 + k_sd[b] * z[2 + i])
                    loss = best * ratio * (1 + spread_ratio * z[1])
                    out.append(_simulated(m, seed, loss, best, bends, check))
            return out

        return draw

    kappa = ", ".join(f"{b} x (1 ± {k_sd[b]:.2g})" for b in OFF_FAMILY)
    return calibration.Hypotheses(
        paper=simulate(1.0),
        rival=simulate(RIVAL),
        paper_law="GD's loss at the family's best (ratio 1) at every m_p, floors as measured",
        rival_law=f"GD stalled at {RIVAL} x the family's best at every m_p",
        noise=f"per-seed ratio spread {spread_ratio:.2g}, family's best relative spread "
        f"{spread_family:.2g}; kappa per width as measured, {kappa}; GD's rate {lr:g} per m_p",
    )
