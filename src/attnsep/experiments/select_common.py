"""Shared pieces of the token-selection experiments (SPEC B5): one training run, its evaluation."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..exact.selection import uniform_attention_loss
from ..metrics.selection import cos_to_ground_truth, evaluate_lengths
from ..train.selection import SelectionTrainConfig, train
from .base import SubsetConfig


class TrainingSetup(SubsetConfig):
    """The task and the SGD run shared by the token-selection experiments (defaults: SPEC B3)."""

    d: int = Field(default=10, ge=1)
    T: int = Field(default=20, ge=2)
    q: int = Field(default=3, ge=1)
    pe_dim: int = Field(default=128, ge=1)
    steps: int = Field(default=1500, ge=1)
    lr: float = Field(default=3.0, gt=0)


def train_and_evaluate(
    config: SelectionTrainConfig, lengths: list[int], eval_size: int = 128
) -> dict[str, Any]:
    """Train, then evaluate at every length; plain numbers (replica 0 of a 1-replica run)."""
    result = train(config)
    rows = evaluate_lengths(
        result.W, config.task, result.encodings, lengths, config.seed, eval_size
    )
    return {
        "train_loss": float(result.train_loss[0]),
        "cos": float(cos_to_ground_truth(result.W, config.d)[0]),
        "losses": [float(v) for v in result.losses[:, 0]],
        "eval": [
            {
                "T": r.length,
                "loss": float(r.loss[0]),
                "stderr": float(r.stderr[0]),
                "exact": None if r.exact is None else float(r.exact[0]),
                "exact_stderr": None if r.exact_stderr is None else float(r.exact_stderr[0]),
                "uniform": float(uniform_attention_loss(r.length, config.q, config.d)),
            }
            for r in rows
        ],
    }


def thin(values: list[float], points: int = 60) -> list[tuple[int, float]]:
    """About ``points`` ``(step, value)`` pairs of a long curve, for figures."""
    stride = max(1, len(values) // points)
    return [(i, values[i]) for i in range(0, len(values), stride)]
