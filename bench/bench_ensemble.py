"""Target 2: ensemble batching of the one step (DESIGN: seeds are a tensor dimension).

256 replicas at ``d = 10^4, m = 32``: ``run_one_step`` with ``replica_batch=256`` (split into
batches that hold ``batch x d x m`` under 2^25 numbers: 104 replicas) and with the automatic
batch (``replica_batch=None``: under 2^23 numbers, 26 replicas) vs the same code one replica at
a time (``replica_batch=1``). Target >= 20x.

The *floor* is the library drawing the 256 replicas' embeddings alone (``sphere_embeddings``,
one replica at a time into one reused buffer, nothing else). The looped run draws the very
same numbers, so no batching can make the ratio exceed ``looped / floor``; the note reports it.
"""

from __future__ import annotations

import torch
from common import THREADS, alternating, median_ratio, profile, row, seconds

from attnsep.embeddings import sphere_embeddings
from attnsep.train.memory import one_step_batch
from attnsep.train.one_step import OneStepConfig, run_one_step

D, M, SEEDS = 10_000, 32, 256


def config(replica_batch: int | None) -> OneStepConfig:
    return OneStepConfig(d=D, m=M, seeds=SEEDS, device="cpu", replica_batch=replica_batch)


def draw_all(buffer: torch.Tensor) -> None:
    """The floor: every replica's ``V``, drawn as the library draws it, and nothing else."""
    for e in range(SEEDS):
        sphere_embeddings(0, 1, D, M, first_replica=e, out=buffer)


def run(rounds: int = 3) -> list[dict]:
    one = config(1)
    buffer = torch.empty(1, D, M, dtype=torch.float64)
    run_one_step(OneStepConfig(d=D, m=M, seeds=4, device="cpu", replica_batch=4))  # warm-up
    rows = []
    for label, batch in (("replica_batch=256", SEEDS), ("auto batch", None)):
        cfg = config(batch)
        ours, base, floor = alternating(
            [lambda c=cfg: run_one_step(c), lambda: run_one_step(one), lambda: draw_all(buffer)],
            rounds,
        )
        ratio = median_ratio(base, ours)  # speed-up: looped time / batched time
        ceiling = median_ratio(base, floor)  # looped / floor: the most batching could give
        met = ratio >= 20.0
        note = (
            f"d=1e4, m=32, 256 replicas; ours replica_batch={batch} "
            f"({one_step_batch(cfg)} per batch), baseline replica_batch=1; ratio = looped / "
            f"batched time, {rounds} interleaved rounds, torch threads={THREADS}; "
            f"floor (drawing the 256 replicas' embeddings alone) {seconds(floor)}, so the "
            f"ratio cannot exceed looped / floor = {ceiling:.2f}x on this machine"
        )
        lines, cum = profile(lambda c=cfg: run_one_step(c), top=10)
        draw = cum.get("sphere_embeddings", 0.0)
        note += (
            f"; under cProfile, drawing the embeddings (sphere_embeddings) took "
            f"{draw / cum.get('run_one_step', float('nan')):.0%} of the batched run"
        )
        rows.append(
            row(
                f"2 ensemble 256 replicas, {label}",
                seconds(ours),
                seconds(base),
                ratio,
                ">= 20x",
                met,
                note,
                None if met else lines,
            )
        )
    return rows


if __name__ == "__main__":
    for r in run():
        print(r)
