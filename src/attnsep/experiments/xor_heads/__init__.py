"""A7.4 — the heads specialize after one step: weight on the target bits, initialization, and
the step's alignment with the support positions (SPEC A7.4, Parts D and E).

Two series of one population step each: the width held at ``m`` (``d_values``, Part D's
specialization) and the width on A7.1's polylog schedule ``m(d) = ceil(c (ln d)^2)``
(``schedule_d_values``, Part E's alignment). The alignment measure is ``metrics.alignment``'s.
"""

from __future__ import annotations

from ..base import from_package, register
from . import calibration, config, figure, run, verdict

EXPERIMENT = register(
    from_package(
        "head-specialization",
        config,
        run,
        verdict,
        figure,
        calibration,
        version=3,
        criterion_version=4,
        tuned_on=(0, 1, 3),
    )
)
