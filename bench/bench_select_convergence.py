"""Target 12: the training of ``select-convergence`` (B5.1, B5.1b), its workspace vs fresh arrays.

One job's training at its preset's sizes, with fewer steps (a step's work does not change with
the step count): ``attnsep.train.selection.train`` (the steps fill a ``Workspace``) against
``selection_reference.train`` (the same step as before: fresh arrays, ``np.stack`` copies,
``np.linalg.norm``'s temporary), timed side by side; both must give the same bits (``W`` and
the losses). Each row also times, in turn with them, the step's two products alone (``v = W u``
and the gradient ``gᵀ u``, ``torch.bmm`` of the same shapes): the matmul bound; the fraction is
bound / time (target >= 0.3). What is left above it is mostly the ``(q + 1) m_p`` normals per
sequence (numpy's generator: the random streams, and so the records, stay as they are).

A third row times the same training with the two products in float32
(``SelectionTrainConfig.products``, select-convergence's default) against float64.

Rows: B5.1 at ``m_p = 512`` (batch ``4 m_p = 2048``, the position block, population objective)
and B5.1b at ``m_p = 512`` (full ``W``, SGD, batch 256). Standalone, any width:

    .venv/bin/python bench/bench_select_convergence.py --width 2048 --steps 3 --rounds 2
"""

from __future__ import annotations

import argparse

import selection_reference as reference
import torch
from common import THREADS, alternating, fmt_time, med, median_ratio, profile_top, row

from attnsep.configs import SelectionTrainConfig
from attnsep.experiments import select_convergence as b51
from attnsep.train.selection import train

WIDTH, STEPS, PAPER_STEPS = 512, 40, 100


def b51_config(width: int, steps: int) -> SelectionTrainConfig:
    """B5.1's training at ``width`` (the full preset's settings), ``steps`` of its steps."""
    config = b51.config.Config(**b51.EXPERIMENT.presets["full"])
    return config.training(width, 0).model_copy(update={"steps": steps})


def paper_config(width: int, steps: int) -> SelectionTrainConfig:
    """B5.1b's training at ``width`` (the paper's setting), ``steps`` of its steps."""
    return SelectionTrainConfig(
        pe_dim=width, trainable="full", objective="sgd", batch=256, lr=3.0, steps=steps
    )


def products(config: SelectionTrainConfig):
    """The step's two products alone (``torch.bmm``, the step's shapes), ``steps`` times."""
    rows = config.pe_dim if config.objective == "population" else config.d + config.pe_dim
    gen = torch.Generator().manual_seed(0)
    u = torch.randn(1, config.batch, config.pe_dim, generator=gen, dtype=torch.float64)
    W = torch.randn(1, rows, config.pe_dim, generator=gen, dtype=torch.float64)
    g = torch.randn(1, config.batch, rows, generator=gen, dtype=torch.float64)

    def run() -> None:
        for _ in range(config.steps):
            torch.bmm(u, W.transpose(-1, -2))
            torch.bmm(g.transpose(-1, -2), u)

    return run


def compare(name: str, config: SelectionTrainConfig, rounds: int) -> list[dict]:
    ours = train(config)
    W, losses = reference.train(config)
    same = torch.equal(ours.W, W) and torch.equal(ours.losses, losses)
    bound_run = products(config)
    rounded = config.model_copy(update={"products": "float32"})
    drift = float((train(rounded).W - ours.W).norm() / ours.W.norm())
    t_new, t_old, t_bound, t_low = alternating(
        [
            lambda: train(config),
            lambda: reference.train(config),
            bound_run,
            lambda: train(rounded),
        ],
        rounds,
    )
    bound = med(t_bound)
    shape = (
        f"m_p={config.pe_dim}, batch {config.batch}, {config.steps} steps, {config.objective} "
        f"objective, {config.trainable} trainable, torch threads={THREADS}"
    )
    return [
        row(
            f"12 {name}: workspace vs fresh arrays",
            fmt_time(med(t_new)),
            fmt_time(med(t_old)),
            median_ratio(t_old, t_new),
            "report",
            None,
            f"ratio = old time / new time, {rounds} interleaved rounds; {shape}; the same bits "
            f"(W and losses): {same}",
        ),
        row(
            f"12 {name} vs its matmul bound",
            f"{bound / med(t_new):.3f} of the bound",
            f"old {bound / med(t_old):.3f}",
            bound / med(t_new),
            ">= 0.30",
            bound / med(t_new) >= 0.3,
            f"bound = the step's two products alone ({fmt_time(bound / config.steps)} per step, "
            f"torch.bmm, same shapes, timed in turn with both); fraction = bound / time; {shape}",
            profile_top(lambda: train(config), top=8),
        ),
        row(
            f"12 {name}: float32 products vs float64 (the experiment's default since version 3)",
            fmt_time(med(t_low)),
            fmt_time(med(t_new)),
            median_ratio(t_new, t_low),
            "report",
            None,
            f"ratio = float64 time / float32 time, {rounds} interleaved rounds; {shape}; W "
            f"after the steps differs by {drift:.1e} (relative)",
        ),
    ]


def run(
    width: int = WIDTH, steps: int = STEPS, paper_steps: int = PAPER_STEPS, rounds: int = 3
) -> list[dict]:
    rows = compare(f"B5.1 m_p={width}", b51_config(width, steps), rounds)
    if paper_steps:
        rows += compare(f"B5.1b m_p={width}", paper_config(width, paper_steps), rounds)
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=WIDTH)
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--paper-steps", type=int, default=PAPER_STEPS, help="0: no B5.1b row")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    for r in run(args.width, args.steps, args.paper_steps, args.rounds):
        print({k: v for k, v in r.items() if k != "profile"})
        for line in r.get("profile", []):
            print("   ", line)
