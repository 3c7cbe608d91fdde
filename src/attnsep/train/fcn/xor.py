"""The FCN on sparse XOR / k-sparse parity (SPEC A1, A7.6): the task's part of the loop.

Defaults (``configs.XorFCNConfig``; *choices*, the measurements behind them are in
``docs/baselines.md``): SGD (SPEC A7.6), ``lr = min(0.1, 25 / width)`` (the output layer's
curvature grows like the width), batch 256, at most 2000 steps of fresh samples, MSE on the
``±1`` labels (hinge is an option). Success: sign disagreement with the clean labels
``≤ success_tol`` (0.01) on ``test_samples`` (8192) fresh samples. A replica stops early,
keeping its weights, once it classifies all ``VAL_SAMPLES`` validation samples right (checked
every ``CHECK_EVERY`` steps).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import torch

from ...configs import XorFCNConfig
from ...models.mlp import MLP
from ...tasks.parity import BYTE_SIGNS, SparseParity, random_bytes, random_words_
from .loop import (
    EVAL_ROWS,
    Batches,
    Done,
    LossFn,
    TaskPart,
    predict,
    replay,
    require_finite,
    row_means,
    streams,
)

VAL_SAMPLES = 1024
"""XOR early stopping: a replica is done once it classifies this many validation samples right."""


@dataclass(frozen=True)
class XorFCNResult:
    """Per replica (shape ``E``): test sign error, test loss, steps run; and the trained nets."""

    config: XorFCNConfig
    support: torch.Tensor
    model: MLP
    test_error: torch.Tensor
    test_loss: torch.Tensor
    steps_run: torch.Tensor
    losses: torch.Tensor
    device: str = "cpu"  # where it trained: "cpu", "cuda:0", ...

    @property
    def success(self) -> torch.Tensor:
        return self.test_error <= self.config.success_tol


def xor_loss(name: str) -> LossFn:
    """Per sample (``E x n``): ``(f − y)²`` or ``max(0, 1 − y f)`` for outputs ``E x n x 1``."""
    if name == "mse":
        return lambda f, y: (f.squeeze(-1) - y).pow(2)
    return lambda f, y: torch.relu(1 - y * f.squeeze(-1))


def _sign_error(f: torch.Tensor, clean: torch.Tensor) -> torch.Tensor:
    """Fraction of outputs ``f`` (``E x n x 1``) whose sign is not the clean label, per replica."""
    return (torch.sign(f.squeeze(-1).cpu()) != clean).to(torch.float64).mean(dim=1)


def _perfect(
    task: SparseParity, support: torch.Tensor, gens: list[torch.Generator], dtype: torch.dtype
) -> Done:
    """Early stopping: done once all ``VAL_SAMPLES`` validation samples are classified right."""
    x, _ = task.draw(support, gens, VAL_SAMPLES, dtype=dtype)
    held = {"running": torch.arange(x.shape[0]), "x": x, "clean": task.labels(x, support)}

    def done(net: MLP, running: torch.Tensor) -> torch.Tensor:
        # The set of the running replicas only: it shrinks, once per stop, rather than a copy
        # of E x VAL_SAMPLES x d at every check.
        if not torch.equal(held["running"], running):
            keep = torch.searchsorted(held["running"], running)
            held.update(running=running, x=held["x"][keep], clean=held["clean"][keep])
        return _sign_error(predict(net, held["x"]), held["clean"]) == 0

    return done


def _sample_chunks(
    task: SparseParity,
    support: torch.Tensor,
    gens: list[torch.Generator],
    n: int,
    dtype: torch.dtype,
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """The ``n`` samples :meth:`SparseParity.draw` gives (the same random bytes, flips and
    labels), ``EVAL_ROWS`` rows of every replica at a time, expanded into one reused buffer:
    the whole ``E x n x d`` set is never held (its fresh memory cost more than the net)."""
    width = (task.d + 7) // 8
    raw = torch.stack([random_bytes(g, n * width).view(n, width) for g in gens])
    flips = None
    if task.noise > 0:
        uniforms = [torch.rand(n, generator=g, dtype=torch.float64) for g in gens]
        flips = torch.stack(uniforms) < task.noise
    signs = BYTE_SIGNS.to(dtype)
    E, rows = len(gens), min(n, EVAL_ROWS)
    buffer = torch.empty(E * rows * width * 8, dtype=dtype)
    for i in range(0, n, rows):
        chunk = raw[:, i : i + rows]
        size = chunk.numel() * 8
        out = buffer[:size].view(-1, 8)
        x = torch.index_select(signs, 0, chunk.reshape(-1).long(), out=out)
        x = x.view(E, chunk.shape[1], -1)[..., : task.d]
        yield x, task.labels(x, support, None if flips is None else flips[:, i : i + rows])


def _fresh_batches(
    task: SparseParity,
    support: torch.Tensor,
    gens: list[torch.Generator],
    batch: int,
    move: dict,
) -> Batches:
    """Fresh training samples every step, for the running replicas only.

    Replica ``e`` draws, per step, ``d · ceil(batch / 8)`` random bytes from ``gens[e]`` (as
    64-bit words, :func:`random_words_`) and, with label noise, ``batch`` uniforms for the
    flips. Byte ``j`` of coordinate ``i`` holds that coordinate's signs in samples
    ``8j .. 8j + 7`` (:data:`BYTE_SIGNS`), written into buffers reused every step: materialising
    a fresh float tensor of ``E x batch x d`` each step cost more than the step's arithmetic.
    The signs are laid out ``E x d x batch``, so the weight gradient ``xᵀ G`` is a plain product.
    Random bytes as in :meth:`SparseParity.draw`; only their layout differs.
    """
    E, d = len(gens), task.d
    cols = (batch + 7) // 8
    words = torch.empty(E, (d * cols + 7) // 8, dtype=torch.int64)
    signs = torch.empty(E, d, cols * 8, **move)
    index = torch.empty(E * d * cols, dtype=torch.long, device=move["device"])
    table = BYTE_SIGNS.to(**move)
    support = support.to(move["device"])

    def next_batch(running: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        n = running.numel()
        flips = []
        for i, e in enumerate(running.tolist()):
            random_words_(words[i], gens[e])
            if task.noise > 0:
                flips.append(torch.rand(batch, generator=gens[e], dtype=torch.float64) < task.noise)
        raw = words[:n].view(torch.uint8)[:, : d * cols].reshape(-1)
        idx = index[: raw.numel()].copy_(raw)  # widened into a reused buffer
        torch.index_select(table, 0, idx, out=signs[:n].view(-1, 8))
        x = signs[:n, :, :batch].transpose(1, 2)
        flipped = torch.stack(flips).to(move["device"]) if flips else None
        return x, task.labels(x, support[running.to(support.device)], flipped)

    return next_batch


def part(cfg: XorFCNConfig, move: dict) -> TaskPart[XorFCNResult]:
    """Sparse XOR: ``d`` inputs, one output, supports from stream ``"support"``; training on
    fresh samples (``"fcn-train"``) or on a fixed set (``"fcn-train"``, order ``"fcn-order"``);
    the fixed, validation (``"fcn-val"``) and test (``"fcn-test"``) sets drawn by
    :meth:`SparseParity.draw`."""
    task = SparseParity.of(cfg)
    support = task.supports(cfg.seed, cfg.seeds, cfg.first_replica)
    if cfg.samples is None:
        batches = _fresh_batches(task, support, streams(cfg, "fcn-train"), cfg.batch, move)
    else:
        x, y = task.draw(support, streams(cfg, "fcn-train"), cfg.samples, dtype=move["dtype"])
        batches = replay(x.to(**move), y.to(**move), streams(cfg, "fcn-order"), cfg.batch)
    per_sample = xor_loss(cfg.loss)

    def evaluate(model: MLP, losses: torch.Tensor, steps_run: torch.Tensor) -> XorFCNResult:
        gens, parts = streams(cfg, "fcn-test"), []
        for x, y in _sample_chunks(task, support, gens, cfg.test_samples, move["dtype"]):
            parts.append((predict(model, x).cpu().double(), y, task.labels(x, support)))
        f, y, clean = (torch.cat(part, dim=1) for part in zip(*parts, strict=True))
        test_loss = row_means(per_sample(f, y))
        require_finite(test_loss, "test loss", cfg)
        test_error = _sign_error(f, clean)
        device = str(model.weights[0].device)
        return XorFCNResult(cfg, support, model, test_error, test_loss, steps_run, losses, device)

    done = (
        _perfect(task, support, streams(cfg, "fcn-val"), move["dtype"]) if cfg.early_stop else None
    )
    return TaskPart(task.d, 1, batches, per_sample, evaluate, done)
