"""A7.5's config: the sizes, widths, search and multi-step settings (SPEC A7.5, Part E, F),
and its presets."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from ...configs import Device, OneStepConfig, inherit
from ..base import ExperimentConfig, InputLength, Positive

Width = Literal["fixed", "schedule"]


class Config(ExperimentConfig):
    """``n*(d)``: the smallest ``n = round(2^(k/2))`` (half-octave grid, searched on ``k`` by
    doubling an offset from ``n_start_per_d * d``, then bisection, up to the guard) whose success
    rate after ONE empirical gradient step on ``n`` samples reaches ``target`` x the population
    step's success rate on the same replicas (SPEC A6 certified success; at small ``d`` the
    population step itself saturates below 1 by collapse). Same ``seeds`` replicas at every probe.

    The search ends at the guard ``n_guard``: for A7.5a's searches (certified, fixed width) the
    first grid point at or above ``d^4 (ln d)^2`` (its not-reproduced line), for the others (read
    by A7.5b alone) the one at ``d^4``, or the last one ``<= n_max`` where ``n_max`` is smaller
    (A7.5a's at ``standard``: ``d = 32``, ``n_max = 2^22 < 2^23.6``; at ``quick``: ``d = 16, 32``).
    Guard probes climb two octaves at a time up to it, through ``d^4``, while some population
    success fails the largest probe (``search.search_samples``). *Stuck* replicas succeed
    in population but fail at ``n_guard``. Their rate among the population successes is reported
    per ``d`` with its Wilson 95% interval, and ``n*`` is the threshold of the other replicas
    (target x their population rate; ``search.refine`` probes the grid points this needs),
    with a bootstrap 95% interval over those replicas, probes and population reference resampled
    together; they all pass at ``n_guard``, so it closes there (open upwards only where every
    population success is stuck).

    Criterion (A7.5a; version 4, SPEC Part E, F, written after the master seeds 0, 1 and 3 were
    seen, so its confirmatory runs are on other seeds): Corollary 3 is a sufficiency bound,
    checked as a bound at every ``d`` on two numbers. The target leaves ``0.1`` of the population
    successes: a stuck share above it puts ``n*`` of all replicas above ``n_guard``, i.e. above
    ``d^4 (ln d)^2`` where the guard reaches it. **reproduced**: at least 3 values of ``d``, and at
    every ``d`` the non-stuck ``n*``'s upper end ``<= d^4`` and the stuck share's lower end
    ``<= 0.1`` (the share is not shown above the slack; asking its upper end ``<= 0.1`` had
    power 0.66 at ``standard`` with 3 of 107 stuck at ``d = 16``, and 0 at ``quick``). **not
    reproduced**: at some ``d`` whose guard reaches ``d^4 (ln d)^2``, the stuck share's lower end
    ``> 0.1``: there more than a tenth of the population successes need more samples than
    ``d^4 (ln d)^2``. **inconclusive**: otherwise; the reason names the ``d`` and what would
    decide (a larger ``n_max`` where the guard stops below ``d^4 (ln d)^2``; more seeds or
    probes where ``n*``'s upper end exceeds ``d^4``). Version 3's other not-reproduced condition,
    the non-stuck ``n*``'s lower end above ``d^4 (ln d)^2``, is dropped: those replicas all pass
    at ``n_guard``, the grid point just above the line, so their ``n*``'s lower end, widened by
    the half-octave grid, cannot exceed it; a contradiction shows as stuck replicas. ``n*/d^4``
    per ``d`` and the exponent ``alpha`` of ``n* = c d^alpha`` with its interval are reported,
    not judged (the exponent is A7.5b's).

    Multi-step (A7.5b, a finding): per ``d`` of ``multistep_d_values``, ``multistep_steps``
    full-batch GD steps of ``eta / multistep_steps`` each (``eta`` the one step's, *choice*: the
    same total step) on one fixed set of ``n`` samples, exact sampling, the fixed width, the same
    search and success definitions from ``multistep_n_start_per_d * d`` up to
    ``multistep_n_max`` (and at most ``2^27 / d``: a replica's set is held),
    ``multistep_seeds`` replicas (``multistep_seeds_by_d`` where given).

    ``widths``: the fixed ``m`` and/or the schedule ``m(d) = ceil(schedule_scale (ln d)^2)``
    (A7.1's); A7.5a reads the fixed width, A7.5b (``xor_samples.growth``) both. Test success: sign
    error at most ``1 - test_accuracy`` on ``test_samples`` fresh inputs. From ``d =
    surrogate_from`` on (``None``: never) the step's gradient on ``n`` samples is the Gaussian
    surrogate (``train.surrogate``; validated against exact sampling in docs/surrogate.md).
    """

    d_values: list[InputLength] = Field(default=[16, 32, 64])
    m: int = inherit(OneStepConfig, "m")
    widths: list[Width] = Field(default=["fixed", "schedule"], min_length=1)
    schedule_scale: float = Field(default=0.5, gt=0, le=1e6)
    seeds: Positive = 64
    target: float = Field(default=0.9, gt=0, le=1)
    n_start_per_d: float = Field(default=16.0, gt=0)
    n_max: Positive = 2**20
    surrogate_n_max: Positive = 2**60
    test_samples: Positive = 4096
    test_accuracy: float = Field(default=0.99, gt=0, le=1)
    surrogate_from: InputLength | None = None
    device: Device = "cpu"
    multistep_d_values: list[InputLength] = Field(default=[])
    multistep_steps: Positive = 4
    multistep_seeds: Positive = 64
    multistep_seeds_by_d: dict[int, Positive] = Field(default={})
    multistep_n_start_per_d: float = Field(default=4.0, gt=0)
    multistep_n_max: Positive = 2**17

    @model_validator(mode="after")
    def _has_sizes(self):  # noqa: ANN202
        if not (self.d_values or self.multistep_d_values):
            raise ValueError("d_values and multistep_d_values are both empty")
        return self

    def n_limit(self, d: int) -> int:
        """The largest ``n`` the search may reach at ``d`` (it ends at the guard, ``d^4 (ln d)^2``
        where smaller): ``surrogate_n_max`` where the surrogate steps (a step costs the same at
        any ``n``; ``2^60`` reaches the guard to ``d = 2^13``), ``n_max`` where samples are
        drawn."""
        return self.surrogate_n_max if self.surrogated(d) else self.n_max

    def surrogated(self, d: int) -> bool:
        """Whether one step on ``n`` samples at ``d`` is the Gaussian surrogate's."""
        return self.surrogate_from is not None and d >= self.surrogate_from


PRESETS = {
    "quick": {
        "d_values": [16, 32, 64],
        "seeds": 32,
        "n_max": 2**17,
        "surrogate_from": 64,
        "multistep_d_values": [16, 32, 64],
        "multistep_seeds": 32,
        "multistep_n_max": 2**16,
    },
    "standard": {
        "d_values": [2**k for k in range(4, 13)],
        "seeds": 128,
        "n_max": 2**22,
        "surrogate_from": 64,
        "multistep_d_values": [16, 32, 64, 128, 256],
        "multistep_seeds": 64,
        "multistep_seeds_by_d": {256: 32},
        "multistep_n_max": 2**17,
    },
    "full": {
        "d_values": [2**k for k in range(4, 15)],
        "seeds": 256,
        "n_max": 2**26,
        "surrogate_from": 64,
        "device": "auto",
        "multistep_d_values": [2**k for k in range(4, 10)],
        "multistep_seeds": 128,
        "multistep_n_max": 2**18,
    },
}
