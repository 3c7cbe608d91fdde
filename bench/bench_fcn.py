"""Target 5: FCN ensembles -- 32 MLPs trained at once vs one after another.

``attnsep.train.fcn``: ``train_xor(XorFCNConfig(replicas=32, ...))`` vs the same call with
``replicas=1, first_replica=e`` for ``e = 0..31`` in a Python loop (the replicas are the same
nets either way: their streams are named by ``e``). Library defaults (``d=64``, width 32,
Adam, batch 256, 8192 test samples) except a fixed number of steps and no early stopping,
so both sides do the same work. Throughput = replica-steps per second. Target >= 8x.
The token-selection FCN (``train_selection``, defaults ``d=4, T=8``) is measured the same way.
"""

from __future__ import annotations

from common import (
    THREADS,
    fmt_rate,
    gemm_gflops,
    interleaved,
    med,
    median_ratio,
    profile_top,
    row,
    torch_profile_top,
)

from attnsep.train.fcn import SelectionFCNConfig, XorFCNConfig, train_selection, train_xor

E = 32
XOR_STEPS, SELECTION_STEPS = 200, 100


def xor_cfg(replicas: int, first: int = 0) -> XorFCNConfig:
    return XorFCNConfig(replicas=replicas, first_replica=first, steps=XOR_STEPS, early_stop=False)


def selection_cfg(replicas: int, first: int = 0) -> SelectionFCNConfig:
    return SelectionFCNConfig(replicas=replicas, first_replica=first, steps=SELECTION_STEPS)


def xor_flops_per_step(cfg: XorFCNConfig) -> float:
    """Forward + backward multiply-adds of one replica's step (backward ~ 2x forward)."""
    return 3 * 2 * cfg.batch * (cfg.d * cfg.width + cfg.width)


def one_row(name: str, train, cfg_of, steps: int, rounds: int, gflops: float) -> dict:
    batched = cfg_of(E)
    ours, base = interleaved(
        lambda: train(batched),
        lambda: [train(cfg_of(1, e)) for e in range(E)],
        rounds,
        warmup=lambda: (train(cfg_of(2)), train(cfg_of(1))),
    )
    ratio = median_ratio(base, ours)
    work = E * steps
    met = ratio >= 8.0
    note = (
        f"{E} replicas x {steps} steps; ratio = looped / batched time, {rounds} interleaved "
        f"rounds, torch threads={THREADS}"
    )
    if name == "xor":
        step_flops = xor_flops_per_step(batched)
        note += (
            f"; about {step_flops / 1e6:.1f} MFLOP per replica-step: batched "
            f"{work * step_flops / med(ours) / 1e9:.1f} GFLOP/s, looped "
            f"{work * step_flops / med(base) / 1e9:.1f} GFLOP/s, float64 GEMM 2048^2 "
            f"{gflops:.1f} GFLOP/s"
        )
    profile = None
    if not met:
        profile = profile_top(lambda: train(batched), top=8)
        profile += torch_profile_top(lambda: train(batched), top=6)
    return row(
        f"5 FCN {name}: {E} at once vs looped",
        fmt_rate(work / med(ours), "replica-steps/s"),
        fmt_rate(work / med(base), "replica-steps/s"),
        ratio,
        ">= 8x",
        met,
        note,
        profile,
    )


def run(rounds: int = 3) -> list[dict]:
    gflops = gemm_gflops()
    return [
        one_row("xor", train_xor, xor_cfg, XOR_STEPS, rounds, gflops),
        one_row("selection", train_selection, selection_cfg, SELECTION_STEPS, rounds, gflops),
    ]


if __name__ == "__main__":
    for r in run():
        print(r)
