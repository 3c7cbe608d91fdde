"""The one-step experiment on an ensemble: draw, take one gradient step, measure (SPEC A5, A6).

Replicas are processed in batches (``replica_batch``); every random draw of replica ``e``
comes from its own streams, so the results do not depend on the batch split.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from functools import lru_cache

import numpy as np
import torch

from .. import attention
from ..configs import OneStepConfig
from ..core.device import device_name, resolve_device, resolve_dtype
from ..core.validate import require
from ..embeddings import StreamedEmbeddings, sphere_embeddings
from ..exact.parity import population_loss
from ..metrics import stats
from ..metrics.ensemble import summary
from ..metrics.parity import assigned_mass, best_assignment, collapsed, specialized
from ..models.query_heads import QueryHeads, initial_queries
from ..tasks.parity import SparseParity
from .memory import one_step_batch, one_step_stream_kept, one_step_streamed
from .parity import (
    apply_step,
    empirical_weights_gradient,
    label_correlation,
    population_weights_gradient,
    query_gradient,
)
from .surrogate import surrogate_query_gradient


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
    device: str = "cpu"  # where it ran: "cpu", "cuda:0", ...

    @property
    def success(self) -> np.ndarray:
        return self.certified_error <= self.config.success_tol

    @property
    def trainable_params(self) -> int:
        return QueryHeads.trainable_params(self.config.k, self.config.m)


REPLICA_FIELDS = tuple(
    f.name for f in fields(OneStepResult) if f.name not in ("config", "eta", "embeddings", "device")
)
"""The per-replica arrays of a result that every run fills (``embeddings`` only when kept)."""


@lru_cache(maxsize=4096)
def _support(task: SparseParity, seed: int, replica: int) -> torch.Tensor:
    """Replica ``replica``'s row of ``task.supports``: each row is drawn and sorted alone, and a
    width search (``search.smallest_passing``) asks for the same replicas at every probe, where
    the draw (a permutation of ``d``) would be repeated."""
    return task.supports(seed, 1, first_replica=replica)[0]


def prepare_replicas(
    config: OneStepConfig,
    first: int,
    count: int,
    keep_embeddings: bool,
    buffer: torch.Tensor | None = None,
) -> tuple[SparseParity, QueryHeads, torch.Tensor, torch.Tensor]:
    """Replicas ``first .. first + count - 1`` before the step: the task, the model (``V`` drawn
    into ``buffer`` when given), the supports and the initial query vectors."""
    device, dtype = resolve_device(config.device), resolve_dtype(config.dtype)
    task = SparseParity.of(config)
    V: torch.Tensor | StreamedEmbeddings
    out = None if buffer is None else buffer[:count]
    if one_step_streamed(config, keep_embeddings):
        V = StreamedEmbeddings(  # kept in ``out`` when given: drawn once for the step
            config.seed, count, config.d, config.m, first, dtype, device, out=out
        )
    else:
        V = sphere_embeddings(
            config.seed,
            count,
            config.d,
            config.m,
            first_replica=first,
            dtype=dtype,
            device=device,
            out=out,
        )
    model = QueryHeads(V, config.attention, config.sign)
    if config.support is None:
        support = torch.stack([_support(task, config.seed, e) for e in range(first, first + count)])
    else:
        support = task.fixed_support(list(config.support), count)
    theta = initial_queries(config.seed, count, config.k, config.m, config.init, first).to(
        device, dtype
    )
    return task, model, support.to(device), theta


def _run_batch(
    config: OneStepConfig,
    first: int,
    count: int,
    keep_embeddings: bool,
    buffer: torch.Tensor | None = None,
) -> dict[str, np.ndarray]:
    """Replicas ``first .. first + count - 1``; ``V`` is drawn into ``buffer`` when given."""
    task, model, support, theta = prepare_replicas(config, first, count, keep_embeddings, buffer)
    surrogate = config.samples is not None and config.gradient == "surrogate"
    if config.samples is None or surrogate:
        weights_grad = population_weights_gradient(model, task, support)
    else:
        weights_grad = empirical_weights_gradient(
            model, task, support, config.seed, config.samples, first
        )
    corr = label_correlation(model, task)
    scores = model.scores(theta)
    loss, grad = query_gradient(model, scores, weights_grad)
    if surrogate:
        assert config.samples is not None  # a surrogate gradient stands for a sample count
        grad = surrogate_query_gradient(
            model, task, support, scores, grad, config.seed, config.samples, first
        )
    theta_after = apply_step(theta, grad, config.step_size())
    if config.samples is None or surrogate:  # the step's loss is the population loss at theta
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
        assert isinstance(model.V, torch.Tensor)  # kept embeddings are never streamed
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
    batch = one_step_batch(config)
    buffer = None  # one V buffer for all batches: fresh memory costs page faults every time
    if not keep_embeddings and (not one_step_streamed(config) or one_step_stream_kept(config)):
        buffer = torch.empty(batch, config.d, config.m, dtype=torch.float64)
    parts = []
    for first in range(0, config.seeds, batch):
        count = min(batch, config.seeds - first)
        parts.append(_run_batch(config, first, count, keep_embeddings, buffer))
        if progress is not None:
            progress(first + count, config.seeds)
    merged = {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}
    device = device_name(resolve_device(config.device))
    return OneStepResult(config=config, eta=config.step_size(), device=device, **merged)


def gradient_kind(config: OneStepConfig) -> str:
    """``population``, ``empirical`` (``n`` inputs drawn) or ``surrogate`` (its Gaussian
    surrogate, ``train.surrogate``)."""
    if config.samples is None:
        return "population"
    return "surrogate" if config.gradient == "surrogate" else "empirical"


def summarize(result: OneStepResult) -> dict:
    """The JSON summary of ``attnsep xor one-step`` (per-replica values included)."""

    config = result.config
    head_min = result.mass_after.min(axis=1)
    return {
        **config.model_dump(exclude={"replica_batch"}),
        "support": None if config.support is None else list(config.support),
        "device": result.device,
        "gradient": gradient_kind(config),
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
