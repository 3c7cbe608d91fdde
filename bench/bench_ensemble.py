"""Target 2: ensemble batching of the one step (DESIGN: seeds are a tensor dimension).

256 replicas at ``d = 10^4, m = 32``: ``run_one_step`` with all replicas in one batch
(``replica_batch=256``) vs the same code one replica at a time (``replica_batch=1``).
Target >= 20x. A second row reports the library's automatic batch (``replica_batch=None``:
as many replicas as keep ``batch x d x m`` under 2^25 numbers held whole; 256 replicas are
8.2e7 numbers, so one batch of 256 streams its embeddings instead, regenerating them at
every product).
"""

from __future__ import annotations

from common import THREADS, interleaved, median_ratio, profile, row, seconds

from attnsep.one_step import OneStepConfig, run_one_step

D, M, SEEDS = 10_000, 32, 256


def config(replica_batch: int | None) -> OneStepConfig:
    return OneStepConfig(d=D, m=M, seeds=SEEDS, device="cpu", replica_batch=replica_batch)


def run(rounds: int = 3) -> list[dict]:
    one = config(1)
    small = OneStepConfig(d=D, m=M, seeds=4, device="cpu", replica_batch=4)
    warm = lambda: run_one_step(small)  # noqa: E731
    rows = []
    for label, batch in (("all 256 in one batch", SEEDS), ("auto batch", None)):
        cfg = config(batch)
        ours, base = interleaved(
            lambda c=cfg: run_one_step(c), lambda: run_one_step(one), rounds, warmup=warm
        )
        ratio = median_ratio(base, ours)  # speed-up: looped time / batched time
        met = ratio >= 20.0
        note = (
            f"d=1e4, m=32, 256 replicas; ours replica_batch={batch} "
            f"({cfg.batch_size()} per batch), baseline replica_batch=1; ratio = looped / "
            f"batched time, {rounds} interleaved rounds, torch threads={THREADS}"
        )
        lines, cum = profile(lambda c=cfg: run_one_step(c), top=10)
        draw = cum.get("gaussian_rows", 0.0) + cum.get("<built-in method torch.stack>", 0.0)
        note += (
            f"; under cProfile, drawing the embeddings (gaussian_rows + stack) took "
            f"{draw / cum.get('run_one_step', float('nan')):.0%} of the batched run"
        )
        profile_lines = None if met else lines
        rows.append(
            row(
                f"2 ensemble 256 replicas, {label}",
                seconds(ours),
                seconds(base),
                ratio,
                ">= 20x",
                met,
                note,
                profile_lines,
            )
        )
    return rows


if __name__ == "__main__":
    for r in run():
        print(r)
