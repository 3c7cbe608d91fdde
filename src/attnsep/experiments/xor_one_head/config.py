"""A7.10's config: the sizes, replicas, step rule and success bound (SPEC A7.10; Part G, item 8),
and its presets."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..base import ExperimentConfig

Dim = Annotated[int, Field(ge=4, le=1 << 16)]
NAMES = {"two": "two heads", "tied": "one head used twice", "one": "one head"}


class Config(ExperimentConfig):
    """Two heads, one tied head and one head on the same replicas (SPEC A7.10; Part G, item 8).

    Reported (a finding, no verdict): per ``d`` and model, (1) the certified success rate (SPEC
    A6: bound ``<= success_tol``; the tied head as two equal heads; one head has no certificate
    and its worst-case error is at least its root population loss ``>= 1``) after the first step
    and after ``budget`` steps, Wilson 95%; (2) the population loss before, after the step and
    after the budget, mean with a bootstrap 95% interval over replicas, and the lowest final
    loss; (3) the share of replicas whose first head puts its largest weight on a support bit
    after the step (Wilson; chance ``2/d``); (4) the best loss each model can reach at all: the
    tied head ``1/2`` (at ``g = (e_i + e_j)/2``), one head ``1 + 1/d`` (uniform weights), two
    heads 0. The first step is SPEC A5's (``eta = eta_scale d^2 ln d``), the others are capped so
    that no score moves by more than ``cap`` (``train.capped_descent``'s rule).
    """

    d_values: list[Dim] = Field(default=[64, 256], min_length=1, description="Input lengths d.")
    schedule_scale: float = Field(
        default=0.5, gt=0, le=100, description="c of A7.1's width schedule m(d) = ceil(c (ln d)^2)."
    )
    seeds: int = Field(default=32, ge=1, le=4096, description="Replicas per d (A7.1's).")
    eta_scale: float = Field(default=16.0, gt=0, le=1e6, description="SPEC A5's eta constant.")
    budget: int = Field(default=20, ge=1, le=10_000, description="Gradient steps in all.")
    cap: float = Field(default=4.0, gt=0, le=1e3, description="Largest score move of a later step.")
    success_tol: float = Field(default=0.1, gt=0, le=10, description="SPEC A6's success bound.")


PRESETS = {
    "quick": {"d_values": [64, 256], "seeds": 32, "budget": 20},
    "standard": {"d_values": [64, 256, 1024, 4096], "seeds": 64, "budget": 50},
    "full": {"d_values": [2**6, 2**8, 2**10, 2**12, 2**14], "seeds": 128, "budget": 100},
}
