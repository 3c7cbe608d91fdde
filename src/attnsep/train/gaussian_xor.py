"""Training on Gaussian sparse XOR, axis-aligned or rotated (SPEC Part G, item 7).

Three pieces, each on all replicas at once, replica ``e``'s draws from its own streams:

* :func:`transformer_descent`: the query-vector model (SPEC A2) on the exact Gaussian
  population loss (``exact.gaussian_xor``): one step of SPEC A5's ``eta``, then gradient
  descent for a budget of steps;
* :func:`simplex_floor`: the least loss found over ALL attention weights (free logits, i.e.
  the model's closure for any embeddings), the expressivity ceiling beside the descent;
* :func:`train_mlp`: a two-layer ReLU net trained by online SGD on fresh Gaussian samples
  (``train.fcn.loop.fit``), its first layer drawn Gaussian, ``N(0, 1/d)`` entries, so that the
  whole training is rotation-equivariant: rotating the inputs, the target's pair and the first
  layer together leaves every number unchanged, and the Gaussian inputs and first layer are
  rotation-invariant in law.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from pydantic import Field

from ..configs import FCNConfig, Optimizer
from ..core.rng import generator, stream_seed
from ..exact.gaussian_xor import population_loss
from ..models.mlp import MLP
from ..models.query_heads import QueryHeads, haar_frame, initial_queries
from .descent import Adam, Descent
from .fcn.loop import TaskPart, fit
from .parity import autograd_weights_gradient, query_gradient

TASKS = ("axis", "rotated")
EVAL_ROWS = 1024
"""Test inputs are drawn and evaluated this many rows at a time (bounded memory)."""


def task_pairs(
    seed: int, d: int, replicas: int, task: str, first_replica: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """The target's pair ``(u, v)`` per replica (``E x d`` each, float64): ``axis``: ``e_i, e_j``
    with ``{i, j}`` uniform (stream ``(seed, e, "gaussian-xor-support")``); ``rotated``: a
    Haar-random orthonormal pair (stream ``(seed, e, "gaussian-xor-frame")``)."""
    u = torch.zeros(replicas, d, dtype=torch.float64)
    v = torch.zeros_like(u)
    for row, e in enumerate(range(first_replica, first_replica + replicas)):
        if task == "axis":
            i, j = torch.randperm(d, generator=generator(seed, e, "gaussian-xor-support"))[:2]
            u[row, i], v[row, j] = 1.0, 1.0
        else:
            frame = haar_frame(generator(seed, e, "gaussian-xor-frame"), d, 2)
            u[row], v[row] = frame[:, 0], frame[:, 1]
    return u, v


def gaussian_targets(x: torch.Tensor, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """``y = -<u, x><v, x>`` for ``x`` ``E x n x d`` and ``u, v`` ``E x d``: ``E x n``."""
    return -torch.bmm(x, u.unsqueeze(-1)).squeeze(-1) * torch.bmm(x, v.unsqueeze(-1)).squeeze(-1)


# --- the transformer ---------------------------------------------------------------------


def transformer_descent(
    seed: int,
    m: int,
    u: torch.Tensor,
    v: torch.Tensor,
    eta: float,
    gd_eta: float,
    budget: int,
) -> dict[str, np.ndarray]:
    """One population step of size ``eta`` from SPEC A2's anti-symmetric init (embeddings and
    queries from ``seed``'s streams), then ``budget`` steps of size ``gd_eta``. Per replica:
    the population loss at the init, after the step, after the budget, and the least along the
    way (``loss_min``)."""
    E, d = u.shape
    model = QueryHeads.sample(seed, E, d, m)

    def loss_of(gamma: torch.Tensor) -> torch.Tensor:
        return population_loss(gamma[:, 0], gamma[:, 1], u, v)

    weights_grad = autograd_weights_gradient(loss_of)

    def objective(theta: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return query_gradient(model, model.scores(theta), weights_grad)

    theta = initial_queries(seed, E, 2, m)
    loss_init, grad = objective(theta)
    run = Descent(objective, theta - eta * grad, gd_eta)
    run.run_to(budget)
    losses = torch.stack([loss_init, *run.losses])  # steps x E
    return {
        "loss_init": loss_init.numpy(),
        "loss_one_step": run.losses[0].numpy(),
        "loss_final": run.losses[-1].numpy(),
        "loss_min": losses.min(dim=0).values.numpy(),
    }


def simplex_floor(
    u: torch.Tensor, v: torch.Tensor, restarts: int, steps: int, seed: int = 0, lr: float = 0.1
) -> np.ndarray:
    """Per replica, the least population loss found over attention weights ``g = softmax(z_g)``,
    ``h = softmax(z_h)`` with free logits (any point of the open simplex): Adam for ``steps``
    steps from ``restarts`` starts ``z_g = c u + noise, z_h = c v + noise``, ``c`` on the ladder
    ``0, ±2, ±8, ±32, ...`` (noise ``0.01 N(0, 1)``, stream ``(seed, "simplex-floor")``).
    An estimate from above of the model's floor for every width ``m``; the proven bound from
    below is ``exact.gaussian_xor.simplex_floor_bound``."""
    E, d = u.shape
    ladder = [0.0] + [s * 2.0 ** (2 * k + 1) for k in range(restarts) for s in (1.0, -1.0)]
    scale = torch.tensor(ladder[:restarts], dtype=torch.float64).view(-1, 1, 1)
    gen = generator(seed, "simplex-floor")
    noise = 0.01 * torch.randn(2, restarts, E, d, generator=gen, dtype=torch.float64)
    z = torch.stack([scale * u + noise[0], scale * v + noise[1]])  # 2 x R x E x d

    def loss_of(logits: torch.Tensor) -> torch.Tensor:
        g, h = torch.softmax(logits, dim=-1)
        return population_loss(g, h, u, v)

    rule = Adam(lr)
    for _ in range(steps):
        with torch.enable_grad():
            leaf = z.detach().requires_grad_(True)
            (grad,) = torch.autograd.grad(loss_of(leaf).sum(), leaf)
        z = rule(z, grad)
    return loss_of(z).min(dim=0).values.numpy()


# --- the two-layer ReLU net ----------------------------------------------------------------


class GaussianMLPConfig(FCNConfig):
    """A two-layer ReLU net ``sum_k a_k relu(w_k.x + b_k) + c`` by online SGD on Gaussian
    inputs, MSE on ``y = -<u,x><v,x>``; first-layer weights ``N(0, 1/d)``, the rest PyTorch's
    default (``models.mlp``)."""

    d: int = Field(ge=2, le=1 << 16, description="Input dimension.")
    lr: float = Field(gt=0, le=10.0, description="SGD learning rate.")
    optimizer: Optimizer = "sgd"
    test_samples: int = Field(4096, ge=1, le=1 << 20, description="Fresh test inputs.")

    @property
    def rate(self) -> float:
        return self.lr

    @property
    def inputs(self) -> int:
        return self.d

    @property
    def evaluation_rows(self) -> int:
        return min(self.test_samples, EVAL_ROWS)


def _streams(cfg: GaussianMLPConfig, name: str) -> list[np.random.Generator]:
    """numpy generators ``(seed, e, name)`` per replica (a normal costs a fifth of torch's)."""
    replicas = range(cfg.first_replica, cfg.first_replica + cfg.seeds)
    return [np.random.default_rng(stream_seed(cfg.seed, e, name)) for e in replicas]


def _inputs(
    gens: list[np.random.Generator], rows: int, d: int, frame: torch.Tensor | None
) -> torch.Tensor:
    """``len(gens) x rows x d`` standard Gaussians, one replica per generator, as ``frame z``
    (``frame``: ``E x d x d`` orthogonal, or ``None`` for the standard basis)."""
    z = np.empty((len(gens), rows, d))
    for out, gen in zip(z, gens, strict=True):
        gen.standard_normal(out=out)
    x = torch.from_numpy(z)
    return x if frame is None else torch.bmm(x, frame.transpose(1, 2))


def gaussian_mlp(cfg: GaussianMLPConfig, frame: torch.Tensor | None = None) -> MLP:
    """The nets at init; replica ``e``'s first layer from stream ``(seed, e, "gaussian-layer")``
    (times ``frame``, when given: the same net in the rotated basis)."""
    net = MLP.init(cfg.seeds, cfg.d, cfg.width, seed=cfg.seed, first_replica=cfg.first_replica)
    first = _inputs(_streams(cfg, "gaussian-layer"), cfg.d, cfg.width, None) / math.sqrt(cfg.d)
    net.weights[0] = first if frame is None else torch.bmm(frame, first)
    return net


def train_mlp(
    cfg: GaussianMLPConfig, u: torch.Tensor, v: torch.Tensor, frame: torch.Tensor | None = None
) -> dict[str, Any]:
    """Online SGD for ``cfg.steps`` steps of ``cfg.batch`` fresh inputs (streams
    ``(seed, e, "gaussian-train")``), then the test MSE on ``cfg.test_samples`` fresh inputs
    (``"gaussian-test"``), per replica. ``frame`` draws inputs and the first layer in a rotated
    basis: with ``u = frame e_i, v = frame e_j`` every number equals the axis run's (rounding)."""
    train_gens = _streams(cfg, "gaussian-train")

    def batches(running: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        rows = running.tolist()
        x = _inputs([train_gens[e] for e in rows], cfg.batch, cfg.d, _rows(frame, running))
        return x, gaussian_targets(x, u[running], v[running])

    def per_sample(f: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return (f.squeeze(-1) - y) ** 2

    def evaluate(model: MLP, losses: torch.Tensor, steps_run: torch.Tensor) -> np.ndarray:
        return heldout_loss(cfg, model, u, v, frame)

    part: TaskPart[np.ndarray] = TaskPart(cfg.d, 1, batches, per_sample, evaluate)
    model = gaussian_mlp(cfg, frame).requires_grad_()
    return {"test_loss": part.evaluate(model, *fit(model, part, cfg))}


def _rows(frame: torch.Tensor | None, running: torch.Tensor) -> torch.Tensor | None:
    return None if frame is None else frame[running]


def heldout_loss(
    cfg: GaussianMLPConfig,
    model: MLP,
    u: torch.Tensor,
    v: torch.Tensor,
    frame: torch.Tensor | None = None,
) -> np.ndarray:
    """Per replica, the mean squared error on ``cfg.test_samples`` fresh inputs, drawn and
    evaluated ``EVAL_ROWS`` at a time."""
    gens = _streams(cfg, "gaussian-test")
    total = torch.zeros(cfg.seeds, dtype=torch.float64)
    with torch.no_grad():
        for start in range(0, cfg.test_samples, EVAL_ROWS):
            x = _inputs(gens, min(EVAL_ROWS, cfg.test_samples - start), cfg.d, frame)
            total += ((model(x).squeeze(-1) - gaussian_targets(x, u, v)) ** 2).sum(dim=1)
    out = (total / cfg.test_samples).numpy()
    if not np.isfinite(out).all():
        raise ValueError(f"the MLP's test loss is not finite: lower lr ({cfg.lr:g})")
    return out
