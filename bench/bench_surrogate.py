"""Target 11: the Gaussian surrogate of the empirical gradient vs exact sampling at d = 256.

Both take one step on the same replicas (embeddings, supports, initial queries):
``run_one_step(OneStepConfig(d=256, seeds=SEEDS, samples=N))`` draws the ``N x d`` inputs of every
replica; with ``gradient="surrogate"`` it adds Gaussian noise of the exact per-sample covariance
over ``N`` instead (``attnsep.train.surrogate``). Exact sampling costs ``O(N d)`` a replica, the
surrogate ``O(d m)`` and a ``2m x 2m`` square root, whatever ``N``: the ratio grows like ``N``.
``N = 2^19``: A7.5's ``n*(256)`` in the standard run (5.2e5); the exact side takes about half a
minute (one thread).
"""

from __future__ import annotations

from common import THREADS, clock, median_ratio, row, seconds

from attnsep.one_step import OneStepConfig, run_one_step

D, SEEDS, N = 256, 32, 2**19


def run(rounds: int = 1) -> list[dict]:
    config = OneStepConfig(d=D, seeds=SEEDS, samples=N, device="cpu")
    surrogate = config.replace(gradient="surrogate")
    out: dict = {}
    run_one_step(surrogate.replace(seeds=2))  # warm-up
    t_exact, t_ours = [], []
    for _ in range(rounds):
        t_exact.append(clock(lambda: out.update(exact=run_one_step(config))))
        t_ours.append(clock(lambda: out.update(ours=run_one_step(surrogate))))
    ratio = median_ratio(t_exact, t_ours)
    exact_rate, ours_rate = out["exact"].success.mean(), out["ours"].success.mean()
    note = (
        f"d={D}, m=32, {SEEDS} replicas, n={N}: success rate exact {exact_rate:.2f}, surrogate "
        f"{ours_rate:.2f}; ratio = exact / surrogate time, {rounds} round(s), torch threads="
        f"{THREADS}"
    )
    return [
        row(
            f"11 surrogate vs exact sampling, d={D}, n=2^19",
            seconds(t_ours),
            seconds(t_exact),
            ratio,
            ">= 100x",
            ratio >= 100,
            note,
        ),
    ]


if __name__ == "__main__":
    for r in run():
        print(r)
