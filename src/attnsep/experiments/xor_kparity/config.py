"""A1.k's config: the ``(k, d, m)`` series, the step-size grid, the step rules and gradients
(SPEC A1, A6; Part F's finding A1.k), and its presets."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ...configs import Device, Init, XorTrainConfig, inherit
from ..base import ExperimentConfig, Exponent, InputLength, Positive

Rule = Literal["constant", "capped"]
Gradient = Literal["population", "fixed"]
RULE_NAMES = {"constant": "plain GD", "capped": "capped step"}
SCORE_CAP = 4.0
"""The cap on a step's largest score change (*choice*): on the development seed (master seed 1,
128 replicas, ``m = 32``, budget 100, ``k = 3, 4``, ``d = 16, 32, 64``, ``eta = 2^j d^k ln d``
for ``j = -10, -8, ..., 0``), every cap from 0.5 to 4 left no replica collapsed at any step size
(6 and 8: up to 2% and 3% at one step size, ``k = 4``) and none unreached within the budget at
the best step size (6 and 8: up to 7% and 12% at ``k = 4``); 4 is the largest such cap, at a
median of 4 to 5 steps to success (0.5: 15 to 22; plain GD 2 to 5)."""


class Series(BaseModel):
    """The sizes ``d`` at which ``k``-parity is run (at the main width ``m``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    k: int = Field(ge=2, le=4)
    d_values: list[InputLength] = Field(min_length=1)


class Config(ExperimentConfig):
    """Steps of GD to success for ``k``-sparse parity with ``k`` heads, and how often the heads
    collapse, vs ``d`` (width ``m``) and vs ``m`` (at ``d = width_d``), for plain GD and for the
    capped step.

    Runs: for each ``(k, d, m)``, each step-size rule of ``rules`` and each ``eta = 2^j d^k ln
    d`` of ``eta_exponents`` (the ``j``'s), ``seeds`` replicas run up to ``budget`` steps on the
    exact population gradient; at ``d <= samples_d_max`` (the ``d`` series) also on one fixed
    set of ``samples`` inputs per replica (``gradients``), at the ``j``'s of
    ``samples_eta_exponents``. Rules: ``constant`` is plain GD; ``capped`` shortens each step so
    that no score ``v_a . theta_h`` moves by more than ``score_cap`` (``train.capped_descent``).

    Initialization (SPEC A2, *choice* for ``k >= 3``): ``init``, used for ``k >= 3`` (``k = 2``
    always starts anti-symmetric). The default ``antisymmetric`` is, for ``k`` heads, the regular
    simplex centred at 0 in a uniformly random orientation (unit norms, pairwise inner products
    ``-1/(k-1)``); ``orthogonal`` (a random orthonormal frame) and ``independent`` are options.
    A replica collapses (here ``metrics.parity.collapsed``: every head on a support bit, two on
    one) mostly when the heads' first preferences
    (each head's largest score ``v_a . theta_h`` among the support bits) are not a permutation:
    at ``k = 3, d = 64`` (128 seeds, ``eta = 2^-4 d^k ln d``) 1 of 66 such starts collapsed,
    17 of the 62 others. For unit-norm heads with one pairwise inner product, that chance falls
    as the inner product rises, so the simplex, with the most negative one, gives the most: 0.51
    at ``k = 3`` and 0.25 at ``k = 4``, against 0.22 and 0.09 for an orthogonal frame (a simplex
    shrunk by ``sqrt((k-1)/k)`` plus a direction common to all heads). Collapse at the best step
    size, simplex / orthogonal (seed 0, 128 seeds, ``m = 32``, ``j = -6 ... 4``, budget 200):
    ``k = 3``: 0.09 / 0.11 at ``d = 16``, 0.14 / 0.21 at ``d = 64``; ``k = 4``: 0.25 / 0.34 at
    ``d = 16``, 0.29 / 0.30 at ``d = 64``.

    Why, and what removes it (development seed 1, 128 replicas, ``m = 32``, budget 100, the
    simplex start; collapse as the finding defines it below): collapse is a large-step effect.
    Plain GD's collapse at ``k = 3``, ``d = 16, 32, 64`` is 0, 0.01, 0.01 at ``j = -10``; 0.09,
    0.27, 0.18 at ``j = -4``; 0.42, 0.49, 0.53 at ``j = -2``; at ``k = 4``, ``d = 64`` it falls
    from 0.20 at ``j = -10`` to 0.02 at ``j = -14`` (budget 1500): close to gradient flow the
    heads separate, but only after tens of steps. Tried (collapse at ``k = 3``, ``d = 16 ...
    64``, at the best step size below): a warm-up of 4 steps at ``eta / 16`` (0.09-0.27), a
    doubling ramp from ``eta / 32`` (0.04-0.29), per-head random norms ``exp(0.5 z)``
    (0.13-0.46), norms halving from head to head (0.23-0.36), per-head step factors ``4^-h``
    (0.13-0.21) and ``16^-h`` (0.02-0.20): none stays under 0.05. The capped step leaves no
    replica collapsed at any step size of the grid, at ``k = 3`` and 4, for every cap from 0.5
    to 4 (``SCORE_CAP``); at 1000 fixed samples (the fixed-sample grid) the cap 4 leaves none at
    ``k = 3`` and at most 2 of 128 at ``k = 4``, where at ``d = 64`` few replicas succeed with
    either rule (the heads settle on non-support bits: *stuck*).

    Finding (version 3, SPEC Part F: beyond the papers, no verdict and no calibration; written
    after master seeds 0, 1 and 3 were seen): a replica's *steps to success* is the first step
    with certified error ``<= success_tol`` (SPEC A6); it is *collapsed* when it never succeeds
    within the budget and, after the last step, two heads put their largest weight on the same
    support bit, whatever the other heads do (SPEC A6's collapse), *stuck* when it never
    succeeds and is not collapsed. For each ``(k, d, m)``, rule and gradient, the *best step
    size* is the grid point with the fewest median steps to success over all replicas
    (unreached: infinite), ties to the larger share succeeding, then the smaller step. At it:
    the collapse rate with its Wilson 95% interval; the median steps to success among the
    non-collapsed replicas (a stuck one counts as infinite) with its bootstrap 95% interval over
    them; the stuck rate; and beside them the one-step rate (the largest share, over the grid,
    that succeeds after exactly one step, Wilson). The reason states, for each gradient, whether
    the capped step's collapse rate is ``<= 0.05`` at ``k = 3`` and every ``d <= 64`` (point
    estimates, with the largest Wilson upper end), beside plain GD's.
    """

    series: list[Series] = Field(default=[Series(k=3, d_values=[16, 32, 64, 128])])
    m: int = inherit(XorTrainConfig, "m")
    m_values: list[Positive] = Field(default=[])
    width_k: int = Field(default=3, ge=2, le=4)
    width_d: InputLength = 64
    seeds: Positive = 16
    eta_exponents: list[Exponent] = Field(default=[-4.0, -2.0, 0.0, 2.0], min_length=1)
    budget: Positive = 100
    success_tol: float = inherit(XorTrainConfig, "success_tol")
    init: Init = inherit(XorTrainConfig, "init")
    rules: list[Rule] = Field(default=["constant", "capped"], min_length=1)
    """Step-size rules: ``constant`` (plain GD) and ``capped`` (``train.capped_descent``)."""
    score_cap: float = Field(default=SCORE_CAP, gt=0)
    """The capped step's largest score change per step."""
    gradients: list[Gradient] = Field(default=["population", "fixed"], min_length=1)
    """``population``: the exact gradient; ``fixed``: one set of ``samples`` inputs."""
    samples: Positive = 1000
    samples_d_max: int = Field(default=64, ge=0)
    """The fixed-sample runs' largest ``d`` (the ``d`` series only)."""
    samples_eta_exponents: list[Exponent] = Field(default=[-8.0, -6.0, -4.0], min_length=1)
    """The fixed-sample runs' step sizes ``2^j d^k ln d``."""
    device: Device = "cpu"


PRESETS = {
    "quick": {
        "series": [{"k": 3, "d_values": [16, 32, 64, 128]}],
        "m_values": [],
        "seeds": 16,
        "eta_exponents": [-8.0, -6.0, -4.0, -2.0],
        "budget": 100,
    },
    "standard": {
        "series": [
            {"k": 3, "d_values": [16, 32, 64, 128, 256, 512, 1024]},
            {"k": 4, "d_values": [16, 32, 64, 128, 256, 512, 1024]},
        ],
        "m_values": [8, 16, 64],
        "width_k": 3,
        "width_d": 256,
        "seeds": 64,
        "eta_exponents": [-10.0, -8.0, -6.0, -4.0, -2.0, 0.0],
        "budget": 100,
    },
    "full": {
        "series": [
            {"k": 3, "d_values": [2**j for j in range(4, 14)]},
            {"k": 4, "d_values": [2**j for j in range(4, 11)]},
        ],
        "m_values": [8, 16, 64, 128],
        "width_d": 1024,
        "seeds": 128,
        "eta_exponents": [j / 2 for j in range(-20, 9)],
        "budget": 1000,
        "device": "auto",
    },
}
