"""A7.5a's calibration hypotheses (SPEC Part E, F): simulated runs of the searches with ``n*``
on the measured growth, the paper's with the measured stuck replicas, the rival's with a quarter
of them stuck."""

from __future__ import annotations

import math

import numpy as np

from ...metrics import calibration
from ...metrics.laws import POWER
from ...train.search import probe_matrix
from ..base import Record
from .config import Config
from .search import analyse, measured_rates, run_records, series, simulate
from .verdict import EMPIRICAL

RIVAL_STUCK = 0.25
"""The rival's stuck share at every ``d`` (``hypotheses``)."""

Law = tuple[float, ...]
"""``(ln c, alpha)`` of ``n* = c d^alpha`` (``POWER``'s parameters)."""


def growth_law(rows: list[Record], config: Config) -> tuple[Law, list[Law]]:
    """``c d^alpha`` fitted to the finite ``n*``'s of the replicas that are not stuck, and its
    refits to each bootstrap draw of them (``analyse``'s draws, ``xor_thresholds.law_draws``);
    with one (or no) finite ``n*``, linear through it (the paper's empirical ``O(d)``)."""
    from ..xor_thresholds import law_draws

    a = analyse(rows, config)
    found = [i for i, n in enumerate(a["n"]) if math.isfinite(n)]
    if len(found) >= 2:
        ds, n_stars = [a["d"][i] for i in found], [a["n"][i] for i in found]
        params = POWER.fit(ds, n_stars)
        boot = np.column_stack([a["draws"][i] for i in found])
        return params, law_draws(POWER, ds, n_stars, boot, None)
    d0, n0 = (
        (a["d"][found[0]], a["n"][found[0]])
        if found
        else (float(rows[0]["d"]), float(rows[0]["n_guard"]))
    )
    params = (math.log(n0 / d0), EMPIRICAL)
    return params, [params]


def hypotheses(records: list[Record], config: Config) -> calibration.Hypotheses:
    """SPEC Part E, F, A7.5a: the paper = ``n*`` following the measured growth (``c d^alpha``
    fitted to the finite ``n*``'s of the replicas that are not stuck, far below ``d^4``) and
    stuck replicas at the measured rate; the rival = the same ``n*`` and a stuck share
    ``RIVAL_STUCK`` at every ``d`` (more than the target's slack of 0.1 need more than ``d^4
    (ln d)^2`` samples). Both with the run's replica noise (``calibration.log_spread`` of the
    stored probes) and population rates (``search.simulate``).

    Each simulated run redraws every fitted parameter from the real run (``redraws_itself``):
    the law refitted to one bootstrap draw of the ``n*``'s (``growth_law``), the log-spread from
    the probes with their replicas resampled (``xor_thresholds.resampled_spread``), each
    population rate from its Jeffreys posterior ``Beta(k + 1/2, n - k + 1/2)`` (``k`` of ``n``
    replicas succeeding in population) and, on the paper's side, each stuck share from ``Beta(s
    + 1/2, t - s + 1/2)`` (``s`` stuck of ``t`` population successes; ``search.simulate``)."""
    from ..xor_thresholds import resampled_spread

    rows = series(records)
    params, fits = growth_law(rows, config)
    probe_sets = [probe_matrix(r["probes"]) for r in rows]
    spread = calibration.log_spread(probe_sets)
    rates = measured_rates(rows)
    seeds = {r["d"]: len(r["population"]["outcomes"]) for r in rows}

    def searches(cfg: Config, rng: np.random.Generator, share: float | None) -> list[Record]:
        drawn = fits[int(rng.integers(len(fits)))]

        def law(d: float) -> float:
            return float(POWER.predict(drawn, [d])[0])

        redrawn = {
            d: (rng.beta(t + 0.5, seeds[d] - t + 0.5), s, t) for d, (_, s, t) in rates.items()
        }
        spread_drawn = resampled_spread(probe_sets, rng)
        return run_records(simulate(law, spread_drawn, redrawn, cfg, rng, share), "fixed", cfg.m)

    def paper(cfg: Config, rng: np.random.Generator) -> list[Record]:
        return searches(cfg, rng, None)

    def rival(cfg: Config, rng: np.random.Generator) -> list[Record]:
        return searches(cfg, rng, RIVAL_STUCK)

    fitted = (
        f"n* = {math.exp(params[0]):.3g} d^{params[1]:.3g} (fitted to the run's n*; each "
        "simulated run refits it to a bootstrap draw)"
    )
    return calibration.Hypotheses(
        paper=paper,
        rival=rival,
        paper_law=f"{fitted}, stuck replicas at the measured rate",
        rival_law=f"{fitted}, {RIVAL_STUCK:g} of the population successes stuck at every d "
        "(needing more than d^4 (ln d)^2)",
        noise=f"per-replica thresholds log-normal with log-spread {spread:.3g} (the run's probes; "
        "redrawn per run, replicas resampled); population rates as measured per d (drawn per "
        "run from Beta(k + 1/2, n - k + 1/2)); the paper's stuck replicas drawn per run at a "
        "rate from Beta(s + 1/2, t - s + 1/2), s stuck of t population successes measured ("
        + ", ".join(f"{v[1]}/{v[2]} at d={d}" for d, v in rates.items())
        + ")",
        redraws_itself=True,
    )
