"""Target 11: the Gaussian surrogate of the empirical gradient vs exact sampling at d = 256.

Both take one step on the same replicas (embeddings, supports, initial queries):
``run_one_step(OneStepConfig(d=256, seeds=SEEDS, samples=N))`` draws the ``N x d`` inputs of every
replica; with ``gradient="surrogate"`` it adds Gaussian noise of the exact per-sample covariance
over ``N`` instead (``attnsep.train.surrogate``). Exact sampling costs ``O(N d)`` a replica, the
surrogate ``O(d m)`` and a ``2m x 2m`` square root, whatever ``N``: the ratio grows like ``N``.
``N = 2^19``: A7.5's ``n*(256)`` in the standard run (5.2e5); the exact side takes about half a
minute (one thread).

Row 11b is how A7.5 uses it: a search's probes ``n = 2^15 ... 2^19`` (five, each octave) on the
same replicas by ``sample_steps.SampleSteps``, which draws the surrogate's noise direction once
per replica and rescales it per ``n``; exact sampling draws every probe's inputs.
"""

from __future__ import annotations

from common import THREADS, clock, median_ratio, row, seconds

from attnsep.train.one_step import OneStepConfig, run_one_step
from attnsep.train.sample_steps import SampleSteps

D, SEEDS, N = 256, 32, 2**19
PROBES = [2**k for k in range(15, 20)]
TEST_SAMPLES = 64
"""Fresh test inputs per replica and probe (the same on both sides; the rows compare steps)."""


def search(config: OneStepConfig) -> list:
    """The probes of one search: the setup, then every ``n`` of ``PROBES``."""
    steps = SampleSteps(config, TEST_SAMPLES, 0.99)
    return [steps.outcomes(n)["certified"].mean() for n in PROBES]


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
    s_exact, s_ours = [], []
    for _ in range(rounds):
        s_exact.append(clock(lambda: out.update(exact=search(config))))
        s_ours.append(clock(lambda: out.update(ours=search(surrogate))))
    search_ratio = median_ratio(s_exact, s_ours)
    rates = ", ".join(f"{a:.2f}/{b:.2f}" for a, b in zip(out["exact"], out["ours"], strict=True))
    search_note = (
        f"d={D}, m=32, {SEEDS} replicas, n = 2^15 ... 2^19: success rates exact/surrogate "
        f"{rates}; {rounds} round(s)"
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
        row(
            f"11b a search's five probes, d={D}, n=2^15..2^19",
            seconds(s_ours),
            seconds(s_exact),
            search_ratio,
            ">= 100x",
            search_ratio >= 100,
            search_note,
        ),
    ]


if __name__ == "__main__":
    for r in run():
        print(r)
