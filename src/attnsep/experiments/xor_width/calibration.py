"""A7.2's error rates: simulated runs from the polylog law and from the power-law rival, through
the real search (SPEC A7.2, Parts E, F)."""

from __future__ import annotations

import math

import numpy as np

from ...metrics import calibration
from ...metrics.laws import POLYLOG, POWER, Law
from ...train.search import probe_matrix
from ..base import Record
from .config import Config
from .run import search_record
from .verdict import RIVAL_MIN_ALPHA, analyse


def hypotheses(records: list[Record], config: Config) -> calibration.Hypotheses:
    """The polylog law ``m* = a (ln d)^p`` and the rival ``c d^alpha`` (``alpha >= 0.25``),
    each simulating runs at ``config``'s sizes, seeds, target and search range (SPEC Parts E, F).
    Each run redraws every fitted parameter from the real run (``redraws_itself``): it refits its
    law to one bootstrap draw of the measured ``m*`` (``xor_thresholds.law_draws``), redraws the
    plateau binomially around the run's pooled plateau (``xor_thresholds.plateau_of``) and the
    log-spread from the probes with their replicas resampled (``xor_thresholds.
    resampled_spread``); per ``d``, latent per-replica thresholds (log-normal with that
    log-spread, the ``target`` quantile on the law) and failures at the plateau's rate, fresh at
    every probe, go through ``search_width``."""
    from .. import xor_thresholds as xt

    a = analyse(records, config)
    ds, m, draws = a["d"], a["m"], a["draws"]
    paper = xt.law_draws(POLYLOG, ds, m, draws, None)
    rival = xt.law_draws(POWER, ds, m, draws, RIVAL_MIN_ALPHA)
    successes, trials = xt.plateau_of(records)
    probe_sets = [probe_matrix(r["probes"]) for r in records]
    spread = calibration.log_spread(probe_sets)

    def simulate(law: Law, fits: list[tuple[float, ...]]) -> calibration.Simulate:
        def draw(cfg: Config, rng: np.random.Generator) -> list[Record]:
            params = fits[int(rng.integers(len(fits)))]
            plateau = rng.binomial(trials, successes / trials) / trials
            redrawn = xt.resampled_spread(probe_sets, rng)
            values = [calibration.fitted_value(law, params, d) for d in cfg.d_values]
            return [
                simulated_search(cfg, d, v, redrawn, plateau, rng)
                for d, v in zip(cfg.d_values, values, strict=True)
            ]

        return draw

    p0 = calibration.fit_or_flat(POLYLOG, ds, m)
    r0 = calibration.fit_or_flat(POWER, ds, m, RIVAL_MIN_ALPHA)
    return calibration.Hypotheses(
        paper=simulate(POLYLOG, paper),
        rival=simulate(POWER, rival),
        paper_law=f"m* = {math.exp(p0[0]):.3g} (ln d)^{p0[1]:.3g} (fitted to the measured m*; "
        "each simulated run refits it to a bootstrap draw)",
        rival_law=f"m* = {math.exp(r0[0]):.3g} d^{r0[1]:.3g} (alpha >= {RIVAL_MIN_ALPHA}, "
        "fitted to the same, redrawn alike)",
        noise=f"per-replica latent thresholds, log-normal: log-spread {spread:.3g}, read from the "
        "run's probes (redrawn per run from them, replicas resampled); success plateau "
        f"{successes}/{trials} = {successes / trials:.3g} (pooled over the d's, redrawn "
        "binomially per run), failures fresh at every probe",
        redraws_itself=True,
    )


def simulated_search(
    config: Config,
    d: int,
    value: float,
    spread: float,
    plateau: float,
    rng: np.random.Generator,
) -> Record:
    """The record ``run`` stores for ``d`` when the replicas' latent thresholds are log-normal
    with log-spread ``spread`` and ``target`` quantile ``value``, and each probe fails a replica
    afresh with probability ``1 - plateau`` (``xor_thresholds.plateau_failures``): the real
    ``search_width`` on them."""
    from ..xor_thresholds import plateau_failures

    latent = calibration.replica_thresholds(value, spread, config.seeds, config.target, rng)
    return search_record(plateau_failures(latent, plateau, rng), d, config)
