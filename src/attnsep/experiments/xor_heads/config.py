"""A7.4's config: the sizes of the fixed-width and the schedule series, the inits and the
replicas (SPEC A7.4, Parts D-F; the criterion in the docstring), and the presets."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from ...configs import Device, Init, OneStepConfig, inherit
from ...core.validate import require
from ..base import ExperimentConfig, Positive
from ..xor_one_step import config as one_step


class Config(ExperimentConfig):
    """Per-head weight on its support bit after one population step, for the anti-symmetric and
    the independent initialization, and the step's alignment with the support (SPEC A7.4).

    Outcome per replica: both heads put >= 0.9 of their weight on distinct support bits
    (specialized, and the smaller of the two heads' weights on their assigned bits >= 0.9).

    Alignment (SPEC Part E, A7.4; ``metrics.alignment``), per replica, from the step actually
    taken, ``Delta s_h = V (theta_h' - theta_h) = -eta V g_h`` (``E x H x d``):

    * *each head's own bit* is fixed before the step: the one-to-one assignment of the heads to
      ``{i*, j*}`` with the largest sum of their initial scores (equivalently the largest
      product of their initial weights). Under the paper's anti-symmetric init ``s_2 = -s_1``,
      so it is the support bit each head's initial score favours: the asymmetry the paper says
      the step amplifies. It does not look at the outcome (the bit a head ends on would select
      the larger of two changes and bias the ratio up); how often the heads end on their own
      bits is reported beside it (``own_kept``);
    * the *signed* change ``Delta s_h`` at the own bit (negative when the step lowers it);
    * the *largest ambient change* ``max_{a not in S} |Delta s_h,a|``: the paper compares the
      size of the gradient's alignment with relevant and with ambient positions, and it bounds
      the ambient ones in absolute value (near-orthogonal embeddings); it is also the stricter
      choice (a large negative change at an ambient position counts against the ratio although
      it does not compete for the weight);
    * the replica's ratio is the smaller of its two heads' ``own change / ambient`` (a replica
      is aligned when both heads are; one number per replica keeps the replicas independent),
      summarized by its median with the distribution-free 95% interval of ``median_ranks``
      (binomial order statistics). ``eta`` cancels in the ratio.

    Criterion (criterion version 4, SPEC Parts E and F; written after master seeds 0, 1 and 3
    were seen, so their runs are exploratory). The paper: the anti-symmetric init "ensures
    maximal initial separation, encouraging the two heads to specialize", and the step amplifies
    it, "ensuring that one head attends to i* and the other to j*". "Ensures" asks that, under
    the anti-symmetric init, specialization be the rule at every size, and, since the init is
    credited for it, that the anti-symmetric init do no worse than the independent one; the
    paper says nothing of how often the independent init specializes, so its rate has no bound.
    Three conditions, (a) and (b) on the fixed-width series at every ``d >= 256``:

    (a) *specialization*, anti-symmetric init: the on-target rate is >= 0.9 with
        Wilson lower bound >= 0.8;
    (b) *the init comparison*: the difference of on-target rates, anti-symmetric
        minus independent, has a 95% interval (Newcombe's hybrid score interval, from the two
        Wilson intervals) whose upper end is >= 0, i.e. the anti-symmetric rate is not
        interval-separated below the independent one; both rates, their intervals and the
        difference are reported;
    (c) *alignment*, anti-symmetric init, on the schedule series: the median ratio's 95% lower
        bound (``ratio_median``) is >= 1.2 at every ``d >= 2^10``.

    *Reproduced* when (a), (b) and (c) hold; *not reproduced* when at the largest fixed-width
    ``d`` the anti-symmetric rate's Wilson upper bound is < 0.9, or at the largest schedule ``d``
    the median ratio's upper bound is <= 1.2; *inconclusive* otherwise (the reason says which
    condition, at which sizes, and how many seeds would decide; an anti-symmetric rate
    interval-separated below the independent one is named there). The schedule's on-target
    rates and the fixed width's ratios are reported, not judged.
    """

    d_values: list[Annotated[int, Field(ge=3)]] = Field(default=[64, 256])
    m: int = inherit(OneStepConfig, "m")
    schedule_d_values: list[Annotated[int, Field(ge=3)]] = Field(default=[256, 1024])
    schedule_scale: float = inherit(one_step.Config, "schedule_scale")
    inits: list[Init] = Field(default=["antisymmetric", "independent"], min_length=1)
    seeds: Positive = 64
    seeds_schedule: Positive = 64
    shown: Positive = 4
    eta_scale: float = inherit(OneStepConfig, "eta_scale")
    device: Device = "cpu"

    @model_validator(mode="after")
    def _some_size(self) -> Config:
        require(
            bool(self.d_values or self.schedule_d_values),
            "d_values and schedule_d_values may not both be empty",
        )
        return self


PRESETS = {
    "quick": {"d_values": [64, 256], "schedule_d_values": [2**8, 2**10], "seeds": 64},
    "standard": {
        "d_values": [256, 1024, 4096],
        "seeds": 1024,
        # 2 inits x 256 replicas: 4-7 min on 2 cores, two thirds of it at d = 2^16
        # (m = 62; step and alignment 0.5-0.65 s a replica, measured on a loaded machine)
        "schedule_d_values": [2**8, 2**10, 2**12, 2**14, 2**16],
        "seeds_schedule": 256,
    },
    "full": {
        "d_values": [256, 1024, 4096, 16384, 65536],
        "seeds": 1024,
        "schedule_d_values": [2**k for k in range(8, 17)],
        "seeds_schedule": 1024,
        "device": "auto",
    },
}
