"""This machine's speed against the machine of the published timings, for ``--plan``: a few
published jobs timed here (warm, in the calibration's child processes), and the median of their
seconds over their published seconds. A plan multiplies every published timing by it, so an
estimate made on a faster laptop or a busier server is in this machine's seconds."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .calibration import TIMED, Calibration
from .executors import BACKENDS
from .jobs import Job
from .published import config_text

REFERENCE = (
    "select-convergence",
    "length-generalization",
    "kparity-steps",
    "fcn-selection",
    "select-width",
    "separation-xor",
)
"""The experiments whose published jobs are timed: the kinds of work the presets spend most of
their CPU on (numpy draws with batched products; torch training of attention and of FCNs)."""
TARGET_SECONDS = 0.5
"""Each experiment's published job nearest this is timed (long enough to time, short enough to
keep a plan quick)."""
WORTH = 60.0
"""Published seconds a plan must price before timing the reference jobs (a few seconds) is
worth it."""


@dataclass(frozen=True)
class HostSpeed:
    """``factor``: seconds here per published second (the median over ``jobs`` timed jobs);
    ``startup``: a worker's start-up seconds here, measured on the way."""

    factor: float
    jobs: int
    startup: float | None = None

    def scaled(self, published: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """The published timings in this machine's seconds."""
        return {k: {**p, "seconds": p["seconds"] * self.factor} for k, p in published.items()}


def reference_jobs(published: dict[str, dict[str, Any]]) -> dict[str, tuple[Job, float]]:
    """Per :data:`REFERENCE` experiment, its published job nearest :data:`TARGET_SECONDS` and
    that job's published seconds."""
    found = {}
    for name in REFERENCE:
        timed = [p for p in published.values() if p["experiment"] == name and p["seconds"] > 0]
        if timed:
            nearest = min(
                timed,
                key=lambda p: (
                    abs(math.log(p["seconds"] / TARGET_SECONDS)),
                    config_text(p["config"]),
                ),
            )
            found[name] = (Job(name, nearest["config"]), nearest["seconds"])
    return found


def worth_timing(budget: float, executor: str, priced: float) -> bool:
    """Whether a plan times the reference jobs: a calibration is allowed (``budget``), the jobs
    run on this machine (not ``executor`` Ray's nodes) and the published timings price more
    than :data:`WORTH` seconds of them."""
    return budget > 0 and BACKENDS[executor].local and priced > WORTH


def host_speed(
    published: dict[str, dict[str, Any]], timing: Callable[..., Calibration]
) -> HostSpeed | None:
    """The reference jobs timed by ``timing`` (``calibration.calibrate``: a child process per
    CPU, sharing the machine as a run's workers do) against ``published`` (None: none timed)."""
    jobs = reference_jobs(published)
    if not jobs:
        return None
    groups = {name: [job] for name, (job, _) in jobs.items()}
    found = timing(groups, budget=0.0, workers=0)  # workers=0: the warm seconds
    ratios = [
        cost.seconds / seconds
        for job, seconds in jobs.values()
        if (cost := found.costs.get(job.key)) is not None
        and cost.source == TIMED
        and cost.seconds is not None
    ]
    return HostSpeed(statistics.median(ratios), len(ratios), found.startup) if ratios else None
