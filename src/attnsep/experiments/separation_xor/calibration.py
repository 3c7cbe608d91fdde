"""A7.6's error rates: simulated runs of the transformer from the polylog law and from the
power-law rival, through the real search (SPEC A7.6, Parts E, F)."""

from __future__ import annotations

import math

import numpy as np

from ...metrics import calibration
from ...metrics.laws import POLYLOG, POWER, Law
from ...train.search import probe_matrix
from ..base import Record
from ..xor_width.verdict import RIVAL_MIN_ALPHA
from .analysis import judged_records, thresholds
from .config import TRANSFORMER_MIN_D, Config


def hypotheses(records: list[Record], config: Config) -> calibration.Hypotheses:
    """The transformer's polylog law ``m* = a (ln d)^p`` and the rival ``c d^alpha``
    (``alpha >= 0.25``), fitted to the run's ``m*`` at ``d >= 64``, each simulating runs of the
    transformer at ``config``'s sizes and seeds (SPEC Parts E, F; the FCN's side is a check, not
    simulated). Each run redraws every fitted parameter from the real run (``redraws_itself``):
    it refits its law to one bootstrap draw of the measured ``m*``, redraws the plateau
    binomially around the run's pooled plateau (``xor_thresholds.plateau_of``) and the log-spread
    from the probes with their replicas resampled (``xor_thresholds.resampled_spread``); per
    size, latent per-replica thresholds (log-normal with that log-spread, ``0.9 / plateau``
    quantile on the law, at most 0.99) and failures at the plateau's rate, fresh at every probe,
    go through the real search (``xor_thresholds.simulated_search``)."""
    from .. import xor_thresholds as xt

    judged = [r for r in judged_records(records) if r["model"] == "transformer"]
    t = xt.frontier_of(judged, "transformer")
    ds, m, _, _ = thresholds(t)
    knob_draws = t.draws / 2  # the transformer's parameters are 2m (params_at)
    paper = xt.law_draws(POLYLOG, ds, m, knob_draws, None)
    rival = xt.law_draws(POWER, ds, m, knob_draws, RIVAL_MIN_ALPHA)
    successes, trials = xt.plateau_of(judged) if judged else (1, 1)
    spread = xt.spread_of(judged, "transformer")
    probe_sets = [probe_matrix(r["probes"]) for r in judged]

    def simulate(law: Law, fits: list[tuple[float, ...]]) -> calibration.Simulate:
        def draw(cfg: Config, rng: np.random.Generator) -> list[Record]:
            params = fits[int(rng.integers(len(fits)))]
            plateau = rng.binomial(trials, successes / trials) / trials
            # the rate at the law's m* is 0.9: latent quantile 0.9 / plateau (at most 0.99)
            quantile = min(xt.TARGET / max(plateau, 1e-9), 0.99)
            redrawn = xt.resampled_spread(probe_sets, rng)
            out = []
            for d in (d for d in cfg.d_values if d >= TRANSFORMER_MIN_D):
                value = calibration.fitted_value(law, params, d)
                latent = calibration.replica_thresholds(value, redrawn, cfg.seeds, quantile, rng)
                out.append(xt.simulated_search("transformer", d, latent, plateau, rng))
            return out

        return draw

    p0 = calibration.fit_or_flat(POLYLOG, ds, m)
    r0 = calibration.fit_or_flat(POWER, ds, m, RIVAL_MIN_ALPHA)
    return calibration.Hypotheses(
        paper=simulate(POLYLOG, paper),
        rival=simulate(POWER, rival),
        paper_law=f"transformer m* = {math.exp(p0[0]):.3g} (ln d)^{p0[1]:.3g} (fitted to the "
        f"measured m* at d >= {TRANSFORMER_MIN_D}; each simulated run refits it to a bootstrap "
        "draw)",
        rival_law=f"transformer m* = {math.exp(r0[0]):.3g} d^{r0[1]:.3g} (alpha >= "
        f"{RIVAL_MIN_ALPHA}, fitted to the same, redrawn alike)",
        noise=f"per-replica latent thresholds, log-normal: log-spread {spread:.3g}, read from the "
        "run's probes (redrawn per run from them, replicas resampled); success plateau "
        f"{successes}/{trials} = {successes / trials:.3g} (the largest probes, pooled; redrawn "
        "binomially per run), failures fresh at every probe",
        redraws_itself=True,
    )
