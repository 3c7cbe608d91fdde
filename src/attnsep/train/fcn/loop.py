"""The FCN training loop every task shares (SPEC A7.6, B5.4): all replicas at once.

Every net of the ensemble trains on its own data with its own optimizer state (Adam and SGD
act entry by entry, and replica ``e``'s loss reaches only replica ``e``'s tensors), so a
replica's result does not depend on ``E`` or on chunking by ``first_replica``: bitwise on
float64 CPU in the tested shapes (batch 256, ``d`` a multiple of 4); for some odd shapes BLAS
blocks one replica of a batch differently from a lone one, and results agree to rounding. A
task enters only through its :class:`TaskPart`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import torch

from ...configs import FCNConfig
from ...core.device import resolve_device, resolve_dtype
from ...core.rng import generator
from ...models.mlp import MLP
from ..optimizers import SGD, Adam, Optimizer

CHECK_EVERY = 50
"""Steps between two early-stopping checks."""
EVAL_ROWS = 1024
"""Evaluation sets go through the nets in chunks of this many rows (bounded memory)."""

Batches = Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]
"""The next minibatch of the running replicas (indices into the run's replicas, ascending)."""
LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
"""Per-sample loss ``E x n`` of outputs ``E x n x d_out`` against targets."""
Done = Callable[[MLP, torch.Tensor], torch.Tensor]
"""``done(net, running)``: which running replicas stop now (``net`` holds only those)."""
Result = TypeVar("Result")


class Diverged(ValueError):
    """Training produced a NaN/inf: the learning rate is too large for this problem."""


@dataclass(frozen=True)
class TaskPart(Generic[Result]):
    """What a task gives the loop: net sizes, data, loss, an optional stop, the evaluation.

    ``evaluate(model, losses, steps_run)`` turns the trained ensemble and the loop's logs
    (:func:`fit`) into the task's result.
    """

    inputs: int
    outputs: int
    batches: Batches
    per_sample: LossFn
    evaluate: Callable[[MLP, torch.Tensor, torch.Tensor], Result]
    done: Done | None = None


Progress = Callable[[int, int], None]
"""Called as ``progress(step, steps)`` after each step."""


def train(
    cfg: FCNConfig,
    part: Callable[[FCNConfig, dict], TaskPart[Result]],
    progress: Progress | None = None,
) -> Result:
    """Build the task's part (``part(cfg, move)``, ``move``: the run's dtype and device),
    initialise ``E`` nets (:meth:`MLP.init`, stream ``"fcn-init"``), fit, evaluate."""
    move: dict[str, Any] = {"dtype": resolve_dtype(cfg.dtype), "device": resolve_device(cfg.device)}
    task = part(cfg, move)
    model = MLP.init(
        cfg.seeds,
        task.inputs,
        cfg.width,
        task.outputs,
        cfg.depth,
        seed=cfg.seed,
        first_replica=cfg.first_replica,
        **move,
    )
    return task.evaluate(model, *fit(model, task, cfg, progress))


def streams(cfg: FCNConfig, name: str) -> list[torch.Generator]:
    """One generator per replica of the run: streams ``(seed, e, name)``."""
    replicas = range(cfg.first_replica, cfg.first_replica + cfg.seeds)
    return [generator(cfg.seed, e, name) for e in replicas]


def _minibatches(gen: torch.Generator, n: int, batch: int) -> Iterator[torch.Tensor]:
    """Endless ``batch`` indices into a fixed set of ``n``: one fresh permutation an epoch."""
    queue = torch.empty(0, dtype=torch.long)
    while True:
        while queue.shape[0] < batch:
            queue = torch.cat([queue, torch.randperm(n, generator=gen)])
        yield queue[:batch]
        queue = queue[batch:]


def replay(
    inputs: torch.Tensor, targets: torch.Tensor, gens: list[torch.Generator], batch: int
) -> Batches:
    """Minibatches of a fixed set (``E x n x ...``); replica ``e`` is shuffled by ``gens[e]``."""
    orders = [_minibatches(g, inputs.shape[1], batch) for g in gens]

    def next_batch(running: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        idx = torch.stack([next(orders[e]) for e in running.tolist()]).to(inputs.device)
        rows = running.to(inputs.device).unsqueeze(1)
        return inputs[rows, idx], targets[rows, idx]

    return next_batch


def row_means(values: torch.Tensor) -> torch.Tensor:
    """Means of the rows of ``E x n``, one row at a time: a batched reduction may sum in another
    order when ``E`` changes, and a replica's numbers must not depend on ``E``."""
    return torch.stack([row.mean() for row in values])


def predict(net: MLP, x: torch.Tensor) -> torch.Tensor:
    """``net(x)`` without gradients, ``EVAL_ROWS`` rows at a time, on the net's device and dtype."""
    ref = net.weights[0]
    with torch.no_grad():
        chunks = [net(x[:, i : i + EVAL_ROWS].to(ref)) for i in range(0, x.shape[1], EVAL_ROWS)]
    return torch.cat(chunks, dim=1)


def require_finite(values: torch.Tensor, what: str, cfg: FCNConfig) -> None:
    """Raise :class:`Diverged` unless every entry of ``values`` (the ``what``) is finite."""
    if not bool(torch.isfinite(values).all()):
        raise Diverged(f"the {what} is not finite: lower lr ({cfg.rate:g})")


def _optimizer(name: str, params: list[torch.Tensor], lr: float) -> Optimizer:
    return Adam(params, lr) if name == "adam" else SGD(params, lr)


def _subset(model: MLP, keep: torch.Tensor) -> MLP:
    """Fresh leaf tensors holding replicas ``keep`` (positions) of ``model``."""
    keep = keep.to(model.weights[0].device)
    weights = [w.detach()[keep] for w in model.weights]
    return MLP(weights, [b.detach()[keep] for b in model.biases]).requires_grad_()


def fit(
    model: MLP, task: TaskPart, cfg: FCNConfig, progress: Progress | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Train in place on the batch mean of ``task.per_sample``.

    Returns the training loss per step (``steps_run x E``; a log, equal across ``E`` up to
    rounding; NaN once a replica stopped) and the steps each replica ran. With ``task.done``
    (checked every ``CHECK_EVERY`` steps), a replica stops at its first check that says so: it
    keeps those weights and leaves the batch, so finished replicas cost nothing, and training
    ends once every replica is done. The optimizer state of the running replicas carries over
    entry by entry.
    """
    E = model.replicas
    running = torch.arange(E)
    net = _subset(model, running)
    opt = _optimizer(cfg.optimizer, net.parameters(), cfg.rate)
    ran = torch.full((E,), cfg.steps, dtype=torch.long)
    losses = []
    for step in range(cfg.steps):
        inputs, targets = task.batches(running)
        loss = task.per_sample(net(inputs), targets).mean(dim=1)
        if not bool(torch.isfinite(loss).all()):
            bad = running[(~torch.isfinite(loss)).cpu()].tolist()
            raise Diverged(
                f"training diverged at step {step} in replicas {bad}: lower lr ({cfg.rate:g})"
            )
        opt.zero_grad()
        loss.sum().backward()
        opt.step()
        log = torch.full((E,), math.nan, dtype=loss.dtype, device=loss.device)
        losses.append(log.index_copy_(0, running.to(loss.device), loss.detach()))
        if progress is not None:
            progress(step + 1, cfg.steps)
        if task.done is not None and (step + 1) % CHECK_EVERY == 0:
            with torch.no_grad():
                stop = task.done(net, running).cpu()
            if bool(stop.any()):
                _store(model, net, running)
                ran[running[stop]] = step + 1
                running, net, opt = _drop(running, net, opt, stop)
                if running.numel() == 0:
                    break
    if running.numel() > 0:
        _store(model, net, running)
    model.requires_grad_(False)
    return torch.stack(losses), ran


def _drop(
    running: torch.Tensor, net: MLP, opt: Optimizer, stop: torch.Tensor
) -> tuple[torch.Tensor, MLP, Optimizer]:
    """The replicas left once those where ``stop`` is true leave: their indices, a net over
    them and an optimizer holding ``opt``'s per-entry state of them."""
    keep = (~stop).nonzero().flatten()
    new = _subset(net, keep)
    fresh = type(opt)(new.parameters(), opt.lr)
    for p, q in zip(net.parameters(), new.parameters(), strict=True):
        fresh.state[q] = {
            k: v[keep.to(v.device)].clone() if torch.is_tensor(v) and v.dim() > 0 else v
            for k, v in opt.state.get(p, {}).items()
        }
    return running[keep], new, fresh


def _store(model: MLP, net: MLP, running: torch.Tensor) -> None:
    """Write the running replicas' weights (``net``) back into ``model``."""
    with torch.no_grad():
        for p, q in zip(model.parameters(), net.parameters(), strict=True):
            p[running.to(p.device)] = q.detach()
