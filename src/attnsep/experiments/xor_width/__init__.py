"""A7.2 — polylog parameters: the smallest width ``m*(d)`` whose one-step success reaches a share
of its plateau, and its growth law decided against a power-law rival (SPEC A7.2, Parts D–F).

For each ``d`` the search (``run.search_width``) first finds the success plateau, then ``m*`` by
bisection; every probe keeps each replica's certified outcome (SPEC A6), so the bootstrap over
replicas re-runs the search on the stored probes, plateau included (``stats.threshold_draws``
with a ``reference``). The growth of ``m*`` is decided by the rule of SPEC Part F
(``xor_thresholds.growth_test``: the local log-log exponent's fall and the held-out relative
errors of the polylog law and of the power law); the criterion's error rates come from simulated
runs (``calibration.hypotheses``, Part E) that reproduce the plateau.
"""

from __future__ import annotations

from ..base import from_package, register
from . import calibration, config, figure, run, verdict

EXPERIMENT = register(
    from_package(
        "polylog-width",
        config,
        run,
        verdict,
        figure,
        calibration,
        searches=True,
        version=3,  # 3: m* relative to the success plateau (search_width)
        criterion_version=3,
        tuned_on=(0, 1, 3),
    )
)
