"""A3's config: the ``(d, m)`` sizes, the losses, the replicas and the step (SPEC A3; Part G,
item 3), and its presets."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from ..base import ExperimentConfig

CUBE_D_MAX = 10
"""The largest ``d`` at which the ``cube`` loss runs (the CLS forward on all ``2^d`` inputs)."""

Dim = Annotated[int, Field(ge=2, le=4096)]
Width = Annotated[int, Field(ge=1, le=512)]
Loss = Literal["population", "cube"]


class Config(ExperimentConfig):
    """Side-by-side gradient descent of the CLS transformer and the query-vector model (SPEC A3;
    SPEC Part G, item 3), at each ``(d, m)`` of ``sizes`` and each loss of ``losses``
    (``cube`` only at ``d <= 10``).

    Measured per replica: the largest deviation ``D`` over the ``steps + 1`` evaluations of
    ``|L_cls - L_qv|`` and ``max_{h,i} |gamma_cls - gamma_qv|`` (absolute; both quantities are
    of order 1); the rounding twin's deviation ``T`` (the query-vector model started one ulp,
    ``2^-52`` relative, off ``theta_0``); the control's deviation ``C`` (the CLS block trained on
    ``W_Q`` and ``W_K``: a wrong map of the training step).

    Criterion (written before any number was seen), on the *conditioned* replicas
    (``T <= 1e-12``: the trajectory amplifies rounding at most about 4500-fold; chaotic ones are
    counted and reported, not judged): **reproduced** when every size has at least half of its
    replicas conditioned, the largest ``D`` over all of them is ``<= 1e-9`` (``4.5e6`` float64
    rounding units on order-1 quantities) and the control's deviation exceeds ``1e-6`` on every
    conditioned replica (the run could have shown a mismatch); **not reproduced** when some
    conditioned replica has ``D > 1e-6`` (the size of a real mismatch: the control's); else
    **inconclusive** (deviations between the two, too few conditioned replicas, or a control
    that does not show its mismatch: then a larger ``steps`` or smaller ``eta_scale`` decides).
    Reported with intervals: per size the largest ``D`` (bootstrap over replicas), the share
    conditioned (Wilson), the control's smallest deviation (bootstrap).
    """

    sizes: list[tuple[Dim, Width]] = Field(
        default=[(8, 4), (16, 8), (64, 16)], min_length=1, description="(d, m) pairs."
    )
    losses: list[Loss] = Field(
        default=["population", "cube"], min_length=1, description="Losses trained on."
    )
    seeds: int = Field(default=8, ge=1, le=4096, description="Replicas per size and loss.")
    steps: int = Field(default=10, ge=1, le=10_000, description="Gradient steps.")
    eta_scale: float = Field(
        default=1.0, gt=0, le=1e3, description="eta = eta_scale d^2 ln d (SPEC A5's form)."
    )

    @model_validator(mode="after")
    def _some_job(self):  # noqa: ANN202
        if not jobs_of(self):
            raise ValueError(f"the cube loss alone needs some d <= {CUBE_D_MAX}, got {self.sizes}")
        return self


def jobs_of(config: Config) -> list[tuple[int, int, str]]:
    """``(d, m, loss)`` of every job: each size with each loss (``cube`` where ``d <= 10``)."""
    return [
        (d, m, loss)
        for d, m in config.sizes
        for loss in config.losses
        if loss == "population" or d <= CUBE_D_MAX
    ]


PRESETS = {
    "quick": {"sizes": [(8, 4), (16, 8), (64, 16)], "seeds": 8, "steps": 10},
    "standard": {
        "sizes": [(6, 4), (8, 4), (16, 8), (64, 16), (128, 20), (256, 24)],
        "seeds": 32,
        "steps": 20,
    },
    "full": {
        "sizes": [(8, 4), (10, 6), (16, 8), (64, 16), (256, 24), (512, 28), (1024, 32)],
        "seeds": 64,
        "steps": 40,
    },
}
