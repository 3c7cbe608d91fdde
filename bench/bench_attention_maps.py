"""Target 14: an ``attention-maps`` job (claim A7.3): population GD on sparse XOR at a grid of
step sizes for one attention map, the step sizes run together (``descent.GridDescent``:
one product with ``V`` per replica and step for the whole grid) against the loop it replaced
(``run_map(..., reference=True)``: one ``Descent`` per step size, two thin products of ``H = 2``
rows per replica and step each).

One mid-size job of the full preset's shape: softmax, ``d = 1024``, ``m = 64``, the full preset's
29 step sizes, 16 seeds (the full preset: ``d = 2048``, 128 seeds), a screen of 20 steps then
the budget of 60 at the 3 best (the full preset: 200 and 2000; its refine phase, 3 step sizes,
gains less than the screen, so the ratio of a full job is below the screen's). The records are
compared (equal to float64 rounding: step counts and outcomes identical, the largest relative
difference of a float reported); the ratio is old / new wall time, timed side by side.
"""

from __future__ import annotations

from common import THREADS, alternating, median_ratio, profile_top, row, seconds

from attnsep.core.device import torch_threads
from attnsep.experiments import xor_attention_maps as maps

NAME, D, M, SEEDS, SCREEN, BUDGET = "softmax", 1024, 64, 16, 20, 60
EXPONENTS = [k / 2 for k in range(29)]


def job(seeds: int = SEEDS, screen: int = SCREEN, budget: int = BUDGET) -> maps.config.Config:
    return maps.config.Config(
        d=D,
        m=M,
        seeds=seeds,
        maps=[NAME],
        eta_exponents=EXPONENTS,
        screen_steps=screen,
        budget=budget,
    )


def difference(old, new) -> float:
    """Largest relative difference of the floats of two records (anything else must be equal)."""
    if isinstance(old, dict):
        assert old.keys() == new.keys()
        return max((difference(old[k], new[k]) for k in old), default=0.0)
    if isinstance(old, list):
        assert len(old) == len(new)
        return max((difference(a, b) for a, b in zip(old, new, strict=True)), default=0.0)
    if isinstance(old, float) and isinstance(new, float) and old != new:
        return abs(old - new) / max(abs(old), abs(new))
    assert old == new
    return 0.0


def run(rounds: int = 2) -> list[dict]:
    config = job()
    with torch_threads(THREADS):
        small = job(seeds=1, screen=2, budget=3)
        maps.run.run_map(small, NAME), maps.run.run_map(small, NAME, reference=True)  # warm-up
        new = maps.run.run_map(config, NAME)
        old = maps.run.run_map(config, NAME, reference=True)
        try:
            gap: float | None = difference(old, new)
        except AssertionError:
            gap = None
        ours, base = alternating(
            [
                lambda: maps.run.run_map(config, NAME),
                lambda: maps.run.run_map(config, NAME, reference=True),
            ],
            rounds,
        )
        ratio = median_ratio(base, ours)
        met = ratio >= 3.0 and gap is not None and gap <= 1e-6
        lines = None if met else profile_top(lambda: maps.run.run_map(config, NAME), 10)
    note = (
        f"{NAME}, d={D}, m={M}, {SEEDS} seeds, {len(EXPONENTS)} step sizes (the full preset's "
        f"grid), screen {SCREEN} steps, budget {BUDGET} at the 3 best; ratio = the old loop / "
        f"grid, {rounds} interleaved rounds, torch threads={THREADS}; records: "
        + ("DIFFER beyond rounding" if gap is None else f"equal to a relative {gap:.1e}")
    )
    return [
        row(
            f"14 attention-maps job d={D}, step sizes together vs one Descent each",
            seconds(ours),
            seconds(base),
            ratio,
            ">= 3x",
            met,
            note,
            lines,
        )
    ]


if __name__ == "__main__":
    for r in run():
        print(r)
