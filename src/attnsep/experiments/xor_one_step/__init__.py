"""A7.1 — one population gradient step suffices, at a fixed width and at a polylog schedule.

For every ``d`` two series are run (SPEC A7.1, Parts D and E): the width held at each of
``m_values`` and the width growing as ``m(d) = ceil(schedule_scale * (ln d)^2)``. Success is
the certified one-step success of SPEC A6; every rate carries its Wilson 95% interval, and the
failure rate ``1 - rate`` along the schedule carries a trend test in ``ln d`` (SPEC Part E).
"""

from __future__ import annotations

from ..base import from_package, register
from . import calibration, config, figure, run, verdict

EXPERIMENT = register(
    from_package(
        "one-step",
        config,
        run,
        verdict,
        figure,
        calibration,
        version=2,
        criterion_version=2,
    )
)
