"""Targets 1, 2 and 5 on an accelerator, in one short run (performance on a GPU).

    .venv/bin/python bench/device_check.py --device cuda          # a few minutes on a GPU
    .venv/bin/python bench/device_check.py --device cpu --small   # the same code, tiny sizes

Prints one JSON object: for each target the batched and looped wall times (medians of
``--rounds``), their ratio and, on CUDA, the peak device memory. Every timed call ends with
a device synchronization. The numbers are the library's own (``run_one_step``,
``train_xor``) with ``device=...``; nothing here is specific to one GPU.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch

from attnsep.configs import XorFCNConfig
from attnsep.train.fcn import train_xor
from attnsep.train.one_step import OneStepConfig, run_one_step

SIZES = {
    "full": {"huge_d": 10_000_000, "ensemble_d": 10_000, "replicas": 256, "fcn_steps": 200},
    "small": {"huge_d": 100_000, "ensemble_d": 1_000, "replicas": 8, "fcn_steps": 20},
}


def timed(fn: Callable[[], Any], device: str, rounds: int) -> float:
    """Median wall seconds of ``rounds`` calls, each ended by a device synchronization."""
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def compare(batched: Callable[[], Any], looped: Callable[[], Any], device: str, rounds: int):
    batched(), looped()  # warm-up: kernels, allocator
    ours, base = timed(batched, device, rounds), timed(looped, device, rounds)
    return {"batched_s": ours, "looped_s": base, "ratio": base / ours}


def run(device: str, sizes: dict[str, int], rounds: int) -> dict[str, Any]:
    cuda = device.startswith("cuda")
    huge = OneStepConfig(d=sizes["huge_d"], m=32, seeds=1, device=device)
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    results = []
    seconds = timed(lambda: results.append(run_one_step(huge)), device, 1)
    out: dict[str, Any] = {
        "device": torch.cuda.get_device_name(device) if cuda else device,
        "torch": torch.__version__,
        "target1_one_step": {
            "d": huge.d,
            "seconds_first_call": seconds,
            "peak_device_bytes": torch.cuda.max_memory_allocated() if cuda else None,
            "success_rate": float(results[0].success.mean()),
        },
    }
    E, d = sizes["replicas"], sizes["ensemble_d"]

    def ensemble(replica_batch: int | None) -> Callable[[], Any]:
        cfg = OneStepConfig(d=d, m=32, seeds=E, device=device, replica_batch=replica_batch)
        return lambda: run_one_step(cfg)

    out["target2_ensemble"] = {
        "replicas": E,
        "d": d,
        **compare(ensemble(None), ensemble(1), device, rounds),
    }

    def fcn(replicas: int, first: int = 0) -> XorFCNConfig:
        return XorFCNConfig(
            seeds=replicas,
            first_replica=first,
            steps=sizes["fcn_steps"],
            early_stop=False,
            device=device,
        )

    out["target5_fcn_xor"] = {
        "replicas": 32,
        "steps": sizes["fcn_steps"],
        **compare(
            lambda: train_xor(fcn(32)),
            lambda: [train_xor(fcn(1, e)) for e in range(32)],
            device,
            rounds,
        ),
    }
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", help="cuda, cuda:N or cpu")
    parser.add_argument("--small", action="store_true", help="tiny sizes (a smoke test)")
    parser.add_argument("--rounds", type=int, default=3, help="timed calls per measurement")
    args = parser.parse_args(argv)
    if args.device.startswith("cuda"):
        index = torch.device(args.device).index or 0
        if index >= torch.cuda.device_count():
            parser.error(f"--device {args.device}: torch sees {torch.cuda.device_count()} GPUs")
    if args.rounds < 1:
        parser.error(f"--rounds must be >= 1, got {args.rounds}")
    sizes = SIZES["small" if args.small else "full"]
    print(json.dumps(run(args.device, sizes, args.rounds), indent=1))


if __name__ == "__main__":
    main()
