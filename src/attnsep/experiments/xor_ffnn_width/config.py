"""A7.8's config: the input lengths, replicas and SGD budget of the width search (SPEC Part G,
item 2a), and its presets."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from ...configs import DType, XorFCNConfig, default
from ..base import ExperimentConfig

FCN_D = Annotated[int, Field(ge=2, le=8192)]
"""An input length of the FCN (the first layer holds ``width x d`` weights)."""


class Config(ExperimentConfig):
    """Per ``d``: ``w*(d)`` (the smallest hidden width at which ``>= 90%`` of ``seeds``
    SGD-trained replicas reach test sign error ``<= 1%`` on fresh samples) and ``P*(d) = w*(d +
    2) + 1``, each with a bootstrap 95% interval over the replicas.

    Criterion (a claim, SPEC Part G, item 2; criterion version 1). ``alpha_P`` and ``alpha_w``:
    the exponents of ``P* = c d^alpha_P`` and ``w* = c d^alpha_w`` (log-log least squares over
    at least 3 ``d``'s), each with a bootstrap 95% interval (replicas resampled, the threshold
    searches re-run on the stored probes; a draw not reached at a ``d`` below the mean ``ln d``
    reads ``-inf`` for a lower bound). **reproduced** when ``alpha_P``'s lower bound is ``>=
    0.8`` and ``alpha_w``'s upper bound is ``< 0.25``: the parameters grow linearly and the
    growth is the dense first layer's (the width adds at most a quarter of it). **not
    reproduced** when ``alpha_P``'s upper bound is ``< 0.8``
    (fewer than linear parameters suffice) or ``alpha_w``'s lower bound is ``>= 0.5`` (the width
    itself must grow: the linear dependency is not the first layer's alone). **inconclusive**
    otherwise (also ``alpha_w`` between 0.25 and 0.5: the width grows, but less than the rival's
    ``d^0.5``), or with fewer than 3 ``d``'s or 10 replicas per probe (with fewer, a rate
    ``>= 0.9`` asks every replica to succeed); the reason names the largest ``d`` that would
    decide.

    What the architecture makes unreachable: the first layer alone holds ``w (d + 2) + 1 >= 2d
    + 5`` parameters at any width that can succeed (``w >= 2``), so ``alpha_P = alpha_w`` plus
    nearly 1, and "fewer than linear parameters suffice" needs ``w*`` to fall like
    ``d^-0.2`` or faster. With ``w* >= 2`` that can only happen over a narrow range of ``d``
    that starts at a larger width (width 2 succeeds more often as ``d`` grows, docs/baselines.md:
    a narrow quick run with too few replicas can read it), never over a wide one; the
    ``Omega(d)`` half is structural. The test that can fail is the width's: whether the
    parameters grow through the first layer alone (``w*`` flat) or also through the width.
    """

    d_values: list[FCN_D] = Field(
        default=[16, 32, 64], description="Input lengths d (at least 3 for a verdict)."
    )
    seeds: int = Field(default=20, ge=1, le=1024, description="Replicas per probe.")
    steps: int = Field(
        default=default(XorFCNConfig, "steps"),
        ge=1,
        le=100_000,
        description="Most SGD steps of a replica (it stops once perfect on validation).",
    )
    width_limit: int = Field(default=256, ge=2, le=4096, description="Widest net probed.")
    dtype: DType = Field(default="float64", description="Precision of the FCN's training.")

    @model_validator(mode="after")
    def _sizes(self):  # noqa: ANN202
        if len(set(self.d_values)) != len(self.d_values):
            raise ValueError(f"d_values must be distinct, got {self.d_values}")
        if not self.d_values:
            raise ValueError("d_values is empty: give at least one input length")
        return self


# One core, float64, master seed 0: standard's jobs took 92 s at d = 1024, 14 s at 512, 3-9 s
# below (132 s in all); quick about 4 s of CPU. Full (float32, 32 seeds): d = 2048 holds 2 GiB of
# test inputs.
PRESETS = {
    "quick": {"d_values": [16, 32, 64], "seeds": 10, "steps": 500},
    "standard": {"d_values": [16, 32, 64, 128, 256, 512, 1024], "seeds": 20},
    "full": {"d_values": [2**k for k in range(4, 12)], "seeds": 32, "dtype": "float32"},
}
