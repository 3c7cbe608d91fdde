"""B5.7's jobs and records: one (width, seed) a job, population GD on the full ``W`` reduced to
``α`` (``train.full_w``), the family's best beside it, the curvatures at GD's limit and the
autograd check; and the cost and memory of a job (SPEC Part G, item B5.7)."""

from __future__ import annotations

from typing import Any

from .. import costs
from ..base import Record
from .config import Config


def split(config: Config) -> list[Config]:
    """One job per (width, seed)."""
    return [
        config.model_copy(update={"pe_dims": [m], "seeds": [s]})
        for m in config.pe_dims
        for s in config.seeds
    ]


def run_one(config: Config, m_p: int, seed: int) -> Record:
    """GD to its stopping rule, its loss on the family's evaluation draw beside the family's best,
    the curvatures at the limit and the autograd check at half the limit's scale."""
    import numpy as np

    from ...core.rng import stream_seed
    from ...exact.family import best_family_loss, family_losses, family_products
    from ...train import full_w

    T, q, d = config.T, config.q, config.d
    gd = full_w.alpha_descent(
        T,
        q,
        m_p,
        d,
        samples=config.samples,
        seed=seed,
        lr_per_dim=config.lr_per_dim,
        steps=config.steps,
        tol=config.tol,
    )
    best = best_family_loss(T, q, m_p, d, samples=config.family_samples, seed=seed)
    rng = np.random.default_rng(stream_seed(seed, "family", T, q, m_p, "sphere", "eval"))
    losses = family_losses(gd.alpha, *family_products(T, q, m_p, config.family_samples, rng), d)
    bends = full_w.curvatures(
        gd.alpha,
        T,
        q,
        m_p,
        d,
        samples=config.curvature_samples,
        seed=seed,
        step=config.curvature_step,
    )
    check = full_w.symmetry_check(
        gd.alpha / 2, T, q, m_p, d, samples=config.check_samples, seed=seed
    )
    return {
        "pe_dim": m_p,
        "seed": seed,
        "alpha": gd.alpha,
        "steps": gd.steps,
        "rule": gd.rule,
        "loss": float(losses.mean()),
        "stderr": float(losses.std(ddof=1) / np.sqrt(len(losses))),
        "family": best.loss,
        "family_stderr": best.stderr,
        "family_alpha": best.alpha,
        "uniform": best.uniform,
        "lr_per_dim": config.lr_per_dim,
        "cos": 1.0,
        "curvature": bends,
        "check": check,
        "path": "symmetry: W_xp = 0, W_pp = alpha I; exact over tokens, common (y, PE) draws",
    }


def run(config: Config) -> list[Record]:
    return [run_one(config, m, s) for m in config.pe_dims for s in config.replica_seeds]


# --- cost (``attnsep reproduce --plan``) and memory of one job ---------------------------------


def work(c: costs.Config) -> float:
    """One job: ``steps`` softmaxes of ``samples x T`` (:data:`costs.STEP_TOKEN` per token), the
    family's best, 7 position-only and 3 token losses of ``curvature_samples`` sequences (two
    ``m_p x (d + m_p)`` products and the draws each) and the autograd check (twice
    ``2 check_samples`` sequences of explicit encodings through the full ``W``)."""
    m = max(c["pe_dims"])
    per_sequence = 2 * (c["d"] + m) * m + costs.DRAW * (c["q"] + 1) * m + costs.STEP_TOKEN * c["T"]
    curvature = 10 * c["curvature_samples"] * per_sequence
    check = 3 * 2 * c["check_samples"] * c["T"] * (c["d"] + m) * (c["d"] + m)
    descent = c["steps"] * (c["samples"] * c["T"] * costs.STEP_TOKEN + costs.STEP)
    family = costs.family_best(c["family_samples"], m, [c["T"]], [c["T"]])
    return len(c["seeds"]) * (descent + family + curvature + check)


def peak(c: dict[str, Any]) -> float:
    """Bytes one job holds at most (float64, a rough upper bound): the curvature's draws and
    tokens with a step's ``samples x (d + m_p)`` arrays, the autograd check's explicit
    encodings, tokens and graph, the full ``W`` and its gradient, and the family's products."""
    m, d, T = max(c["pe_dims"]), c["d"], c["T"]
    curvature = c["curvature_samples"] * ((c["q"] + 6) * m + 4 * (d + m) + 3 * T * d + 8 * T)
    check = 2 * c["check_samples"] * T * (m + d) * 6 + 6 * (d + m) ** 2
    family = 4 * max(c["samples"], c["family_samples"]) * T
    return 8.0 * (curvature + check + family + 4 * m * m)
