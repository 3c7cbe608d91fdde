"""Many training steps of the k-head query-vector model on sparse parity (SPEC A2, A4, A6).

``train_xor(XorTrainConfig(...))`` is the Python entry point of ``attnsep xor train``: all
replicas (seeds) train in one batched tensor computation, on

* ``population``: the exact population gradient (SPEC A4; ``H = k`` heads use the grouped form
  of ``exact.kparity``),
* ``fresh``: ``samples`` fresh inputs per step, or
* ``fixed``: one training set per replica, ``samples`` i.i.d. inputs or, with
  ``cube_fraction``, that share of all ``2^d`` inputs, in mini-batches of ``batch`` rows
  (``None``: the whole set every step),

with gradient steps (``gd``) or Adam. With ``cube_fraction`` the rest of the cube is a test set
(for the population gradient too) and the test accuracy is recorded. After every step the exact
population loss, each head's weight on each support bit and the certified error (SPEC A6) are
recorded; success is the one-step claim's: certified worst-case error ``<= success_tol`` (A6),
with the heads assigned to the support bits by ``metrics.parity.best_assignment``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from .. import attention
from ..configs import XorTrainConfig
from ..core.device import device_name, resolve_device, resolve_dtype
from ..core.rng import generator, stream_seed
from ..core.validate import require
from ..exact import kparity, parity
from ..metrics import stats
from ..metrics.ensemble import summary as value_summary
from ..metrics.parity import best_assignment, collapsed, specialized, support_mass
from ..models.query_heads import QueryHeads, head_product, initial_queries
from ..tasks.parity import SparseParity
from .descent import Adam, Descent
from .parity import autograd_weights_gradient, label_correlation, query_gradient

if TYPE_CHECKING:
    import pandas as pd

# --- data ------------------------------------------------------------------------------------


def cube_split(
    d: int, fraction: float, seed: int, replicas: int, first_replica: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per replica, a random ``fraction`` of the ``2^d`` inputs and the rest: ``(train: E x n x d,
    test: E x (2^d - n) x d)``, replica ``e`` from stream ``(seed, e, "split")``."""
    points = parity.cube(d)
    n = round(fraction * 2**d)
    orders = [
        torch.randperm(2**d, generator=generator(seed, first_replica + e, "split"))
        for e in range(replicas)
    ]
    order = torch.stack(orders)
    return points[order[:, :n]], points[order[:, n:]]


def drawn_samples(
    task: SparseParity, seed: int, support: torch.Tensor, n: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` samples per replica from the task's streams under ``seed``: ``x``, ``y``."""
    xs, ys = zip(*task.samples(seed, support, n), strict=True)
    return torch.cat(xs, dim=1), torch.cat(ys, dim=1)


# --- objectives ------------------------------------------------------------------------------


def exact_loss(gamma: torch.Tensor, support: torch.Tensor, corr: float) -> torch.Tensor:
    """The exact population loss (SPEC A4): grouped for ``H = k``, the partition sum otherwise."""
    if gamma.shape[1] == support.shape[1]:
        if gamma.shape[1] == 2:
            return parity.two_head_loss(gamma, support, corr)
        return kparity.population_loss(gamma, support, corr)
    return parity.population_loss(gamma, support, corr)


def sample_gradient(
    gamma: torch.Tensor, x: torch.Tensor, y: torch.Tensor, sign: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """``mean_n (f(x) - y)^2`` per replica and its ``gamma``-gradient, by hand (``f = sign *
    prod_h gamma_h . x``): ``2 sign / n * sum_n residual * prod_{h' != h} (gamma_h' . x) x``.
    Autograd's backward of the skinny product cost six times the forward."""
    proj = torch.bmm(x, gamma.transpose(1, 2))  # E x n x H
    residual = sign * proj.prod(dim=2) - y
    heads = range(proj.shape[2])
    others = torch.stack([proj[:, :, [j for j in heads if j != h]].prod(dim=2) for h in heads], 2)
    coef = (2 * sign / x.shape[1]) * residual[:, :, None] * others
    return (residual * residual).mean(dim=1), torch.bmm(coef.transpose(1, 2), x)


class Batches:
    """The data of each step for the sampled gradients: fresh draws, or rows of a fixed set."""

    def __init__(self, config: XorTrainConfig, support: torch.Tensor, device, dtype) -> None:
        self.config, self.support, self.device, self.dtype = config, support, device, dtype
        self.calls = 0
        self.train: tuple[torch.Tensor, torch.Tensor] | None = None
        self.test: tuple[torch.Tensor, torch.Tensor] | None = None
        task = SparseParity.of(config)
        if config.cube_fraction is not None:
            x_train, x_test = cube_split(
                config.d, config.cube_fraction, config.seed, support.shape[0]
            )
            self.train = (x_train, task.labels(x_train, support.cpu()))
            self.test = (x_test, task.labels(x_test, support.cpu()))
        if config.gradient == "fixed" and config.cube_fraction is None:
            assert config.samples is not None  # checked by the config
            seed = stream_seed(config.seed, "train")
            self.train = drawn_samples(task, seed, support.cpu(), config.samples)
        if config.gradient == "population":
            self.train = None
        if self.train is not None:
            x, y = self.train
            self.train = (x.to(device, dtype), y.to(device, dtype))
        if self.test is not None:
            x, y = self.test
            self.test = (x.to(device, dtype), y.to(device, dtype))

    def next(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The batch of the next step (call ``t`` gives step ``t``'s data)."""
        config, t = self.config, self.calls
        self.calls += 1
        if config.gradient == "fresh":
            assert config.samples is not None  # checked by the config
            seed = stream_seed(config.seed, "fresh", t)
            x, y = drawn_samples(SparseParity.of(config), seed, self.support.cpu(), config.samples)
            return x.to(self.device, self.dtype), y.to(self.device, self.dtype)
        assert self.train is not None  # gradient "fixed": a training set
        x, y = self.train
        if config.batch is None:
            return x, y
        rows = [
            torch.randint(
                0, x.shape[1], (config.batch,), generator=generator(config.seed, e, "batch", t)
            )
            for e in range(x.shape[0])
        ]
        idx = torch.stack(rows).to(x.device)
        return torch.gather(x, 1, idx[:, :, None].expand(-1, -1, x.shape[2])), torch.gather(
            y, 1, idx
        )


class TrainingObjective:
    """``theta -> (loss, grad)`` of the configured gradient (SPEC A4); it keeps the scores of the
    last call, so the weights recorded at the same ``theta`` cost no second product with ``V``."""

    def __init__(self, config: XorTrainConfig, model: QueryHeads, support, batches: Batches):
        self.model, self.batches = model, batches
        corr = label_correlation(model, SparseParity.of(config))
        self.exact = autograd_weights_gradient(lambda gamma: exact_loss(gamma, support, corr))
        self.population = config.gradient == "population"
        self.scores: torch.Tensor | None = None

    def __call__(self, theta: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        self.scores = self.model.scores(theta)
        if self.population:
            return query_gradient(self.model, self.scores, self.exact)
        x, y = self.batches.next()
        both = lambda gamma: sample_gradient(gamma, x, y, self.model.sign)  # noqa: E731
        return query_gradient(self.model, self.scores, both)

    def weights(self, theta: torch.Tensor) -> torch.Tensor:
        """The attention weights at ``theta``, the point of the last call."""
        if self.scores is None:
            return self.model.weights(theta)
        return attention.get(self.model.attention)(self.scores)


# --- the result ------------------------------------------------------------------------------


@dataclass
class XorTrajectories:
    """Trajectories with the replica axis first; step ``t = 0`` is the initialization. The API
    returns them wrapped (``attnsep.results.XorTrainResult``: save, load, plot)."""

    config: XorTrainConfig
    """The run's config."""
    eta: float
    """The step size used."""
    seconds: float
    """Wall seconds of the training."""
    support: np.ndarray
    """``E x k``: each replica's support bits."""
    theta_init: np.ndarray
    """``E x H x m``: the query vectors at initialization."""
    theta: np.ndarray
    """``E x H x m``: the query vectors after the last step."""
    weights: np.ndarray
    """``E x H x d``: the attention weights after the last step."""
    loss: np.ndarray
    """``E x (T+1)``: the training objective (population, batch or set) per step."""
    population_loss: np.ndarray
    """``E x (T+1)``: the exact population loss per step (SPEC A4)."""
    mass: np.ndarray
    """``E x (T+1) x H x k``: head ``h``'s weight on support bit ``a`` per step."""
    certified_error: np.ndarray
    """``E x (T+1)``: the certified worst-case error per step (SPEC A6)."""
    test_accuracy: np.ndarray | None = None
    """``E x (T+1)``: the test accuracy per step, with a cube split (else ``None``)."""
    diverged_at: int | None = None
    """The step at which the training diverged (``None``: it did not)."""
    device: str = "cpu"
    """Where it ran: ``cpu``, ``cuda:0``, ..."""

    @property
    def steps_run(self) -> int:
        """Steps taken (``T``): fewer than ``config.steps`` when the run stopped early
        (``stop_at_success``, or divergence)."""
        return self.loss.shape[1] - 1

    @property
    def success(self) -> np.ndarray:
        """Per replica, success after the last step (SPEC A6)."""
        return self.certified_error[:, -1] <= self.config.success_tol

    def steps_to_success(self) -> list[int | None]:
        """Per replica, the first step with certified error ``<= success_tol`` (``None``: not
        within the steps run)."""
        return first_reached(self.certified_error <= self.config.success_tol)

    def steps_to_accuracy(self, target: float) -> list[int | None]:
        """Per replica, the first step with test accuracy ``>= target`` (needs a cube split)."""
        if self.test_accuracy is None:
            raise ValueError("test accuracy needs a cube split")
        return first_reached(self.test_accuracy >= target)

    def report(self) -> dict[str, Any]:
        """The JSON object of ``attnsep xor train`` (per-replica values included)."""
        reached = self.steps_to_success()
        steps = [math.inf if s is None else s for s in reached]
        gamma = torch.from_numpy(self.weights)
        support = torch.from_numpy(self.support)
        out = {
            **self.config.model_dump(),
            "device": self.device,
            "eta": self.eta,
            "steps_run": self.steps_run,
            "seconds": self.seconds,
            "diverged_at": self.diverged_at,
            "trainable_params": QueryHeads.trainable_params(self.config.k, self.config.m),
            "loss_initial": value_summary(self.population_loss[:, 0]),
            "loss_final": value_summary(self.population_loss[:, -1]),
            "success_rate": float(self.success.mean()),
            "reached_rate": float(np.mean([s is not None for s in reached])),
            "steps_to_success": {
                "median": stats.finite_or_none(stats.median(steps)),
                "values": reached,
            },
            "specialization_rate": float(specialized(gamma, support).double().mean()),
            "collapse_rate": float(collapsed(gamma, support).double().mean()),
            "certified_error_final": value_summary(self.certified_error[:, -1]),
        }
        if self.test_accuracy is not None:
            out["test_accuracy_final"] = value_summary(self.test_accuracy[:, -1])
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row per replica and step: losses, certified error, success, test accuracy and
        ``mass_h{h}_s{a}`` (head ``h``'s weight on support bit ``a``), as a pandas DataFrame."""
        import pandas as pd

        E, T1, H, k = self.mass.shape
        columns: dict[str, Any] = {
            "replica": np.repeat(np.arange(E), T1),
            "step": np.tile(np.arange(T1), E),
            "loss": self.loss.reshape(-1),
            "population_loss": self.population_loss.reshape(-1),
            "certified_error": self.certified_error.reshape(-1),
            "success": (self.certified_error <= self.config.success_tol).reshape(-1),
        }
        if self.test_accuracy is not None:
            columns["test_accuracy"] = self.test_accuracy.reshape(-1)
        for h in range(H):
            for a in range(k):
                columns[f"mass_h{h}_s{a}"] = self.mass[:, :, h, a].reshape(-1)
        return pd.DataFrame(columns)


def first_reached(reached: np.ndarray) -> list[int | None]:
    """Per row of ``E x steps`` booleans, the first true column (``None``: never)."""
    first = reached.argmax(axis=1)
    return [int(t) if reached[e, t] else None for e, t in enumerate(first)]


# --- training --------------------------------------------------------------------------------


def initial_state(config: XorTrainConfig, device, dtype):
    """``(model, support, theta)`` for all replicas, from the same streams as the one step."""
    task = SparseParity.of(config)
    model = QueryHeads.sample(
        config.seed,
        config.seeds,
        config.d,
        config.m,
        attention=config.attention,
        sign=config.sign,
        dtype=dtype,
        device=device,
    )
    support = task.supports(config.seed, config.seeds).to(device)
    theta = initial_queries(config.seed, config.seeds, config.k, config.m, config.init)
    return model, support, theta.to(device, dtype)


def watcher(config: XorTrainConfig, objective: TrainingObjective, support):
    """What is recorded after every step (population loss, masses, certified error, accuracy)."""
    model, batches = objective.model, objective.batches
    corr = label_correlation(model, SparseParity.of(config))
    exact = config.gradient != "population"

    def watch(theta: torch.Tensor) -> dict[str, torch.Tensor]:
        gamma = objective.weights(theta)
        out = {
            "mass": support_mass(gamma, support),
            "certified_error": best_assignment(gamma, support)[0],
        }
        if exact:
            out["population_loss"] = exact_loss(gamma, support, corr)
        if batches.test is not None:
            x, y = batches.test
            out["test_accuracy"] = (torch.sign(head_product(gamma, x, model.sign)) == y).double()
            out["test_accuracy"] = out["test_accuracy"].mean(dim=1)
        return {key: value.detach().cpu() for key, value in out.items()}

    return watch


def train_xor(
    config: XorTrainConfig, progress: Callable[[int, int], None] | None = None
) -> XorTrajectories:
    """Train every replica (module docstring); ``progress(step, steps)`` after each step."""
    device, dtype = resolve_device(config.device), resolve_dtype(config.dtype)
    start = time.perf_counter()
    model, support, theta = initial_state(config, device, dtype)
    batches = Batches(config, support, device, dtype)
    eta = config.step_size()
    rule = Adam(eta, eps=config.adam_eps) if config.optimizer == "adam" else None
    objective = TrainingObjective(config, model, support, batches)
    descent = Descent(objective, theta, eta, rule, watcher(config, objective, support))

    def all_succeeded(run: Descent) -> bool:
        return bool((run.trace[-1]["certified_error"] <= config.success_tol).all())

    until = all_succeeded if config.stop_at_success else None
    tick = None if progress is None else (lambda step: progress(step, config.steps))
    descent.run_to(config.steps, until=until, progress=tick)
    require(
        bool(descent.losses),
        f"training diverged at step 0 (eta={eta:g}); use a smaller eta",
    )
    trace = {key: torch.stack([t[key] for t in descent.trace], dim=1) for key in descent.trace[0]}
    losses = torch.stack(descent.losses, dim=1)
    return XorTrajectories(
        config=config,
        eta=eta,
        seconds=time.perf_counter() - start,
        support=support.cpu().numpy().astype("int64"),
        theta_init=theta.cpu().numpy(),
        theta=descent.theta.detach().cpu().numpy(),
        weights=model.weights(descent.theta).detach().cpu().numpy(),
        loss=losses.numpy(),
        population_loss=trace.get("population_loss", losses).numpy(),
        mass=trace["mass"].numpy(),
        certified_error=trace["certified_error"].numpy(),
        test_accuracy=None if "test_accuracy" not in trace else trace["test_accuracy"].numpy(),
        diverged_at=descent.diverged_at,
        device=device_name(device),
    )
