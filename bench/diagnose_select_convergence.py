"""Where a B5.1 run of the ``full`` preset ends against the ``W = αI`` family (SPEC B5.1): a
diagnosis printed beside a verdict, not a benchmark and not a verdict.

One job of ``select-convergence`` at width ``m_p`` and replica ``seed`` (master seed 0, the
published run's), trained for ``steps`` steps (the published run's 400; since version 5 the
preset's are ``config.steps_at``'s, 1,148 at 2048), then: its loss as the job records it beside
the family's best (its record's ``family``), the trained position block's mean diagonal ``α``
and the size of the rest (``‖off-diagonal‖ / ‖diagonal‖``), and the
family's loss *at that α* (a fresh draw of 8,192 sequences). Trained loss / family's best splits
into two parts: family(α) / family's best (``α`` short of or past ``α*``: more steps or a larger
rate would move it) and trained / family(α) (the off-diagonal part that batch noise leaves).
The training loss over windows of 20 steps shows whether it still falls.

Usage: ``.venv/bin/python bench/diagnose_select_convergence.py M_P SEED STEPS`` (one JSON line;
at ``m_p = 2048`` about 2.7 s a step on one core).
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
import torch

from attnsep.core.rng import stream_seed
from attnsep.exact.family import family_losses, family_products
from attnsep.experiments.select_common import evaluation_loss, family_record, train_and_evaluate
from attnsep.experiments.select_convergence.config import PRESETS, Config

WINDOW = 20
"""Steps per window of the training-loss curve."""


def diagnose(m_p: int, seed: int, steps: int) -> dict[str, object]:
    """The job's records and its position block measured against the family (module doc)."""
    config = Config(**{**PRESETS["full"], "steps": steps})
    train = config.training(m_p, seed, products=config.products)
    start = time.perf_counter()
    out = train_and_evaluate(train, [config.T], config.eval_size, keep_W=True)
    block = out["W"][config.d :, config.d :]
    diagonal = np.diag(block)
    alpha = float(diagonal.mean())
    off = np.linalg.norm(block - np.diag(diagonal)) / np.linalg.norm(diagonal)
    rng = np.random.default_rng(stream_seed(seed, "diagnosis", m_p))
    products = family_products(config.T, config.q, m_p, 8192, rng)
    at_alpha = float(family_losses(alpha, *products, config.d).mean())
    loss, stderr, _ = evaluation_loss(out["eval"][0])
    best = family_record(config.T, config.q, m_p, config.d, config.family_samples, seed)
    curve = out["losses"]
    windows = range(WINDOW, steps + 1, max(WINDOW, steps // 8 // WINDOW * WINDOW))
    return {
        "m_p": m_p,
        "seed": seed,
        "steps": steps,
        "lr": train.lr,
        "batch": train.batch,
        "loss": loss,
        "stderr": stderr,
        "cos": out["cos"],
        "alpha": alpha,
        "off_diagonal": float(off),
        "family_at_alpha": at_alpha,
        "family_best": best["loss"],
        "family_alpha": best["alpha"],
        "train_loss": {s: float(np.mean(curve[s - WINDOW : s])) for s in windows},
        "seconds": time.perf_counter() - start,
    }


if __name__ == "__main__":
    torch.set_num_threads(1)
    width, replica, count = (int(v) for v in sys.argv[1:4])
    print(json.dumps(diagnose(width, replica, count)), flush=True)
