"""Samples an FCN consumes on sparse XOR under online SGD (SPEC Part G, item 2b, finding A7.5c).

The two-layer ReLU net of SPEC A7.6 (``models.mlp``, PyTorch-default init from stream ``(seed,
e, "fcn-init")``) on the task of ``tasks.parity`` (``y = -x_i x_j``, support from ``(seed, e,
"support")``), trained by plain SGD on the mean squared error with ``batch`` fresh samples every
step (stream ``(seed, e, "fcn-train")``), every replica at once. At steps on a geometric grid
(``check_steps``: ``checks_per_octave`` a doubling, a resolution of ``2^(1/8)`` in samples at
the default) each running replica's sign error is measured on its own ``check_samples``
held-out samples (stream ``(seed, e, "fcn-check")``, never trained on); a replica stops at the
first check where it is ``<= tol`` (A7.6's success definition), having consumed ``steps x
batch`` samples. A replica that never passes within ``max_steps`` is not reached (``inf``).
Its sign error on ``test_samples`` further fresh samples (stream ``(seed, e, "fcn-test")``) is
kept as a confirmation. A replica's numbers depend only on its own streams (finished replicas
leave the batch; SGD keeps no state).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ..core.rng import generator
from ..models.mlp import MLP
from ..tasks.parity import SparseParity
from .fcn.loop import predict


@dataclass(frozen=True)
class OnlineSetup:
    """One run: ``replicas`` nets of ``width`` on the ``k``-sparse parity in ``d`` inputs."""

    d: int
    width: int
    replicas: int
    seed: int = 0
    first_replica: int = 0
    batch: int = 8
    lr: float = 0.1
    max_steps: int = 20_000
    checks_per_octave: int = 8
    check_samples: int = 4096
    test_samples: int = 8192
    tol: float = 0.01
    k: int = 2


@dataclass(frozen=True)
class OnlineResult:
    """Per replica: training samples consumed until the held-out sign error first reached
    ``tol`` (``inf``: not within ``max_steps x batch``), the held-out error at the end, and the
    sign error on fresh test samples."""

    samples: np.ndarray
    check_error: np.ndarray
    test_error: np.ndarray
    budget: int


def _sign_error(f: torch.Tensor, clean: torch.Tensor) -> torch.Tensor:
    return (torch.sign(f.squeeze(-1)) != clean).to(torch.float64).mean(dim=1)


def _subset(net: MLP, keep: torch.Tensor) -> MLP:
    weights = [w.detach()[keep] for w in net.weights]
    return MLP(weights, [b.detach()[keep] for b in net.biases]).requires_grad_()


def samples_to_success(s: OnlineSetup) -> OnlineResult:
    """Train and count each replica's samples until success (module docstring)."""
    task = SparseParity(s.d, s.k)
    support = task.supports(s.seed, s.replicas, s.first_replica)
    ids = range(s.first_replica, s.first_replica + s.replicas)
    train = [generator(s.seed, e, "fcn-train") for e in ids]
    x_check, _ = task.draw(
        support, [generator(s.seed, e, "fcn-check") for e in ids], s.check_samples
    )
    clean = task.labels(x_check, support)
    model = MLP.init(s.replicas, s.d, s.width, seed=s.seed, first_replica=s.first_replica)
    used = np.full(s.replicas, math.inf)
    running = torch.arange(s.replicas)
    net = _subset(model, running)
    checks = set(check_steps(s.max_steps, s.checks_per_octave))
    for step in range(1, s.max_steps + 1):
        x, y = task.draw(support[running], [train[e] for e in running.tolist()], s.batch)
        loss = (net(x).squeeze(-1) - y).pow(2).mean(dim=1)
        if not bool(torch.isfinite(loss).all()):
            raise FloatingPointError(f"SGD diverged at step {step}: lower lr ({s.lr:g})")
        grads = torch.autograd.grad(loss.sum(), net.parameters())
        with torch.no_grad():
            for p, g in zip(net.parameters(), grads, strict=True):
                p.sub_(s.lr * g)
        if step not in checks:
            continue
        err = _sign_error(predict(net, x_check[running]), clean[running])
        passed = err <= s.tol
        _store(model, net, running)
        if bool(passed.any()):
            used[running[passed].numpy()] = step * s.batch
            running = running[~passed]
            if running.numel() == 0:
                break
            net = _subset(net, (~passed).nonzero().flatten())
    return _evaluate(s, task, support, model, (x_check, clean), used)


def check_steps(max_steps: int, per_octave: int) -> list[int]:
    """The steps at which replicas are checked: ``ceil(2^(j / per_octave))`` for ``j = 0, 1,
    ...`` up to ``max_steps``, and ``max_steps`` itself."""
    top = math.log2(max_steps) * per_octave
    steps = {math.ceil(2 ** (j / per_octave) - 1e-9) for j in range(int(top) + 1)}
    return sorted({s for s in steps if s <= max_steps} | {max_steps})


def _store(model: MLP, net: MLP, running: torch.Tensor) -> None:
    with torch.no_grad():
        for p, q in zip(model.parameters(), net.parameters(), strict=True):
            p[running] = q.detach()


def _evaluate(
    s: OnlineSetup,
    task: SparseParity,
    support: torch.Tensor,
    model: MLP,
    check: tuple[torch.Tensor, torch.Tensor],
    used: np.ndarray,
) -> OnlineResult:
    ids = range(s.first_replica, s.first_replica + s.replicas)
    x, _ = task.draw(support, [generator(s.seed, e, "fcn-test") for e in ids], s.test_samples)
    test = _sign_error(predict(model, x), task.labels(x, support))
    final = _sign_error(predict(model, check[0]), check[1])
    return OnlineResult(used, final.numpy(), test.numpy(), s.max_steps * s.batch)


__all__ = ["OnlineResult", "OnlineSetup", "samples_to_success"]
