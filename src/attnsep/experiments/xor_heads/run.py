"""A7.4's jobs and records: one population step per series, ``d`` and init (``train.one_step``),
the heads' weights and the step's alignment ratio per replica, a few attention maps, and the
cost of a job (SPEC A7.4)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...configs import OneStepConfig
from ...core.validate import require
from ...metrics import stats
from ...train.memory import one_step_peak
from .. import costs
from ..base import Record
from ..xor_one_step.config import Series, schedule_m
from ..xor_one_step.run import outcome_record
from .config import Config

if TYPE_CHECKING:
    import torch

    from ...models.query_heads import QueryHeads
    from ...train.one_step import OneStepResult

MASS = 0.9
"""A head is on its bit when its weight there is at least this (the paper's "nearly 1.0")."""
MAX_MAP_D = 1024
"""Heat maps are stored only up to this ``d``: wider rows are not readable as pixels."""
CHUNK_ELEMENTS = 1 << 22
"""Replicas of ``V`` regenerated at once for the alignment: ``count x d x m`` under this."""


def points(config: Config) -> list[tuple[Series, int, int, int]]:
    """``(series, d, m, seeds)`` of every one-step run, before the inits."""
    fixed: list[tuple[Series, int, int, int]] = [
        ("fixed", d, config.m, config.seeds) for d in config.d_values
    ]
    return fixed + [
        ("schedule", d, schedule_m(d, config.schedule_scale), config.seeds_schedule)
        for d in config.schedule_d_values
    ]


def split(config: Config) -> list[Config]:
    """One job per series, ``d`` and init."""
    return [
        config.model_copy(
            update={
                "d_values": [d] if series == "fixed" else [],
                "schedule_d_values": [d] if series == "schedule" else [],
                "inits": [init],
            }
        )
        for series, d, _, _ in points(config)
        for init in config.inits
    ]


def initial_state(
    step: OneStepConfig, first: int, count: int
) -> tuple[QueryHeads, torch.Tensor, torch.Tensor]:
    """Model, ``theta`` and supports of replicas ``first .. first + count - 1``: the same draws
    as ``run_one_step`` (every replica has its own streams)."""
    from ...core.device import resolve_device
    from ...embeddings import sphere_embeddings
    from ...models.query_heads import QueryHeads, initial_queries
    from ...tasks.parity import SparseParity

    device = resolve_device(step.device)
    V = sphere_embeddings(step.seed, count, step.d, step.m, first_replica=first, device=device)
    support = SparseParity.of(step).supports(step.seed, count, first_replica=first)
    theta = initial_queries(step.seed, count, step.k, step.m, step.init, first)
    return QueryHeads(V), theta.to(V.device), support.to(V.device)


def alignment(step: OneStepConfig, result: OneStepResult) -> tuple[np.ndarray, np.ndarray]:
    """Per replica (SPEC A7.4, the config's docstring): the step's signed alignment ratio, the
    smaller of the two heads', and whether every head's top position after the step is its own
    bit. ``V`` is regenerated in chunks of replicas (``CHUNK_ELEMENTS``)."""
    import torch

    from ...metrics.alignment import own_bits, signed_ratio

    batch = max(1, CHUNK_ELEMENTS // (step.d * step.m))
    ratios, kept = [], []
    for first in range(0, step.seeds, batch):
        count = min(batch, step.seeds - first)
        model, theta, support = initial_state(step, first, count)
        after = torch.from_numpy(result.theta_after[first : first + count]).to(theta)
        before = model.scores(theta)
        change = model.scores(after - theta)
        own = own_bits(before, support)
        ratios.append(signed_ratio(change, support, own).min(dim=1).values.cpu().numpy())
        kept.append(((before + change).argmax(dim=2) == own).all(dim=1).cpu().numpy())
    ratio = np.concatenate(ratios)
    require(bool(np.isfinite(ratio).all()), f"an alignment ratio is not finite (d={step.d})")
    return ratio, np.concatenate(kept)


def run(config: Config) -> list[Record]:
    from ...train.one_step import run_one_step

    records = []
    for series, d, m, seeds in points(config):
        for init in config.inits:
            step = OneStepConfig(
                d=d,
                m=m,
                seeds=seeds,
                seed=config.seed,
                init=init,
                eta_scale=config.eta_scale,
                device=config.device,
            )
            result = run_one_step(step)
            on_target = result.specialized & (result.mass_after.min(axis=1) >= MASS)
            hits = int(on_target.sum())
            low, high = stats.wilson(hits, step.seeds)
            ratio, kept = alignment(step, result)
            records.append(
                {
                    "kind": "summary",
                    "series": series,
                    "init": init,
                    **outcome_record(step, result),
                    "on_target": hits,
                    "on_target_rate": hits / step.seeds,
                    "on_target_low": low,
                    "on_target_high": high,
                    "mass": result.mass_after.tolist(),
                    "ratio": ratio.tolist(),
                    "own_kept": int(kept.sum()),
                }
            )
            if series == "fixed" and d <= MAX_MAP_D:
                records += _maps(step, result, min(config.shown, step.seeds))
    return records


def _maps(step: OneStepConfig, result: OneStepResult, shown: int) -> list[Record]:
    import torch

    model, theta, _ = initial_state(step, 0, shown)
    before = model.weights(theta).cpu().numpy()
    after = model.weights(torch.from_numpy(result.theta_after[:shown]).to(theta)).cpu().numpy()
    return [
        {
            "kind": "map",
            "d": step.d,
            "init": step.init,
            "replica": e,
            "support": result.support[e].tolist(),
            "before": before[e].tolist(),
            "after": after[e].tolist(),
            "hit": bool(result.specialized[e] and result.mass_after[e].min() >= MASS),
        }
        for e in range(shown)
    ]


# --- cost (``attnsep reproduce --plan``): the work of one job ---------------------------------


def work(c: costs.Config) -> float:

    fixed = sum(c["seeds"] * d * c["m"] for d in c["d_values"])
    schedule = sum(  # absent from the configs of version 2 (published timings)
        c["seeds_schedule"] * d * schedule_m(d, c["schedule_scale"])
        for d in c.get("schedule_d_values", [])
    )
    return len(c["inits"]) * (fixed + schedule)


def peak(c: costs.Config) -> float:
    """The largest one-step run (``train.memory.one_step_peak``): the alignment after it draws
    ``V`` again in chunks of at most ``CHUNK_ELEMENTS``, under the step's batch."""

    sizes = [(d, c["m"], c["seeds"]) for d in c["d_values"]]
    sizes += [
        (d, schedule_m(d, c["schedule_scale"]), c["seeds_schedule"])
        for d in c.get("schedule_d_values", [])
    ]
    return max(one_step_peak(OneStepConfig(d=d, m=m, seeds=n)) for d, m, n in sizes)
