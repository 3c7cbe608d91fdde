"""The FCN on q-sparse token selection (SPEC B1, B5.4): the task's part of the loop.

An MLP on ``[vec X ; 1_y]`` (``T·d + T`` inputs) with output in ``R^d``, trained on
``‖f − STS‖²`` summed over the ``d`` coordinates (SPEC B1). Sequences come from
:class:`TokenSelection` with the selector's keys, so both models see the same sequences:
``("train", step)`` fresh every step (every replica runs every step), or the fixed set
``("fcn-set",)`` shuffled by stream ``"fcn-order"``; the evaluation set is ``("eval", T)``.
Defaults (``configs.SelectionFCNConfig``; the measurements behind them are in
``docs/baselines.md``): Adam, ``lr = 3e-3``, batch 256, 3000 steps, 4096 evaluation sequences.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import torch

from ...configs import SelectionFCNConfig
from ...models.mlp import MLP
from ...tasks.selection import TokenSelection, sts, subset_mask
from .loop import Batches, TaskPart, predict, replay, require_finite, row_means, streams


@dataclass(frozen=True)
class SelectionFCNResult:
    """Per replica (shape ``E``): evaluation loss ``E‖f − STS‖²`` and its standard error."""

    config: SelectionFCNConfig
    model: MLP
    loss: torch.Tensor
    stderr: torch.Tensor
    losses: torch.Tensor
    device: str = "cpu"  # where it trained: "cpu", "cuda:0", ...

    @property
    def train_loss(self) -> torch.Tensor:
        """Mean training loss over the last tenth of the steps."""
        return self.losses[-max(1, self.losses.shape[0] // 10) :].mean(dim=0)


def selection_features(X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``[vec X ; 1_y]``: ``(..., T, d)`` tokens and ``(..., q)`` subsets -> ``(..., T·d + T)``."""
    return torch.cat([X.flatten(-2), subset_mask(y, X.shape[-2]).to(X)], dim=-1)


def _squared_error(f: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """``‖f − target‖²`` summed over the coordinates, per sequence (SPEC B1): ``E x n``."""
    return (f - target).pow(2).sum(dim=-1)


def part(cfg: SelectionFCNConfig, move: dict) -> TaskPart[SelectionFCNResult]:
    """Token selection: ``T·d + T`` inputs, ``d`` outputs; the final loss is the mean over the
    evaluation set, with its standard error."""
    task = TokenSelection.of(cfg)

    def pairs(batch: int, key: tuple[int | str, ...]) -> tuple[torch.Tensor, torch.Tensor]:
        data = task.sample(cfg.seed, cfg.seeds, batch, key, first_replica=cfg.first_replica)
        return selection_features(data.X, data.y).to(**move), sts(data.X, data.y).to(**move)

    if cfg.samples is None:
        steps = itertools.count()
        batches: Batches = lambda running: pairs(cfg.batch, ("train", next(steps)))  # noqa: E731
    else:
        batches = replay(*pairs(cfg.samples, ("fcn-set",)), streams(cfg, "fcn-order"), cfg.batch)

    def evaluate(model: MLP, losses: torch.Tensor, steps_run: torch.Tensor) -> SelectionFCNResult:
        inputs, target = pairs(cfg.eval_samples, ("eval", cfg.T))
        per_sequence = _squared_error(predict(model, inputs), target).cpu().double()
        require_finite(per_sequence, "evaluation loss", cfg)
        n = cfg.eval_samples
        mean = row_means(per_sequence)
        spread = row_means((per_sequence - mean.unsqueeze(1)).pow(2)) * n
        stderr = (spread / (n - 1)).sqrt() / math.sqrt(n)
        return SelectionFCNResult(cfg, model, mean, stderr, losses, str(model.weights[0].device))

    return TaskPart(cfg.T * cfg.d + cfg.T, cfg.d, batches, _squared_error, evaluate)
