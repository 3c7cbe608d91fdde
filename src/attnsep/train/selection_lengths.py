"""Training the selector on sequences of mixed lengths (SPEC Part G, item B5.3d).

The randomized-positional-encoding protocol of Ruoss et al. (2023, "Randomized Positional
Encodings Boost Length Generalization of Transformers"): every step draws one length ``L``
uniform in ``[shortest, T]`` (``T = config.T``, the longest training length) for its whole
batch, from stream ``(seed, "length", "train", step)`` (shared by the replicas, so a replica's
trajectory does not depend on ``E``). Otherwise a step is :func:`train.selection.train`'s
population step at length ``L``: gradient descent on the position block, on the loss exact
over the tokens (SPEC B3), fresh ``(y, PE)`` draws per step, the rate decaying linearly from
``lr`` to 0. Stochastic PE draws by law (``law_draws``, ``law_terms``; ``pe_draws="law"``) or
explicitly; a fixed PE is one table of ``fixed_positions`` rows of which a step reads the first
``L``. With ``shortest = T`` every step has length ``T`` and the run is ``train``'s, bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from ..configs import SelectionTrainConfig
from ..core.rng import stream_seed
from ..core.validate import int_at_least, require
from ..exact.selection import per_sequence_loss
from ..models.selector import trainable_mask
from ..positional_encodings import encodings_for
from ..tasks.selection import TokenSelection
from .selection import SelectionTrainResult, Workspace, law_draws, law_terms


def step_length(seed: int, step: int, shortest: int, longest: int) -> int:
    """The length of step ``step``'s batch: uniform in ``[shortest, longest]``."""
    rng = np.random.default_rng(stream_seed(seed, "length", "train", step))
    return int(rng.integers(shortest, longest + 1))


def subsets(
    task: TokenSelection, seed: int, replicas: int, batch: int, key: tuple, length: int
) -> torch.Tensor:
    """The subsets ``y`` of ``task.sample(seed, replicas, batch, key, length=length)`` without its
    tokens (``TokenSelection.subsets``): the loss exact over the tokens needs none, and drawing
    them took a quarter of a fixed-PE step."""
    return task.subsets(seed, replicas, batch, key, length=length)


def _check(config: SelectionTrainConfig, shortest: int) -> None:
    int_at_least("shortest", shortest, 1)
    require(
        config.q <= shortest <= config.T,
        f"shortest must be in [q, T] = [{config.q}, {config.T}], got {shortest}",
    )
    require(
        config.objective == "population" and config.trainable == "position",
        "mixed-length training runs the population objective on the position block, got "
        f"objective {config.objective!r}, trainable {config.trainable!r}",
    )


def _law_step(
    config: SelectionTrainConfig, W: torch.Tensor, work: Workspace, step: int, length: int
) -> torch.Tensor:
    """One law-drawn step at ``length`` (as ``train.selection._LawSteps``): the update in place,
    the per-replica loss returned."""
    d, rate = config.d, config.lr * (1.0 - step / config.steps)
    draws = law_draws(
        config.seed,
        range(config.seeds),
        ("train", step),
        config.batch,
        length,
        config.q,
        config.pe_dim,
        config.pe_kind,
        work,
    )
    loss, g, u = law_terms(W[:, d:, d:], draws, d, config.pe_kind, work)
    grad = torch.bmm(g.transpose(-1, -2), u, out=work.grad)
    grad.div_(config.batch).mul_(rate)
    W[:, d:, d:] -= grad
    return loss.mean(dim=-1)


def train_mixed_lengths(
    config: SelectionTrainConfig,
    shortest: int,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[SelectionTrainResult, list[int]]:
    """Population gradient descent from ``W = 0`` for ``config.steps`` steps, each on a batch of
    one length drawn by :func:`step_length` (module docstring); the result and the lengths."""
    _check(config, shortest)
    pe = encodings_for(config)
    E, size, d = config.seeds, config.d + config.pe_dim, config.d
    by_law = config.pe == "stochastic" and config.pe_draws == "law"
    W = torch.zeros(E, size, size, dtype=torch.float64, requires_grad=not by_law)
    mask = trainable_mask(d, config.pe_dim, "position")
    work = Workspace.of(E, config.batch, config.q, config.pe_dim, config.pe_dim) if by_law else None
    task = TokenSelection.of(config)
    losses = torch.empty(config.steps, E, dtype=torch.float64)
    lengths = [step_length(config.seed, t, shortest, config.T) for t in range(config.steps)]
    for step, length in enumerate(lengths):
        if work is not None:
            with torch.no_grad():
                loss = _law_step(config, W, work, step, length)
        else:
            key = ("train", step)
            y = subsets(task, config.seed, E, config.batch, key, length)
            loss = per_sequence_loss(W, pe.draw(key, config.batch, length), y).mean(dim=-1)
            (grad,) = torch.autograd.grad(loss.sum(), W)
            with torch.no_grad():
                W -= config.lr * (1.0 - step / config.steps) * mask * grad
        if not bool(torch.isfinite(loss).all()):
            raise ValueError(f"training diverged at step {step} (loss {loss.tolist()}): lower lr")
        losses[step] = loss.detach()
        if progress is not None:
            progress(step + 1, config.steps)
    W = W.detach()
    if not bool(torch.isfinite(W).all()):
        raise ValueError("training produced non-finite weights: lower lr")
    return SelectionTrainResult(config=config, W=W, encodings=pe, losses=losses), lengths
