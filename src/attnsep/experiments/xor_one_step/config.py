"""A7.1's config: the sizes, the fixed widths, the polylog width schedule and the replicas (SPEC
A7.1, Parts D and E), the schedule itself, and the presets."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field

from ...configs import AttentionName, Device, OneStepConfig, default, inherit
from ..base import ExperimentConfig, InputLength, Positive

Series = Literal["fixed", "schedule"]
SERIES: tuple[Series, ...] = ("schedule", "fixed")


class Config(ExperimentConfig):
    """One-step success vs ``d`` for a fixed width and a polylog width schedule (SPEC A7.1).

    Criterion (criterion version 2, SPEC Part E; written after the seed-0 standard data were
    seen, so its confirmatory run is on another master seed), on the schedule series:
    *not reproduced* (as Part D) when the rate falls with ``d`` with separated intervals (some
    ``d1 < d2`` with Wilson high(d2) < Wilson low(d1)) or when the Wilson upper bound at the
    largest ``d`` is below 0.9; *reproduced* when the Wilson lower bound at the largest ``d`` is
    >= 0.9, no such drop exists, and the failure rate ``1 - rate`` does not rise with ``d``;
    *inconclusive* otherwise, saying how many seeds at the largest ``d`` would decide at the
    observed rate, or that the failure rate rises.

    "Does not rise" (Part E's "``1 - rate`` does not rise with ``d``") is the one-sided
    Cochran-Armitage trend test of the failure counts in ``ln d`` over all the schedule's sizes:
    the failure rate's weighted least-squares slope in ``ln d`` (weights: seeds), over its
    standard error under a constant failure rate (the pooled one), is ``z``; the failure rate
    *rises* when ``z > 1.96`` (the slope's 95% interval lies above 0; a constant failure rate
    is taken for a rise 2.5% of the time). Fewer than two sizes cannot show a trend
    (inconclusive). The fixed-width series is reported beside it (one curve per ``m_values``
    entry), with its own drop test, as information.

    ``seeds_by_d`` replaces ``seeds`` at the listed ``d`` (both series), so the most expensive
    sizes can run fewer replicas rather than be dropped.
    """

    d_values: list[InputLength] = Field(
        default=[64, 256, 1024], min_length=1, description="Input lengths d; a job per d and m."
    )
    m_values: list[Positive] = Field(
        default=[default(OneStepConfig, "m")],
        min_length=1,
        description="Widths m of the fixed series, a curve each.",
    )
    attention: AttentionName = inherit(OneStepConfig, "attention")
    schedule_scale: float = Field(
        default=0.5, gt=0, le=1e6, description="c of the schedule m(d) = ceil(c (ln d)^2)."
    )
    series: list[Series] = Field(
        default=list(SERIES),
        min_length=1,
        description="fixed: each m_values width; schedule: m(d), the one judged.",
    )
    seeds: Positive = Field(default=32, description="Replicas per (d, m).")
    seeds_by_d: dict[InputLength, Positive] = Field(
        default_factory=dict, description="Replicas at the listed d instead of seeds."
    )
    eta_scale: float = inherit(OneStepConfig, "eta_scale")
    success_tol: float = inherit(OneStepConfig, "success_tol")
    device: Device = Field(default="cpu", description="cpu, cuda, or auto (cuda if present).")


def schedule_m(d: int, scale: float) -> int:
    """The polylog width schedule ``m(d) = ceil(scale * (ln d)^2)`` (at least 1)."""
    return max(1, math.ceil(scale * math.log(d) ** 2))


PRESETS = {
    "quick": {"d_values": [64, 256, 1024], "seeds": 32},
    "standard": {
        "d_values": [2**6, 2**8, 2**10, 2**12, 2**14, 2**17, 2**20],
        "seeds": 128,
        "seeds_by_d": {2**20: 64},  # 64 x ~5 s: the one-step at d = 2^20, m = 97
    },
    "full": {
        "d_values": [2**6, 2**8, 2**10, 2**12, 2**14, 2**16, 2**18, 2**20],
        "seeds": 512,
        "device": "auto",
    },
}
