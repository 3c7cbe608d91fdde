"""Target 6: the token-selection training step (SPEC B3), in sequences per second.

Two sizes of ``attnsep.train.selection.train``, each against the machine's matrix-multiply
rate: the float64 GEMM rate (2048^2) divided by the step's arithmetic per sequence gives the
sequences per second a matmul-bound step would reach; the ratio is ours over that.

* the defaults (``d=10, T=20, q=3``, stochastic sphere PE of width 128, full ``W``, SGD,
  batch 256): forward ``2 D m_p + 2 T (d + m_p) + 2 T d`` flops with ``D = d + m_p``;
* a decisive size of SPEC B5.2 (``T=1024, m_p=256``, batch 128, population objective, the
  position block trained): forward ``2 m_p^2 + 2 T m_p`` flops (``v = W u``, then ``P v``).

Backward is counted as twice the forward. The note adds the rate at which plain
``torch.randn`` draws the fresh encodings (``T x m_p`` normals per sequence), the step's other
unavoidable cost when the encodings are drawn explicitly. A third row: batched over replicas,
``replicas=4`` vs ``replicas=1`` at the defaults, sequences per second of each.
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

from attnsep.configs import POSITION_LR_PER_DIM
from attnsep.train.selection import SelectionTrainConfig, train

STEPS = 60
LARGE_STEPS = 5


def config(replicas: int) -> SelectionTrainConfig:
    return SelectionTrainConfig(replicas=replicas, steps=STEPS)


def large() -> SelectionTrainConfig:
    return SelectionTrainConfig(
        T=1024,
        pe_dim=256,
        batch=128,
        trainable="position",
        objective="population",
        lr=POSITION_LR_PER_DIM * 256,
        steps=LARGE_STEPS,
    )


def flops_per_sequence(cfg: SelectionTrainConfig) -> float:
    m_p = cfg.pe_dim
    if cfg.trainable == "position":
        forward = 2 * m_p * m_p + 2 * cfg.T * m_p
    else:
        D = cfg.d + m_p
        forward = 2 * D * m_p + 2 * cfg.T * (cfg.d + m_p) + 2 * cfg.T * cfg.d
    return 3.0 * forward


def pe_draw_rate(cfg: SelectionTrainConfig, rounds: int = 5) -> float:
    """Sequences per second of ``torch.randn(batch, T, m_p)`` (float32, as the library draws)."""
    gen = torch.Generator().manual_seed(0)
    draw = lambda: torch.randn(cfg.batch, cfg.T, cfg.pe_dim, generator=gen)  # noqa: E731
    draw()
    return cfg.batch / med([clock(draw) for _ in range(rounds)])


def vs_matmul(name: str, cfg: SelectionTrainConfig, times: list[float], gflops: float) -> dict:
    seqs = cfg.replicas * cfg.batch * cfg.steps / med(times)
    flops = flops_per_sequence(cfg)
    bound = gflops * 1e9 / flops
    return row(
        name,
        fmt_rate(seqs, "seq/s"),
        fmt_rate(bound, "seq/s"),
        seqs / bound,
        "report",
        None,
        f"baseline = float64 GEMM {gflops:.1f} GFLOP/s / {flops / 1e3:.0f} kflop per sequence "
        f"(forward + backward); ours = {seqs * flops / 1e9:.2f} GFLOP/s; plain randn of the "
        f"fresh PE alone: {fmt_rate(pe_draw_rate(cfg), 'seq/s')}; {cfg.steps} steps of batch "
        f"{cfg.batch}, {cfg.objective} objective, {cfg.trainable} trainable, torch "
        f"threads={THREADS}",
        profile_top(lambda: train(cfg), top=8),
    )


def run(rounds: int = 3) -> list[dict]:
    one, four, big = config(1), config(4), large()
    t4, t1 = interleaved(
        lambda: train(four),
        lambda: train(one),
        rounds,
        warmup=lambda: train(SelectionTrainConfig(replicas=2, steps=5)),
    )
    train(SelectionTrainConfig(**{**big.__dict__, "steps": 1}))
    t_big = [clock(lambda: train(big)) for _ in range(rounds)]
    seqs1 = one.batch * STEPS / med(t1)
    seqs4 = 4 * four.batch * STEPS / med(t4)
    gflops = gemm_gflops()
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
    return [
        vs_matmul("6 selection step (E=1) vs matmul rate", one, t1, gflops),
        vs_matmul("6 selection step T=1024 (population) vs matmul rate", big, t_big, gflops),
        batched,
    ]


if __name__ == "__main__":
    for r in run():
        print(r)
