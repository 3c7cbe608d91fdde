"""A7.5a — finite samples: one *empirical* step on ``n`` samples, and ``n*(d)`` against
Corollary 3's sufficient ``d^4 polylog d`` (SPEC A7.5, Part E, F); with A7.5b, the paper's
empirical "``O(d)``", as a companion *finding* (``growth``) from the same run.

Per ``d`` and width (the fixed ``m``, and the schedule ``m(d)``) the run searches ``n*`` for two
success definitions, certified and test accuracy (``search``), on the same steps
(``sample_steps.SampleSteps``: a step on ``n`` samples by exact sampling, or from ``d =
surrogate_from`` on by the Gaussian surrogate of the empirical gradient, ``train.surrogate``);
per ``d`` of ``multistep_d_values`` it searches ``n*`` after a few GD steps on the ``n`` samples
(``multistep``). A7.5a judges the one-step certified searches at the fixed width: ``n*`` of the
replicas that are not stuck (``search.stuck_mask``) against ``d^4``, and the stuck rate
(replicas failing at the guard ``d^4 (ln d)^2``) against the target's slack.
"""

from __future__ import annotations

from ..base import from_package, register
from . import calibration, config, figure, run, verdict

EXPERIMENT = register(
    from_package(
        "finite-samples",
        config,
        run,
        verdict,
        figure,
        calibration,
        searches=True,
        version=6,  # 6: the guard at d^4 (ln d)^2, climbed to two octaves at a time
        criterion_version=4,  # 4: the stuck share judged, against the guard d^4 (ln d)^2
        tuned_on=(0, 1, 3),
    )
)
