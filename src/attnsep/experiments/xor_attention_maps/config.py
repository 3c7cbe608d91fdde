"""A7.3's config: the maps, the sizes, the eta grid and the step budget (SPEC A7.3, Parts D-F),
its presets, and the sizes a config runs."""

from __future__ import annotations

from typing import Final

from pydantic import Field

from ...configs import AttentionName, Device
from ..base import ExperimentConfig, Exponent, InputLength, Positive

SOFTMAX: Final = "softmax"
PAPER_MAPS: tuple[AttentionName, ...] = (SOFTMAX, "linear", "erf")
"""The maps the papers compare (SPEC Part E, A7.3); every other map run belongs to A7.3b."""
RIVALS = PAPER_MAPS[1:]
Size = tuple[int, int]
"""``(d, m)``: the size of a run."""

BEYOND: tuple[AttentionName, ...] = ("normalized-erf", "shifted-erf")
"""The maps beyond the papers that every preset runs (SPEC Part D, A7.3)."""
SEPARATORS = (
    "floored-softmax",
    "shifted-exp",
    "shifted-cauchy",
    "normalized-sigmoid",
    "normalized-softplus",
    "sparsemax",
    "entmax-1.5",
    "softmax-t0.03",
    "softmax-t0.1",
    "softmax-t10",
    "softmax-t30",
)
"""The maps A7.3b adds at the standard and full sizes (SPEC Part E): each keeps some of
softmax's properties (``attention.Properties``) and drops others, and softmax at four other
temperatures; ``quick`` runs the first only (normalized and one-hot capable, but neither
shift-invariant nor light-tailed)."""


class Config(ExperimentConfig):
    """Steps of population GD to loss <= ``target`` per attention map, each at its best eta.

    Sizes: every map of ``maps`` runs at ``(d, m)``; the papers' maps among them (softmax,
    linear, erf) run at each of ``paper_sizes`` too. Defaults (fixed before any numbers at these
    sizes): ``d = 64`` with ``m = 128`` and ``m = 64`` (``m >= d``: the rows of ``V`` span
    ``R^d``, so the scores ``V theta`` can be any vector), and the papers' maps at ``d = 256,
    m = 32`` as before, where linear and erf cannot put on one position the weight the target
    needs.

    Best eta (fixed before any numbers): the grid point with the smallest median
    steps-to-target over the replicas (never reached within the budget counts as infinite),
    ties broken by the smaller median final loss; an eta at which any replica's loss, gradient
    or query vectors become non-finite is recorded as diverged and never chosen. When
    ``screen_steps < budget`` the grid is screened first: every grid point runs
    ``screen_steps`` steps and is ranked by that rule on the screen; the ``refine``
    best-ranked points then run the whole budget (GD is deterministic, so they continue from
    the screen) and the best eta is chosen among them.

    Criterion (version 3, SPEC Parts E-F, written after master seeds 0, 1 and 3 were seen at d =
    256, m = 32 and seed 0 at the new sizes while timing them, so its confirmatory runs are on other
    seeds): A7.3 is judged on the papers' maps (softmax, linear, erf) at each size run with m >= d,
    and at those sizes only. At one such size: reproduced when softmax's median steps-to-target is 1
    and its specialization rate after the budget is >= 0.9, linear and erf each need >= 10x
    softmax's median steps (or never reach the target within the budget) and specialize less often
    with separated intervals (Wilson upper bound below softmax's Wilson lower bound), and at least
    one of them can represent the target there (its ceiling's lower end reaches the weight the
    target needs), so that the comparison is one of learning; not reproduced when linear or erf
    matches softmax on both (median steps < 10x softmax's and a specialization Wilson interval that
    overlaps or exceeds softmax's); inconclusive otherwise, naming the map and whether more seeds or
    a larger step budget would decide. Over the sizes: not reproduced when any size is, reproduced
    when every size is, inconclusive otherwise or when no size with m >= d was run. Expressivity:
    beside each map its ceiling, the largest weight it puts on one position per unit of total
    weight, |gamma_i| / max(1, ||gamma||_1) over theta (per replica's embeddings; median with a
    bootstrap interval), and the weight the target needs: the smaller of the share on the support
    bit of the most spread-out weights at loss <= target and sqrt((1 - sqrt(target)) / 2), what
    weights of total at most 1 need. A map whose ceiling's upper end is below half the needed weight
    cannot reach the target at any step size: its "never" holds by expressivity, and the reason says
    so, not learning (erf, whose weights stay below 1/d, at every m); its specialization, which
    needs only its largest weights on the support bits, stays a comparison of learning. The sizes
    with m < d are reported as A7.3c, a finding (expressivity), and the other maps run at (d, m) as
    A7.3b, a finding beyond the papers.
    """

    d: InputLength = 64
    m: Positive = 128
    paper_sizes: list[Size] = Field(default=[(64, 64), (256, 32)])
    """Further ``(d, m)`` at which the papers' maps of ``maps`` run (A7.3 at ``m >= d``, A7.3c
    at ``m < d``)."""
    seeds: int = Field(default=64, ge=1)
    maps: list[AttentionName] = Field(default=[*PAPER_MAPS, *BEYOND], min_length=1)
    eta_exponents: list[Exponent] = Field(default=[k / 2 for k in range(25)], min_length=1)
    budget: Positive = 1000
    screen_steps: Positive | None = 100
    refine: Positive = 3
    target: float = Field(default=0.01, gt=0)
    device: Device = "cpu"


def sizes(config: Config) -> list[tuple[int, int, list[str]]]:
    """``(d, m, maps)`` of every size run: all of ``maps`` at ``(d, m)``, the papers' maps among
    them at each further size of ``paper_sizes``."""
    out = [(config.d, config.m, list(config.maps))]
    paper = [name for name in config.maps if name in PAPER_MAPS]
    for d, m in dict.fromkeys(config.paper_sizes):
        if (d, m) != (config.d, config.m) and paper:
            out.append((d, m, paper))
    return out


PRESETS = {
    "quick": {
        "d": 64,
        "m": 128,
        "paper_sizes": [(64, 64), (256, 32)],
        "seeds": 32,
        "budget": 40,
        "screen_steps": None,
        "eta_exponents": list(range(0, 13, 2)),
        "maps": [*PAPER_MAPS, *BEYOND, SEPARATORS[0]],
    },
    "standard": {
        "d": 64,
        "m": 128,
        "paper_sizes": [(64, 64), (256, 32)],
        "seeds": 64,
        "budget": 1000,
        "screen_steps": 100,
        "maps": [*PAPER_MAPS, *BEYOND, *SEPARATORS],
    },
    "full": {
        "d": 256,
        "m": 512,
        "paper_sizes": [(256, 256), (2048, 64)],
        "seeds": 128,
        "budget": 2000,
        "screen_steps": 200,
        "eta_exponents": [k / 2 for k in range(29)],
        "maps": [*PAPER_MAPS, *BEYOND, *SEPARATORS],
        "device": "auto",
    },
}
