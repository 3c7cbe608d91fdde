"""A7.8's error rates: simulated runs from the paper's constant width and from the rival's
``c d^0.5``, through the real search (SPEC Part E; Part G, item 2a)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...metrics import calibration
from ...metrics.laws import FixedPower
from ...train.search import probe_matrix
from ..base import Record
from .run import search_record
from .verdict import RIVAL_ALPHA, analyse


def hypotheses(records: list[Record], config: Any) -> calibration.Hypotheses:
    """The paper's constant width ``w* = c`` and the rival ``w* = c d^0.5``, each fitted (level
    only) to the measured ``w*``, simulating runs at ``config``'s sizes and seeds. Each run
    redraws its parameters from the real run (``redraws_itself``): the law refitted to one
    bootstrap draw of the ``w*``'s, the success plateau binomially around the pooled rate at the
    largest probes and the replicas' log-spread from the probes with replicas resampled; per
    ``d``, log-normal latent thresholds (``0.9 / plateau`` quantile on the law) and failures at
    the plateau's rate go through the real search (``search_record``)."""
    from .. import xor_thresholds as xt

    a = analyse(records)
    ds, w = a["d"], a["w"]
    paper, rival = FixedPower(0.0), FixedPower(RIVAL_ALPHA)
    fits = {law: xt.law_draws(law, ds, w, a["w_draws"], None) for law in (paper, rival)}  # type: ignore[arg-type]
    successes, trials = xt.plateau_of(records) if records else (1, 1)
    probe_sets = [probe_matrix(r["probes"]) for r in records]
    spread = xt.spread_of(records, "fcn")

    def simulate(law: FixedPower) -> calibration.Simulate:
        def draw(cfg: Any, rng: np.random.Generator) -> list[Record]:
            params = fits[law][int(rng.integers(len(fits[law])))]
            plateau = rng.binomial(trials, successes / trials) / trials
            quantile = min(xt.TARGET / max(plateau, 1e-9), 0.99)
            redrawn = xt.resampled_spread(probe_sets, rng) if probe_sets else spread
            out = []
            for d in cfg.d_values:
                value = calibration.fitted_value(law, params, d)
                latent = calibration.replica_thresholds(value, redrawn, cfg.seeds, quantile, rng)
                evaluate = xt.plateau_failures(latent, plateau, rng)
                out.append(search_record(d, evaluate, cfg.width_limit))
            return out

        return draw

    reached = [(d, x) for d, x in zip(ds, w, strict=True) if math.isfinite(x)]
    xs, ys = (list(t) for t in zip(*reached, strict=True)) if reached else ([2.0], [2.0])
    p0, r0 = paper.fit(xs, ys), rival.fit(xs, ys)
    return calibration.Hypotheses(
        paper=simulate(paper),
        rival=simulate(rival),
        paper_law=f"w* = {math.exp(p0[0]):.3g} at every d "
        "(constant width, fitted to the measured w*; each simulated run refits it to a bootstrap "
        "draw)",
        rival_law=f"w* = {math.exp(r0[0]):.3g} d^{RIVAL_ALPHA} (fitted alike)",
        noise=f"per-replica latent widths, log-normal with log-spread {spread:.3g} read from the "
        "probes (redrawn per run, replicas resampled); success plateau "
        f"{successes}/{trials} at the largest probes (redrawn binomially per run)",
        redraws_itself=True,
    )
