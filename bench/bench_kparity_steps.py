"""Target 12: the ``kparity-steps`` job (claim A1.k): population GD at a grid of step sizes,
``train.grid_descent`` against the loop it replaced (``reference_grid_descent``:
``Descent`` on a ``G``-fold copy of the model, autograd through the grouped loss).

One mid-size job of the full preset's shape: ``k = 3``, ``d = 1024``, ``m = 32``, the full
preset's 29 step sizes ``2^(j/2) d^k ln d`` (``j = -20 ... 8``), 8 seeds (the full preset has
128), budget 100 steps (the full preset: 1000; the longer the run, the more runs have frozen,
so the ratio at the full budget is higher). Both paths give the same records (checked here);
the ratio is old / new wall time, timed side by side. Target >= 5x.
"""

from __future__ import annotations

import numpy as np
from common import THREADS, alternating, median_ratio, profile_top, row, seconds

from attnsep.core.device import torch_threads
from attnsep.experiments import xor_kparity as kp
from attnsep.train.grid_descent import grid_descent, reference_grid_descent

K, D, M, SEEDS, BUDGET = 3, 1024, 32, 8, 100
EXPONENTS = [j / 2 for j in range(-20, 9)]


def job(seeds: int = SEEDS, budget: int = BUDGET):
    config = kp.config.Config(
        series=[{"k": K, "d_values": [D]}],
        m=M,
        seeds=seeds,
        eta_exponents=EXPONENTS,
        budget=budget,
    )
    return kp.run.train_config(K, D, M, config), kp.run.etas(K, D, config), budget


def run(rounds: int = 2) -> list[dict]:
    config, etas, budget = job()
    with torch_threads(THREADS):
        small = job(seeds=1, budget=3)
        grid_descent(*small), reference_grid_descent(*small)  # warm-up
        new = grid_descent(config, etas, budget)
        old = reference_grid_descent(config, etas, budget)
        same = all(
            np.array_equal(getattr(new, f), getattr(old, f))
            for f in ("first", "one_step", "collapsed")
        )
        ours, base = alternating(
            [
                lambda: grid_descent(config, etas, budget),
                lambda: reference_grid_descent(config, etas, budget),
            ],
            rounds,
        )
        ratio = median_ratio(base, ours)
        met = ratio >= 5.0 and same
        lines = None if met else profile_top(lambda: grid_descent(config, etas, budget), 10)
    note = (
        f"k={K}, d={D}, m={M}, {SEEDS} seeds, {len(etas)} step sizes (the full preset's grid), "
        f"budget {budget}: {SEEDS * len(etas)} runs; ratio = the old loop / grid descent, "
        f"{rounds} interleaved rounds, torch threads={THREADS}; records identical: "
        f"{'yes' if same else 'NO'}; grid descent evaluated {new.evaluated} of "
        f"{old.evaluated} run-steps (the rest frozen: theta unchanged to the bit)"
    )
    return [
        row(
            f"12 kparity-steps job k={K} d={D}, grid descent vs the old loop",
            seconds(ours),
            seconds(base),
            ratio,
            ">= 5x",
            met,
            note,
            lines,
        )
    ]


if __name__ == "__main__":
    for r in run():
        print(r)
