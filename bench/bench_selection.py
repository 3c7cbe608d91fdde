"""Target 6: the token-selection training step (SPEC B3), in sequences per second.

``attnsep.train.selection.train`` with its defaults (``d=10, T=20, q=3``, stochastic sphere
PE of width 128, full ``W``, SGD, batch 256) for a fixed number of steps:

* against the machine's matrix-multiply rate: the float64 GEMM rate (2048^2) divided by the
  step's arithmetic per sequence (forward ``2 D m_p + 2 T (d + m_p) + 2 T d`` flops with
  ``D = d + m_p``, backward counted as twice the forward) gives the sequences per second a
  matmul-bound step would reach; the ratio is ours over that. The note adds the rate at which
  plain ``torch.randn`` draws the fresh encodings (``T x m_p`` normals per sequence), the
  step's other unavoidable cost;
* batched over replicas: ``replicas=4`` vs ``replicas=1``, sequences per second of each.
"""

from __future__ import annotations

import torch
from common import (
    THREADS,
    clock,
    fmt_rate,
    gemm_gflops,
    interleaved,
    med,
    median_ratio,
    profile_top,
    row,
)

from attnsep.train.selection import SelectionTrainConfig, train

STEPS = 60


def config(replicas: int) -> SelectionTrainConfig:
    return SelectionTrainConfig(replicas=replicas, steps=STEPS)


def flops_per_sequence(cfg: SelectionTrainConfig) -> float:
    D = cfg.d + cfg.pe_dim
    forward = 2 * D * cfg.pe_dim + 2 * cfg.T * (cfg.d + cfg.pe_dim) + 2 * cfg.T * cfg.d
    return 3.0 * forward


def pe_draw_rate(cfg: SelectionTrainConfig, rounds: int = 20) -> float:
    """Sequences per second of ``torch.randn(batch, T, m_p)`` (float32, as the library draws)."""
    gen = torch.Generator().manual_seed(0)
    draw = lambda: torch.randn(cfg.batch, cfg.T, cfg.pe_dim, generator=gen)  # noqa: E731
    draw()
    return cfg.batch / med([clock(draw) for _ in range(rounds)])


def run(rounds: int = 3) -> list[dict]:
    one, four = config(1), config(4)
    t4, t1 = interleaved(
        lambda: train(four),
        lambda: train(one),
        rounds,
        warmup=lambda: train(SelectionTrainConfig(replicas=2, steps=5)),
    )
    seqs1 = one.batch * STEPS / med(t1)
    seqs4 = 4 * four.batch * STEPS / med(t4)
    gflops = gemm_gflops()
    flops = flops_per_sequence(one)
    bound = gflops * 1e9 / flops
    draw = pe_draw_rate(one)
    profile = profile_top(lambda: train(one), top=8)
    vs_matmul = row(
        "6 selection step (E=1) vs matmul rate",
        fmt_rate(seqs1, "seq/s"),
        fmt_rate(bound, "seq/s"),
        seqs1 / bound,
        "report",
        None,
        f"baseline = float64 GEMM {gflops:.1f} GFLOP/s / {flops / 1e3:.0f} kflop per sequence "
        f"(forward + backward); ours = {seqs1 * flops / 1e9:.2f} GFLOP/s; plain randn of the "
        f"fresh PE alone: {fmt_rate(draw, 'seq/s')}; {STEPS} steps of batch {one.batch}, "
        f"torch threads={THREADS}",
        profile,
    )
    batched = row(
        "6 selection step E=4 vs E=1",
        fmt_rate(seqs4, "seq/s"),
        fmt_rate(seqs1, "seq/s"),
        median_ratio([4 / t for t in t4], [1 / t for t in t1]),
        "report",
        None,
        f"sequences/s over all replicas; ratio = E=4 rate / E=1 rate, {rounds} interleaved rounds",
        profile_top(lambda: train(four), top=8),
    )
    return [vs_matmul, batched]


if __name__ == "__main__":
    for r in run():
        print(r)
