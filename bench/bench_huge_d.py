"""Target 1: the exact one step at huge ``d`` (SPEC A5 with streamed embeddings).

* Memory: ``attnsep xor one-step --d 10000000 --m 32 --seeds 1`` in a child process; its peak
  RSS (``ru_maxrss`` of that child) must stay under 2 GiB, while ``V`` alone would take
  ``d * m * 8`` bytes = 2.38 GiB.
* Time at ``d = 10^6``: ``run_one_step(OneStepConfig(d=10**6, m=32, seeds=1))`` in process vs
  the *floor*, plain torch doing the least the step must do: draw the ``d x m`` Gaussian
  matrix in float64 (``torch.randn``), normalize its rows, and one product ``V theta^T`` for
  the two heads. Target: at most 3x the floor.
* A streamed ``V`` kept for the step: one-step's largest schedule width at ``d = 2^20``
  (``m = 97``, streamed: ``d m > BATCH_ELEMENTS``), drawn once into a reused buffer and kept for
  the step's three products (``KEPT_STREAM_ELEMENTS``) vs drawn again at each product (the same
  bits). Target: faster (> 1x).
"""

from __future__ import annotations

import json
from unittest import mock

import torch
from common import (
    GIB,
    THREADS,
    VENV_BIN,
    clock,
    fmt_bytes,
    fmt_time,
    interleaved,
    med,
    median_ratio,
    profile_top,
    row,
    run_child,
    seconds,
)

HUGE_D = 10_000_000
TIME_D = 1_000_000
M = 32


def floor_step(
    d: int = TIME_D, m: int = M, seed: int = 0, draw: torch.dtype = torch.float64
) -> torch.Tensor:
    """Plain torch: Gaussian ``d x m`` (float64), unit rows, one ``V theta^T`` product.

    ``draw=torch.float32``: the normals drawn in float32 and widened (the library's own trick).
    """
    gen = torch.Generator().manual_seed(seed)
    V = torch.randn(d, m, generator=gen, dtype=draw).to(torch.float64)
    V /= torch.linalg.vector_norm(V, dim=1, keepdim=True)
    theta = torch.randn(2, m, generator=gen, dtype=torch.float64)
    return V @ theta.T


def memory_row() -> dict:
    args = [str(VENV_BIN / "attnsep"), "xor", "one-step", "--d", str(HUGE_D), "--m", str(M)]
    args += ["--seeds", "1", "--json"]
    code, wall, peak, out = run_child(args, timeout=600)
    whole = HUGE_D * M * 8
    if code != 0:
        return row(
            "1a one step, d=1e7: peak RSS",
            f"exit {code}",
            fmt_bytes(whole),
            None,
            "< 2 GiB",
            False,
            out.strip().splitlines()[-1] if out.strip() else "",
        )
    summary = json.loads(out)
    note = (
        f"child `attnsep xor one-step --d 1e7 --m 32 --seeds 1` ran {wall:.1f} s, "
        f"success_rate={summary['success_rate']}; baseline = V held whole (d*m*8 B); "
        "ratio = peak / V size"
    )
    return row(
        "1a one step, d=1e7: peak RSS",
        fmt_bytes(peak),
        f"V whole {fmt_bytes(whole)}",
        peak / whole,
        "< 2 GiB",
        peak < 2 * GIB,
        note,
    )


def time_row(rounds: int = 5) -> dict:
    from attnsep.train.one_step import OneStepConfig, run_one_step

    config = OneStepConfig(d=TIME_D, m=M, seeds=1, device="cpu")
    run_one_step(config)  # warm-up
    floor_step(draw=torch.float32)
    ours, base, floor32 = [], [], []
    for _ in range(rounds):  # interleaved: ours, float64 floor, float32-drawn floor, ...
        ours.append(clock(lambda: run_one_step(config)))
        base.append(clock(floor_step))
        floor32.append(clock(lambda: floor_step(draw=torch.float32)))
    ratio = median_ratio(ours, base)
    met = ratio <= 3.0
    note = (
        f"in process, torch threads={THREADS}, warm-up once, {rounds} "
        "interleaved rounds; floor = torch.randn(d, m, float64) + row normalize + V @ theta.T; "
        f"the same floor drawing float32 normals widened to float64 takes "
        f"{fmt_time(med(floor32))}: ours / that = {med(ours) / med(floor32):.2f}x"
    )
    profile = None if met else profile_top(lambda: run_one_step(config))
    return row(
        "1b one step d=1e6 vs floor",
        seconds(ours),
        seconds(base),
        ratio,
        "<= 3x",
        met,
        note,
        profile,
    )


def kept_row(rounds: int = 3) -> dict:
    from attnsep.train import memory
    from attnsep.train.one_step import OneStepConfig, run_one_step

    config = OneStepConfig(d=1 << 20, m=97, seeds=3, device="cpu")

    def drawn_at_each_product() -> None:
        with mock.patch.object(memory, "KEPT_STREAM_ELEMENTS", 0):
            run_one_step(config)

    assert memory.one_step_streamed(config) and memory.one_step_stream_kept(config)
    ours, base = interleaved(lambda: run_one_step(config), drawn_at_each_product, rounds)
    ratio = median_ratio(base, ours)
    return row(
        "1c one step d=2^20, m=97: streamed V kept vs drawn at each product",
        seconds(ours),
        seconds(base),
        ratio,
        "> 1x",
        ratio > 1,
        f"{config.seeds} replicas, one at a time (streamed); ratio = drawn / kept time, "
        f"{rounds} interleaved rounds after a warm-up each, torch threads={THREADS}",
    )


def run() -> list[dict]:
    return [memory_row(), time_row(), kept_row()]


if __name__ == "__main__":
    for r in run():
        print(r)
