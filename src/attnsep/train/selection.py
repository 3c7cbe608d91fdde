"""Training the selector on sparse token selection, all replicas at once (SPEC B3).

Optimizer (*choice*, measured at ``d=10, T=20, q=3, m_p=128``): plain SGD, the rate decaying
linearly from ``lr`` to ``0``. Adam was measured and rejected: its per-entry normalization
turns the zero-mean gradient noise on the ``m_p² − m_p`` off-diagonal entries into a random
walk as large as the signal (``cos(W, W*) ≈ 0.90`` after 1500 steps), while SGD's noise
shrinks with the decaying rate. With the full ``W`` trainable the content-row block (tokens
of norm ``√d``) limits the rate: ``lr = 5`` reached ``cos 0.98``, ``lr = 10`` lost stability
mid-run (loss up to 2.4, final cos 0.92), ``lr = 20`` ended above the zero predictor; the
default ``lr = 3`` keeps a margin and reaches cos 0.995. ``1500`` steps bring the position
block ``W_pp ≈ αI`` to ``α ≈ 3.68``, at the population optimum along ``αI`` (``≈ 3.7``,
where the exact-over-tokens loss is ``0.252``): about 25 s with one thread.

Objectives:

* ``sgd`` — a fresh batch of ``batch`` sequences per step (fresh encodings per sequence
  when the PE is stochastic), sampled loss ``mean_b ‖f − STS‖²``;
* ``population`` — gradient descent on the exact-over-tokens loss (SPEC B3): exact over
  the Gaussian tokens, Monte Carlo over ``batch`` fresh ``(y, PE)`` draws per step. It needs
  ``trainable = "position"`` (a trainable content block makes the logits token-dependent).

Replica ``e`` draws step ``t`` from streams ``(seed, e, ..., "train", t)``; SGD acts entry by
entry on ``W`` (``E x D x D``), so a replica's trajectory does not depend on ``E``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..exact.selection import per_sequence_loss
from ..models.selector import TRAINABLE, forward, trainable_mask
from ..positional import PE_KINDS, FixedPE, StochasticPE
from ..tasks.selection import TokenSelection, sts
from ..validate import int_at_least, one_of, positive_finite, require

PE_MODES = ("stochastic", "fixed")
OBJECTIVES = ("sgd", "population")


POSITION_LR_PER_DIM = 6 / 128
"""Learning rate per PE dimension when training the position block alone: the scale of
``W = alpha I`` grows like ``lr / m_p``, so ``lr = POSITION_LR_PER_DIM * m_p`` keeps the pace
(measured: converged in 300 population steps for ``T <= 80``, ``m_p <= 256``)."""


@dataclass(frozen=True)
class SelectionTrainConfig:
    """Everything a training run depends on, with measured defaults (SPEC B3)."""

    d: int = 10
    T: int = 20
    q: int = 3
    pe: str = "stochastic"
    pe_dim: int = 128
    pe_kind: str = "sphere"
    fixed_positions: int | None = None  # rows of a fixed PE table; None means T
    trainable: str = "full"
    objective: str = "sgd"
    steps: int = 1500
    batch: int = 256
    lr: float = 3.0
    replicas: int = 1
    seed: int = 0

    def __post_init__(self) -> None:
        TokenSelection(self.d, self.T, self.q)
        one_of("pe", self.pe, PE_MODES)
        int_at_least("pe_dim", self.pe_dim, 1)
        one_of("pe_kind", self.pe_kind, PE_KINDS)
        if self.fixed_positions is not None:
            int_at_least("fixed_positions", self.fixed_positions, self.T)
        one_of("trainable", self.trainable, TRAINABLE)
        one_of("objective", self.objective, OBJECTIVES)
        require(
            self.objective == "sgd" or self.trainable == "position",
            "objective 'population' needs trainable 'position' (a trainable content block "
            "makes the logits depend on the tokens)",
        )
        int_at_least("steps", self.steps, 1)
        int_at_least("batch", self.batch, 1)
        positive_finite("lr", self.lr)
        int_at_least("replicas", self.replicas, 1)
        int_at_least("seed", self.seed, 0)

    @property
    def task(self) -> TokenSelection:
        return TokenSelection(self.d, self.T, self.q)

    def encodings(self) -> StochasticPE | FixedPE:
        """The run's positional encodings; a fixed table has ``fixed_positions`` rows."""
        if self.pe == "stochastic":
            return StochasticPE(self.seed, self.replicas, self.pe_dim, self.pe_kind)
        rows = self.T if self.fixed_positions is None else self.fixed_positions
        return FixedPE.drawn(self.seed, self.replicas, rows, self.pe_dim, self.pe_kind)


@dataclass(frozen=True)
class SelectionTrainResult:
    """Trained ``W`` (``E x D x D``), the encodings used, and the loss per step (``steps x E``)."""

    config: SelectionTrainConfig
    W: torch.Tensor
    encodings: StochasticPE | FixedPE
    losses: torch.Tensor

    @property
    def train_loss(self) -> torch.Tensor:
        """Per replica: mean training loss over the last tenth of the steps."""
        tail = max(1, self.losses.shape[0] // 10)
        return self.losses[-tail:].mean(dim=0)


def _step_loss(
    config: SelectionTrainConfig, W: torch.Tensor, pe: StochasticPE | FixedPE, step: int
) -> torch.Tensor:
    """Per-replica loss of step ``step`` on its fresh batch (``E``)."""
    key = ("train", step)
    data = config.task.sample(config.seed, config.replicas, config.batch, key)
    P = pe.draw(key, config.batch, config.T)
    if config.objective == "population":
        return per_sequence_loss(W, P, data.y).mean(dim=-1)
    f, _ = forward(W, data.X, P, data.y)
    return (f - sts(data.X, data.y)).pow(2).sum(dim=-1).mean(dim=-1)


def train(config: SelectionTrainConfig) -> SelectionTrainResult:
    """SGD (or population GD) from ``W = 0`` for ``config.steps`` steps (SPEC B3)."""
    pe = config.encodings()
    size = config.d + config.pe_dim
    W = torch.zeros(config.replicas, size, size, dtype=torch.float64, requires_grad=True)
    mask = trainable_mask(config.d, config.pe_dim, config.trainable)
    losses = torch.empty(config.steps, config.replicas, dtype=torch.float64)
    for step in range(config.steps):
        loss = _step_loss(config, W, pe, step)
        if not bool(torch.isfinite(loss).all()):
            raise ValueError(f"training diverged at step {step} (loss {loss.tolist()}): lower lr")
        (grad,) = torch.autograd.grad(loss.sum(), W)
        rate = config.lr * (1.0 - step / config.steps)
        with torch.no_grad():
            W -= rate * mask * grad
        losses[step] = loss.detach()
    W = W.detach()
    if not bool(torch.isfinite(W).all()) or not math.isfinite(float(losses.sum())):
        raise ValueError("training produced non-finite weights: lower lr")
    return SelectionTrainResult(config=config, W=W, encodings=pe, losses=losses)
