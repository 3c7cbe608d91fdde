"""Training the FCN baselines, all replicas at once (SPEC A7.6, B5.4).

Every net of the ensemble trains on its own data with its own optimizer state (Adam and SGD
act entry by entry, and replica ``e``'s loss reaches only replica ``e``'s tensors), so a
replica's result does not depend on ``E`` or on chunking by ``first_replica``: bitwise on
float64 CPU in the tested shapes (batch 256, ``d`` a multiple of 4); for some odd shapes BLAS
blocks one replica of a batch differently from a lone one, and results agree to rounding
(~1e-15 relative after 200 steps at ``d = 33``). Streams, all named
``(seed, e, ...)``: ``"fcn-init"`` (weights), ``"fcn-train"`` (XOR training inputs or the
fixed set), ``"fcn-order"`` (minibatch order on a fixed set), ``"fcn-val"`` / ``"fcn-test"``
(XOR stopping and test sets). Token selection draws from :class:`TokenSelection` with the
selector's keys, ``("train", step)`` and ``("eval", T)``: both models see the same sequences.

Defaults (``configs.XorFCNConfig``, ``SelectionFCNConfig``; *choices*, the measurements
behind them are in ``docs/baselines.md``):

* XOR: SGD (SPEC A7.6), ``lr = min(0.1, 25 / width)`` (the output layer's curvature grows
  like the width), batch 256, at most 2000 steps of fresh samples, MSE on the ``±1`` labels
  (hinge is an option). Success: sign disagreement with the clean labels ``≤ 0.01`` on 8192
  fresh test samples. A replica stops early, keeping its weights, once it classifies all
  ``VAL_SAMPLES`` validation samples right (checked every ``CHECK_EVERY`` steps).
* Selection: Adam, ``lr = 3e-3``, batch 256, 3000 steps of fresh sequences, loss
  ``‖f − STS‖²`` summed over the ``d`` coordinates (SPEC B1); the final loss is measured on a
  fixed set of 4096 sequences, with its standard error.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch

from ..configs import SelectionFCNConfig, XorFCNConfig, default_xor_lr  # noqa: F401 (old home)
from ..device import resolve_device, resolve_dtype
from ..models.mlp import MLP
from ..rng import generator
from ..tasks.parity import BYTE_SIGNS, SparseParity
from ..tasks.selection import sts, subset_mask

VAL_SAMPLES = 1024
"""XOR early stopping: a replica is done once it classifies this many validation samples right."""
CHECK_EVERY = 50
"""Steps between two early-stopping checks."""
EVAL_ROWS = 1024
"""Evaluation sets go through the nets in chunks of this many rows (bounded memory)."""

Batches = Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]
"""The next minibatch of the running replicas (indices into the run's replicas, ascending)."""
LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


class Diverged(ValueError):
    """Training produced a NaN/inf: the learning rate is too large for this problem."""


def _streams(cfg: XorFCNConfig | SelectionFCNConfig, name: str) -> list[torch.Generator]:
    """One generator per replica of the run: streams ``(seed, e, name)``."""
    replicas = range(cfg.first_replica, cfg.first_replica + cfg.replicas)
    return [generator(cfg.seed, e, name) for e in replicas]


def cube_samples(gens: list[torch.Generator], rows: int, d: int) -> torch.Tensor:
    """``E x rows x d`` float64 uniform ``±1``: replica ``e`` reads random bytes from ``gens[e]``.

    Eight coordinates per random byte (a lookup table), several times faster than
    :meth:`SparseParity.sample_block`'s one draw per coordinate.
    """
    shape = (rows, (d + 7) // 8)
    raw = torch.stack([torch.randint(0, 256, shape, generator=g, dtype=torch.uint8) for g in gens])
    return torch.nn.functional.embedding(raw.long(), BYTE_SIGNS).flatten(2)[..., :d]


def _minibatches(gen: torch.Generator, n: int, batch: int) -> Iterator[torch.Tensor]:
    """Endless ``batch`` indices into a fixed set of ``n``: one fresh permutation an epoch."""
    queue = torch.empty(0, dtype=torch.long)
    while True:
        while queue.shape[0] < batch:
            queue = torch.cat([queue, torch.randperm(n, generator=gen)])
        yield queue[:batch]
        queue = queue[batch:]


def _replay(
    inputs: torch.Tensor, targets: torch.Tensor, gens: list[torch.Generator], batch: int
) -> Batches:
    """Minibatches of a fixed set (``E x n x ...``); replica ``e`` is shuffled by ``gens[e]``."""
    orders = [_minibatches(g, inputs.shape[1], batch) for g in gens]

    def next_batch(running: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        idx = torch.stack([next(orders[e]) for e in running.tolist()]).to(inputs.device)
        rows = running.to(inputs.device).unsqueeze(1)
        return inputs[rows, idx], targets[rows, idx]

    return next_batch


def _row_means(values: torch.Tensor) -> torch.Tensor:
    """Means of the rows of ``E x n``, one row at a time: a batched reduction may sum in another
    order when ``E`` changes, and a replica's numbers must not depend on ``E``."""
    return torch.stack([row.mean() for row in values])


def _predict(net: MLP, x: torch.Tensor) -> torch.Tensor:
    """``net(x)`` without gradients, ``EVAL_ROWS`` rows at a time, on the net's device and dtype."""
    ref = net.weights[0]
    with torch.no_grad():
        chunks = [net(x[:, i : i + EVAL_ROWS].to(ref)) for i in range(0, x.shape[1], EVAL_ROWS)]
    return torch.cat(chunks, dim=1)


def _optimizer(name: str, params: list[torch.Tensor], lr: float) -> torch.optim.Optimizer:
    return torch.optim.Adam(params, lr=lr) if name == "adam" else torch.optim.SGD(params, lr=lr)


def _subset(model: MLP, keep: torch.Tensor) -> MLP:
    """Fresh leaf tensors holding replicas ``keep`` (positions) of ``model``."""
    keep = keep.to(model.weights[0].device)
    weights = [w.detach()[keep] for w in model.weights]
    return MLP(weights, [b.detach()[keep] for b in model.biases]).requires_grad_()


def _fit(
    model: MLP,
    batches: Batches,
    per_sample: LossFn,
    cfg: XorFCNConfig | SelectionFCNConfig,
    done: Callable[[MLP, torch.Tensor], torch.Tensor] | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Train in place on the batch mean of ``per_sample`` (``E x n``).

    Returns the training loss per step (``steps_run x E``; a log, equal across ``E`` up to
    rounding; NaN once a replica stopped) and the steps each replica ran. With ``done``
    (``done(net, running)`` on the running replicas, checked every ``CHECK_EVERY`` steps), a
    replica stops at its first check that returns true: it keeps those weights and leaves the
    batch, so finished replicas cost nothing, and training ends once every replica is done.
    The optimizer state of the running replicas carries over entry by entry.
    """
    E = model.replicas
    running = torch.arange(E)
    net = _subset(model, running)
    opt = _optimizer(cfg.optimizer, net.parameters(), cfg.rate)
    ran = torch.full((E,), cfg.steps, dtype=torch.long)
    losses = []
    for step in range(cfg.steps):
        inputs, targets = batches(running)
        loss = per_sample(net(inputs), targets).mean(dim=1)
        if not bool(torch.isfinite(loss).all()):
            bad = running[(~torch.isfinite(loss)).cpu()].tolist()
            raise Diverged(
                f"training diverged at step {step} in replicas {bad}: lower lr ({cfg.rate:g})"
            )
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()
        opt.step()
        log = torch.full((E,), math.nan, dtype=loss.dtype, device=loss.device)
        losses.append(log.index_copy_(0, running.to(loss.device), loss.detach()))
        if done is not None and (step + 1) % CHECK_EVERY == 0:
            with torch.no_grad():
                stop = done(net, running).cpu()
            if bool(stop.any()):
                _store(model, net, running)
                ran[running[stop]] = step + 1
                keep = (~stop).nonzero().flatten()
                running = running[keep]
                if running.numel() == 0:
                    break
                old, net = net, _subset(net, keep)
                opt = _carry_state(opt, old, net, keep)
    if running.numel() > 0:
        _store(model, net, running)
    model.requires_grad_(False)
    return torch.stack(losses), ran


def _store(model: MLP, net: MLP, running: torch.Tensor) -> None:
    """Write the running replicas' weights (``net``) back into ``model``."""
    with torch.no_grad():
        for p, q in zip(model.parameters(), net.parameters(), strict=True):
            p[running.to(p.device)] = q.detach()


def _carry_state(
    opt: torch.optim.Optimizer, old: MLP, new: MLP, keep: torch.Tensor
) -> torch.optim.Optimizer:
    """An optimizer over ``new`` holding ``opt``'s per-entry state of replicas ``keep``."""
    fresh = _optimizer(type(opt).__name__.lower(), new.parameters(), opt.defaults["lr"])
    for p, q in zip(old.parameters(), new.parameters(), strict=True):
        fresh.state[q] = {
            k: v[keep.to(v.device)].clone() if torch.is_tensor(v) and v.dim() > 0 else v
            for k, v in opt.state.get(p, {}).items()
        }
    return fresh


# ---------------------------------------------------------------- sparse XOR (SPEC A7.6)


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

    @property
    def success(self) -> torch.Tensor:
        return self.test_error <= self.config.success_tol


def xor_loss(name: str) -> LossFn:
    """Per sample (``E x n``): ``(f − y)²`` or ``max(0, 1 − y f)`` for outputs ``E x n x 1``."""
    if name == "mse":
        return lambda f, y: (f.squeeze(-1) - y).pow(2)
    return lambda f, y: torch.relu(1 - y * f.squeeze(-1))


def _labelled(task: SparseParity, support: torch.Tensor, gens: list[torch.Generator], n: int):
    """``(x, noisy y, clean y)`` for ``n`` fresh samples per replica."""
    x = cube_samples(gens, n, task.d)
    flips = torch.stack([torch.rand(n, generator=g, dtype=torch.float64) for g in gens])
    clean = task.labels(x, support)
    return x, torch.where(flips < task.noise, -clean, clean), clean


def _fresh_batches(
    task: SparseParity,
    support: torch.Tensor,
    gens: list[torch.Generator],
    batch: int,
    move: dict,
) -> Batches:
    """Fresh training samples every step, for the running replicas only.

    Replica ``e`` draws, per step, ``d · ceil(batch / 8)`` random bytes from ``gens[e]`` (as
    64-bit words, 64 coordinates a word) and, with label noise, ``batch`` uniforms for the flips.
    Byte ``j`` of coordinate ``i`` holds that coordinate's signs in samples ``8j .. 8j + 7``
    (:data:`BYTE_SIGNS`), written into a buffer reused every step: materialising a fresh float
    tensor of ``E x batch x d`` each step cost more than the step's arithmetic. The buffer is
    laid out ``E x d x batch``, so the weight gradient ``xᵀ G`` is a plain product.
    """
    E, d = len(gens), task.d
    cols = (batch + 7) // 8
    words = torch.empty(E, (d * cols + 7) // 8, dtype=torch.int64)
    signs = torch.empty(E, d, cols * 8, **move)
    table = BYTE_SIGNS.to(**move)
    support = support.to(move["device"])

    def next_batch(running: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        n = running.numel()
        flips = []
        for i, e in enumerate(running.tolist()):
            words[i].random_(-(2**63), None, generator=gens[e])  # 64 uniform bits a word
            if task.noise > 0:
                flips.append(torch.rand(batch, generator=gens[e], dtype=torch.float64) < task.noise)
        raw = words[:n].view(torch.uint8)[:, : d * cols].reshape(-1).to(move["device"])
        torch.index_select(table, 0, raw.long(), out=signs[:n].view(-1, 8))
        x = signs[:n, :, :batch].transpose(1, 2)
        flipped = torch.stack(flips).to(move["device"]) if flips else None
        return x, task.labels(x, support[running.to(support.device)], flipped)

    return next_batch


def train_xor(cfg: XorFCNConfig) -> XorFCNResult:
    """Train ``E`` nets on their own sparse-XOR supports; test on fresh samples (SPEC A7.6)."""
    task, E = cfg.task, cfg.replicas
    dtype, device = resolve_dtype(cfg.dtype), resolve_device(cfg.device)
    move = {"dtype": dtype, "device": device}
    support = task.supports(cfg.seed, E, cfg.first_replica)
    model = MLP.init(
        E, cfg.d, cfg.width, 1, cfg.depth, seed=cfg.seed, first_replica=cfg.first_replica, **move
    )
    train_gens = _streams(cfg, "fcn-train")

    if cfg.samples is None:
        batches = _fresh_batches(task, support, train_gens, cfg.batch, move)
    else:
        x, y, _ = _labelled(task, support, train_gens, cfg.samples)
        batches = _replay(x.to(**move), y.to(**move), _streams(cfg, "fcn-order"), cfg.batch)

    def sign_error(net: MLP, x: torch.Tensor, clean: torch.Tensor) -> torch.Tensor:
        wrong = torch.sign(_predict(net, x).squeeze(-1).cpu()) != clean
        return wrong.to(torch.float64).mean(dim=1)

    val_x, _, val_clean = _labelled(task, support, _streams(cfg, "fcn-val"), VAL_SAMPLES)

    def perfect(net: MLP, running: torch.Tensor) -> torch.Tensor:
        return sign_error(net, val_x[running], val_clean[running]) == 0

    per_sample = xor_loss(cfg.loss)
    losses, ran = _fit(model, batches, per_sample, cfg, perfect if cfg.early_stop else None)
    tx, ty, tclean = _labelled(task, support, _streams(cfg, "fcn-test"), cfg.test_samples)
    test_loss = _row_means(per_sample(_predict(model, tx).cpu().double(), ty))
    test_error = sign_error(model, tx, tclean)
    if not bool(torch.isfinite(test_loss).all()):
        raise Diverged(f"the test loss is not finite: lower lr ({cfg.rate:g})")
    return XorFCNResult(cfg, support, model, test_error, test_loss, ran, losses)


# ------------------------------------------------------- token selection (SPEC B1, B5.4)


@dataclass(frozen=True)
class SelectionFCNResult:
    """Per replica (shape ``E``): evaluation loss ``E‖f − STS‖²`` and its standard error."""

    config: SelectionFCNConfig
    model: MLP
    loss: torch.Tensor
    stderr: torch.Tensor
    losses: torch.Tensor

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


def train_selection(cfg: SelectionFCNConfig) -> SelectionFCNResult:
    """Train ``E`` MLPs on q-sparse averaging; evaluate on the fixed set ``("eval", T)``."""
    task, E = cfg.task, cfg.replicas
    move = {"dtype": resolve_dtype(cfg.dtype), "device": resolve_device(cfg.device)}

    def pairs(batch: int, key: tuple[int | str, ...]) -> tuple[torch.Tensor, torch.Tensor]:
        data = task.sample(cfg.seed, E, batch, key, first_replica=cfg.first_replica)
        inputs = selection_features(data.X, data.y).to(**move)
        return inputs, sts(data.X, data.y).to(**move)

    def fresh() -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        step = 0
        while True:
            yield pairs(cfg.batch, ("train", step))
            step += 1

    if cfg.samples is None:
        stream = fresh()
        batches: Batches = lambda running: next(stream)  # noqa: E731 (every replica runs)
    else:
        batches = _replay(*pairs(cfg.samples, ("fcn-set",)), _streams(cfg, "fcn-order"), cfg.batch)
    model = MLP.init(
        E,
        cfg.T * cfg.d + cfg.T,
        cfg.width,
        cfg.d,
        cfg.depth,
        seed=cfg.seed,
        first_replica=cfg.first_replica,
        **move,
    )
    losses, _ = _fit(model, batches, _squared_error, cfg)
    inputs, target = pairs(cfg.eval_samples, ("eval", cfg.T))
    per_sequence = _squared_error(_predict(model, inputs), target).cpu().double()
    if not bool(torch.isfinite(per_sequence).all()):
        raise Diverged(f"the evaluation loss is not finite: lower lr ({cfg.rate:g})")
    mean = _row_means(per_sequence)
    spread = _row_means((per_sequence - mean.unsqueeze(1)).pow(2)) * cfg.eval_samples
    stderr = (spread / (cfg.eval_samples - 1)).sqrt() / math.sqrt(cfg.eval_samples)
    return SelectionFCNResult(cfg, model, mean, stderr, losses)
