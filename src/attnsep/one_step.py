"""The one-step experiment on an ensemble: draw, take one gradient step, measure (SPEC A5, A6).

Replicas are processed in batches (``replica_batch``); every random draw of replica ``e``
comes from its own streams, so the results do not depend on the batch split.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

import numpy as np
import torch

from . import attention
from .device import resolve_device, resolve_dtype
from .embeddings import StreamedEmbeddings
from .exact.parity import MAX_EXACT_HEADS, population_loss
from .metrics import stats
from .metrics.ensemble import summary
from .metrics.parity import assigned_mass, best_assignment, collapsed, specialized
from .models.query_heads import INITS, QueryHeads, initial_queries
from .positional import sphere_embeddings
from .tasks.parity import SparseParity
from .train.parity import (
    apply_step,
    default_eta,
    empirical_weights_gradient,
    label_correlation,
    population_weights_gradient,
    query_gradient,
)
from .validate import distinct_indices, int_at_least, one_of, positive_finite, require

BATCH_ELEMENTS = 1 << 25
"""Most numbers of ``V`` held at once: a larger ``replica_batch`` is split into batches of
``batch x d x m`` under it; a replica alone above it is streamed."""

AUTO_BATCH_ELEMENTS = 1 << 23
"""Auto replica batch: ``batch x d x m`` under this many numbers. On the CPU smaller batches
are faster than ``BATCH_ELEMENTS`` (measured, 256 replicas at ``d = 10^4, m = 32``: 0.90 s with
26 per batch, 1.11 s with 104): less fresh memory to fault in."""


@dataclass(frozen=True)
class OneStepConfig:
    """One population (or empirical) gradient step for ``seeds`` replicas (SPEC A5)."""

    d: int
    m: int = 32
    seeds: int = 64
    seed: int = 0
    attention: str = "softmax"
    eta: float | None = None  # None: eta_scale * d^2 * ln d
    eta_scale: float = 16.0
    samples: int | None = None  # None: the exact population gradient
    support: tuple[int, ...] | None = None  # None: uniform per replica
    init: str = "antisymmetric"
    k: int = 2
    sign: int = -1
    noise: float = 0.0
    success_tol: float = 0.1
    dtype: str = "float64"
    device: str = "auto"
    replica_batch: int | None = None

    def __post_init__(self) -> None:
        self.task()  # validates d, k, sign, noise
        require(
            self.k <= MAX_EXACT_HEADS,
            f"k must be <= {MAX_EXACT_HEADS} (exact population loss), got {self.k}",
        )
        int_at_least("m", self.m, 1)
        int_at_least("seeds", self.seeds, 1)
        int_at_least("seed", self.seed, 0)
        attention.get(self.attention)
        if self.eta is not None:
            positive_finite("eta", self.eta)
        positive_finite("eta scale", self.eta_scale)
        if self.samples is not None:
            int_at_least("samples", self.samples, 1)
        if self.support is not None:
            distinct_indices("support", self.support, self.d, self.k)
        one_of("init", self.init, INITS)
        positive_finite("success tolerance", self.success_tol)
        resolve_dtype(self.dtype)
        one_of("device", self.device, ["auto", "cpu", "cuda"])
        if self.replica_batch is not None:
            int_at_least("replica batch", self.replica_batch, 1)

    def task(self) -> SparseParity:
        return SparseParity(self.d, self.k, self.sign, self.noise)

    def step_size(self) -> float:
        return self.eta if self.eta is not None else default_eta(self.d, self.eta_scale)

    def batch_size(self) -> int:
        size = self.d * self.m
        auto = max(1, AUTO_BATCH_ELEMENTS // size)
        return min(self.seeds, self.replica_batch or auto, max(1, BATCH_ELEMENTS // size))

    def streamed(self, keep_embeddings: bool = False) -> bool:
        """Whether ``V`` is streamed: one replica's ``d x m`` exceeds ``BATCH_ELEMENTS``."""
        return not keep_embeddings and self.d * self.m > BATCH_ELEMENTS


@dataclass
class OneStepResult:
    """Per-replica state and metrics; arrays have the replica axis first."""

    config: OneStepConfig
    eta: float
    support: np.ndarray  # E x k
    theta_before: np.ndarray  # E x H x m
    theta_after: np.ndarray
    loss_before: np.ndarray  # E
    loss_after: np.ndarray
    mass_after: np.ndarray  # E x H: each head's weight on its assigned support bit
    certified_error: np.ndarray  # E
    specialized: np.ndarray  # E (bool)
    collapsed: np.ndarray  # E (bool)
    embeddings: np.ndarray | None = field(default=None, repr=False)  # E x d x m when kept

    @property
    def success(self) -> np.ndarray:
        return self.certified_error <= self.config.success_tol

    @property
    def trainable_params(self) -> int:
        return QueryHeads.trainable_params(self.config.k, self.config.m)


REPLICA_FIELDS = tuple(
    f.name for f in fields(OneStepResult) if f.name not in ("config", "eta", "embeddings")
)
"""The per-replica arrays of a result that every run fills (``embeddings`` only when kept)."""


def _run_batch(
    config: OneStepConfig,
    first: int,
    count: int,
    keep_embeddings: bool,
    buffer: torch.Tensor | None = None,
) -> dict[str, np.ndarray]:
    """Replicas ``first .. first + count - 1``; ``V`` is drawn into ``buffer`` when given."""
    device, dtype = resolve_device(config.device), resolve_dtype(config.dtype)
    task = config.task()
    if config.streamed(keep_embeddings):
        V = StreamedEmbeddings(config.seed, count, config.d, config.m, first, dtype, device)
    else:
        V = sphere_embeddings(
            config.seed,
            count,
            config.d,
            config.m,
            first_replica=first,
            dtype=dtype,
            device=device,
            out=None if buffer is None else buffer[:count],
        )
    model = QueryHeads(V, config.attention, config.sign)
    if config.support is None:
        support = task.supports(config.seed, count, first_replica=first)
    else:
        support = task.fixed_support(list(config.support), count)
    support = support.to(device)
    theta = initial_queries(config.seed, count, config.k, config.m, config.init, first).to(
        device, dtype
    )
    if config.samples is None:
        weights_grad = population_weights_gradient(model, task, support)
    else:
        weights_grad = empirical_weights_gradient(
            model, task, support, config.seed, config.samples, first
        )
    corr = label_correlation(model, task)
    scores = model.scores(theta)
    loss, grad = query_gradient(model, scores, weights_grad)
    theta_after = apply_step(theta, grad, config.step_size())
    if config.samples is None:  # the step's own loss is the population loss at theta
        loss_before = loss
    else:
        loss_before = population_loss(attention.get(config.attention)(scores), support, corr)
    del scores
    gamma_after = model.weights(theta_after)
    bound, _ = best_assignment(gamma_after, support)
    out = {
        "support": support,
        "theta_before": theta,
        "theta_after": theta_after,
        "loss_before": loss_before,
        "loss_after": population_loss(gamma_after, support, corr),
        "mass_after": assigned_mass(gamma_after, support),
        "certified_error": bound,
        "specialized": specialized(gamma_after, support),
        "collapsed": collapsed(gamma_after, support),
    }
    if keep_embeddings:
        out["embeddings"] = model.V
    arrays = {key: value.detach().cpu().numpy() for key, value in out.items()}
    for key in ("loss_before", "loss_after", "certified_error"):
        require(
            bool(np.isfinite(arrays[key]).all()),
            f"{key} is not finite (d={config.d}, eta={config.step_size():g}, "
            f"dtype={config.dtype}); use a smaller eta"
            + (" or float64" if config.dtype != "float64" else ""),
        )
    return arrays


def run_one_step(
    config: OneStepConfig, keep_embeddings: bool = False, progress=None
) -> OneStepResult:
    """Run the experiment for all replicas, batch by batch; ``progress(done, total)`` if given."""
    batch = config.batch_size()
    buffer = None  # one V buffer for all batches: fresh memory costs page faults every time
    if not keep_embeddings and not config.streamed():
        buffer = torch.empty(batch, config.d, config.m, dtype=torch.float64)
    parts = []
    for first in range(0, config.seeds, batch):
        count = min(batch, config.seeds - first)
        parts.append(_run_batch(config, first, count, keep_embeddings, buffer))
        if progress is not None:
            progress(first + count, config.seeds)
    merged = {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}
    return OneStepResult(config=config, eta=config.step_size(), **merged)


def summarize(result: OneStepResult) -> dict:
    """The JSON summary of ``attnsep xor one-step`` (per-replica values included)."""

    config = result.config
    head_min = result.mass_after.min(axis=1)
    return {
        **{key: value for key, value in asdict(config).items() if key not in ("replica_batch",)},
        "support": None if config.support is None else list(config.support),
        "gradient": "population" if config.samples is None else "empirical",
        "eta": result.eta,
        "trainable_params": result.trainable_params,
        "loss_before": summary(result.loss_before),
        "loss_after": summary(result.loss_after),
        "success_rate": float(result.success.mean()),
        "specialization_rate": float(result.specialized.mean()),
        "collapse_rate": float(result.collapsed.mean()),
        "support_mass": {
            "mean": float(head_min.mean()),
            "min": float(head_min.min()),
            "values": [float(v) for v in head_min],
        },
        "certified_error": {
            "median": stats.median(result.certified_error),
            "max": float(result.certified_error.max()),
            "values": [float(v) for v in result.certified_error],
        },
        "supports": result.support.tolist(),
    }
