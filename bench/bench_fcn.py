"""Target 5: FCN ensembles -- 32 MLPs trained at once vs one after another.

``attnsep.train.fcn``: ``train_xor(XorFCNConfig(seeds=32, ...))`` vs the same call with
``replicas=1, first_replica=e`` for ``e = 0..31`` in a Python loop (the replicas are the same
nets either way: their streams are named by ``e``). Library defaults (``d=64``, SGD, batch
256, 8192 test samples) except a fixed number of steps and no early stopping, so both sides do
the same work; at the default width 32 and at width 4, the widths the XOR frontier probes.
Throughput = replica-steps per second. Target >= 8x. The token-selection FCN
(``train_selection``, defaults ``d=4, T=8``, width 64) is measured the same way.

A row times fcn-selection's widest full-preset net trained in float32 (the experiment's
default) against float64; the last, separation-xor's narrow FCN with its hidden layer as
``(wᵀ xᵀ)ᵀ`` (``models.mlp.affine``) against ``x w``.

Each XOR row also times the arithmetic floor of the batched run: the first layer's two
batched products per step (forward ``x W``, backward ``xᵀ G``) alone, which no batching can
avoid; ``looped time / floor`` bounds the ratio any batched implementation could reach.
"""

from __future__ import annotations

from unittest import mock

import torch
from common import (
    THREADS,
    clock,
    fmt_rate,
    fmt_time,
    gemm_gflops,
    interleaved,
    med,
    median_ratio,
    profile_top,
    row,
    torch_profile_top,
)

from attnsep.configs import SelectionFCNConfig, XorFCNConfig
from attnsep.train.fcn import train_selection, train_xor

E = 32
XOR_STEPS, SELECTION_STEPS = 200, 100


def xor_cfg(width: int):
    def cfg(replicas: int, first: int = 0) -> XorFCNConfig:
        return XorFCNConfig(
            width=width,
            seeds=replicas,
            first_replica=first,
            steps=XOR_STEPS,
            early_stop=False,
        )

    return cfg


def selection_cfg(replicas: int, first: int = 0) -> SelectionFCNConfig:
    return SelectionFCNConfig(seeds=replicas, first_replica=first, steps=SELECTION_STEPS)


def xor_flops_per_step(cfg: XorFCNConfig) -> float:
    """Forward + backward multiply-adds of one replica's step (backward ~ 2x forward)."""
    return 3 * 2 * cfg.batch * (cfg.d * cfg.width + cfg.width)


def first_layer_floor(cfg: XorFCNConfig, steps: int, rounds: int = 3) -> float:
    """Seconds for ``steps`` of the first layer's forward and weight-gradient products of
    ``E`` replicas, batched (float64), in the layout the library takes at that width
    (``models.mlp.affine``: ``(wᵀ xᵀ)ᵀ`` and ``gᵀ x`` up to ``NARROW``, else ``x w``, ``xᵀ g``)."""
    from attnsep.models.mlp import NARROW

    x = torch.randn(E, cfg.batch, cfg.d, dtype=torch.float64)
    w = torch.randn(E, cfg.d, cfg.width, dtype=torch.float64)
    g = torch.randn(E, cfg.batch, cfg.width, dtype=torch.float64)

    def products() -> None:
        for _ in range(steps):
            if cfg.width <= NARROW:
                torch.bmm(w.transpose(1, 2), x.transpose(1, 2))
                torch.bmm(g.transpose(1, 2), x)
            else:
                torch.bmm(x, w)
                torch.bmm(x.transpose(1, 2), g)

    products()
    return med([clock(products) for _ in range(rounds)])


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
    if isinstance(batched, XorFCNConfig):
        step_flops = xor_flops_per_step(batched)
        floor = first_layer_floor(batched, steps)
        note += (
            f"; about {step_flops / 1e6:.2f} MFLOP per replica-step: batched "
            f"{work * step_flops / med(ours) / 1e9:.1f} GFLOP/s, looped "
            f"{work * step_flops / med(base) / 1e9:.1f} GFLOP/s, float64 GEMM 2048^2 "
            f"{gflops:.1f} GFLOP/s; the first layer's batched products alone take "
            f"{fmt_time(floor)}, so no batching could beat looped / floor = "
            f"{med(base) / floor:.1f}x"
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


WIDEST = {"d": 8, "T": 128, "q": 4, "width": 2048, "seeds": 4, "eval_samples": 256}
"""fcn-selection's widest full-preset net: ``T = 128, d = 8, q = 4``, width ``2 Td``, 4 nets."""
WIDEST_STEPS = 20


def precision_row(rounds: int) -> dict:
    """fcn-selection's widest full-preset net: float32 training (its default since version 3)
    vs float64, the same steps interleaved."""
    configs = {
        dtype: SelectionFCNConfig(**WIDEST, steps=WIDEST_STEPS, dtype=dtype)
        for dtype in ("float32", "float64")
    }
    low, high = interleaved(
        lambda: train_selection(configs["float32"]),
        lambda: train_selection(configs["float64"]),
        rounds,
    )
    return row(
        "5 selection FCN, widest full net: float32 vs float64",
        fmt_time(med(low) / WIDEST_STEPS) + " per step",
        fmt_time(med(high) / WIDEST_STEPS) + " per step",
        median_ratio(high, low),
        "report",
        None,
        f"ratio = float64 time / float32 time; {WIDEST}, Adam, {WIDEST_STEPS} steps with the "
        f"evaluation, {rounds} interleaved rounds, torch threads={THREADS}",
    )


def narrow_row(rounds: int) -> dict:
    """separation-xor's FCN at ``d = 1024``, width 3 (the standard preset's threshold), 16 nets
    in float32 (its ``fcn_dtype``): the narrow hidden layer as ``(wᵀ xᵀ)ᵀ`` (``models.mlp.NARROW``)
    vs ``x w``."""
    from attnsep.models import mlp

    config = XorFCNConfig(
        d=1024, width=3, replicas=16, steps=300, early_stop=False, dtype="float32"
    )

    def wide_layout() -> None:
        with mock.patch.object(mlp, "NARROW", 0):
            train_xor(config)

    ours, base = interleaved(lambda: train_xor(config), wide_layout, rounds)
    ratio = median_ratio(base, ours)
    return row(
        "5 FCN xor d=1024 width 3: narrow layer (w^T x^T)^T vs x w",
        fmt_time(med(ours) / config.steps) + " per step",
        fmt_time(med(base) / config.steps) + " per step",
        ratio,
        "> 1x",
        ratio > 1,
        f"16 nets in float32, {config.steps} steps, no early stop; ratio = x w time / "
        f"(w^T x^T)^T time, {rounds} interleaved rounds, torch threads={THREADS}",
    )


def run(rounds: int = 3) -> list[dict]:
    gflops = gemm_gflops()
    return [
        one_row("xor width 32", train_xor, xor_cfg(32), XOR_STEPS, rounds, gflops),
        one_row("xor width 4", train_xor, xor_cfg(4), XOR_STEPS, rounds, gflops),
        one_row("selection", train_selection, selection_cfg, SELECTION_STEPS, rounds, gflops),
        precision_row(rounds),
        narrow_row(rounds),
    ]


if __name__ == "__main__":
    for r in run():
        print(r)
