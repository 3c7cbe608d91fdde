"""The PE width a trained selector needs: ``m_p*`` by bisection, each probe trained to
convergence — by SGD to a stopping rule, or as population gradient descent
(:func:`population_threshold`) (SPEC B5.2, Part C, Part D).

**Training** (SPEC B3, position block only, from ``W = 0``): gradient descent on the loss per
coordinate (the loss over ``d``), exact over the Gaussian tokens and Monte Carlo over ``(y,
PE)``, from the rate ``lr = lr_per_dim · m_p`` (adapted per replica, below). With the position
block alone the loss is ``d`` times a function of ``W`` that does not involve ``d``, so the
trajectory of ``W``, every stopping decision and hence ``m_p*`` are the same for every ``d``
(tested); only the token block, not trained here, could make ``m_p*`` depend on ``d``. The
logits are ``a_i = p_i · v`` with ``v = W u_y``. Off the subset, ``p_i`` is isotropic and
independent of ``v``, so ``a_i = ‖v‖ t_i`` with ``t_i`` one coordinate of an encoding (the law
of ``exact/products.py``): a sequence costs ``O(q m + m² + T)`` instead of ``O(T m)``, which
makes ``T = 1024`` affordable. The loss keeps its law exactly, and autograd's gradient ``t_i v̂
u_yᵀ`` is the full-draw gradient ``p_i u_yᵀ`` averaged over the component of ``p_i`` orthogonal
to ``v`` (symmetric, independent of every logit): an unbiased estimate of the same population
gradient, with less noise (tested against full draws).

**Stopping rule** (:mod:`.stopping`): every ``chunk`` steps, on a fixed monitor draw, the
bold driver adapts each replica's rate and stops it once its loss is low enough, near the
``W = αI`` family's best, on a plateau, or at ``max_steps``. Success is judged on an independent
*eval* draw: loss ``<= target x`` uniform.

Randomness: replica ``e`` draws batch ``key`` from stream ``(seed, e, "select-threshold", T, q,
m_p, kind, *key)``; its trajectory does not depend on how many replicas run beside it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch

from ..configs import PE_KINDS, POSITION_LR_PER_DIM
from ..configs import SELECTION_TARGET as TARGET
from ..core.rng import stream_seed
from ..core.validate import int_at_least, one_of, positive_finite, require
from ..exact import products
from ..exact.family import FamilyBest, best_family_loss
from ..exact.family_law import best_law_loss
from ..exact.selection_bounds import uniform_attention_loss
from .search import Probe, smallest_passing
from .stopping import BoldDriver, Stopping

RATE = 0.9
"""``m_p*``: the smallest width whose success rate over the replicas reaches this."""


@dataclass(frozen=True)
class Training:
    """One probe's training and evaluation settings (SPEC B3 defaults, position block)."""

    batch: int = 128
    lr_per_dim: float = 8 * POSITION_LR_PER_DIM  # per-coordinate loss: train.selection's at d = 8
    eval_size: int = 2048
    kind: str = "sphere"
    stopping: Stopping = Stopping()

    def __post_init__(self) -> None:
        int_at_least("batch", self.batch, 1)
        positive_finite("lr_per_dim", self.lr_per_dim)
        int_at_least("eval_size", self.eval_size, 2)
        one_of("pe kind", self.kind, PE_KINDS)


def draw(
    T: int, q: int, m_p: int, batch: int, seed: int, replicas: int, key: tuple, kind: str
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(on_y, t)``: the encodings of the subset ``E x B x q x m_p`` and the off-subset
    coordinates ``E x B x (T − q)`` (the ``ratio`` recipe of ``exact.products.draw``)."""

    def one(e: int) -> products.Draw:
        rng = np.random.default_rng(stream_seed(seed, e, "select-threshold", T, q, m_p, kind, *key))
        return products.draw(rng, batch, T, q, m_p, kind, "ratio")

    stacked = products.stack([one(e) for e in range(replicas)])
    return torch.from_numpy(stacked.on_y), torch.from_numpy(stacked.t)


def product_losses(W: torch.Tensor, on_y: torch.Tensor, t: torch.Tensor, d: int) -> torch.Tensor:
    """Per-sequence ``d Σ_i (s_i − 1{i∈y}/q)²`` (``E x B``, SPEC B3) with logits ``p_i · W u_y``
    on the subset and ``‖W u_y‖ t_i`` off it; ``W`` is the position block ``E x m_p x m_p``."""
    v = torch.einsum("eij,ebj->ebi", W, on_y.sum(dim=-2))
    return products.selection_loss(
        torch.cat(products.products(on_y, t, v), dim=-1), on_y.shape[-2], d
    )


@dataclass(frozen=True)
class Converged:
    """A probe's outcome per replica: final loss / uniform on the eval draw (± s.e.), the steps
    used, the rule that stopped training and the family's best loss / uniform."""

    ratios: list[float]
    stderrs: list[float]
    steps: list[int]
    rules: list[str]
    family_ratio: float


def converge(
    T: int,
    q: int,
    m_p: int,
    d: int,
    replicas: int,
    seed: int,
    training: Training = Training(),
    target: float = TARGET,
) -> Converged:
    """Train ``replicas`` position blocks until the stopping rule fires (:mod:`.stopping`)."""
    require(q < T, f"q must be < T (the uniform loss is 0 at q = T), got q={q}, T={T}")
    stop, kind = training.stopping, training.kind
    uniform = float(uniform_attention_loss(T, q, d))
    best = best_family_loss(T, q, m_p, d, kind, seed=seed).loss

    def sample(key: tuple, size: int) -> tuple[torch.Tensor, torch.Tensor]:
        return draw(T, q, m_p, size, seed, replicas, key, kind)

    def mean_loss(data: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        with torch.no_grad():
            return product_losses(W, *data, d).mean(dim=-1)

    W = torch.zeros(replicas, m_p, m_p, dtype=torch.float64)
    monitor = sample(("monitor",), stop.monitor)
    driver = BoldDriver.of(
        stop, training.lr_per_dim * m_p, mean_loss(monitor), target, uniform, best
    )
    step = 0
    while driver.going(step):
        running, start = driver.running(), W.clone()
        for _ in range(stop.chunk):
            W.requires_grad_(True)
            loss = product_losses(W, *sample(("train", step), training.batch), 1).mean(dim=-1)
            (grad,) = torch.autograd.grad(loss.sum(), W)  # of the loss per coordinate
            W = (W - running * driver.lr * grad).detach()
            step += 1
        W = driver.judge(W, start, mean_loss(monitor), step)
    with torch.no_grad():
        final = product_losses(W, *sample(("eval",), training.eval_size), d)
    means, stderrs = final.mean(dim=-1), final.std(dim=-1) / math.sqrt(training.eval_size)
    return Converged(
        ratios=(means / uniform).tolist(),
        stderrs=(stderrs / uniform).tolist(),
        steps=driver.steps,
        rules=driver.rules,
        family_ratio=best / uniform,
    )


def family_threshold(
    T: int, q: int, target: float = TARGET, m_limit: int = 4096, kind: str = "sphere", seed: int = 0
) -> int | None:
    """``m_p^fam``: the smallest width whose ``W = αI`` family reaches ``target`` x uniform
    (``exact.family.best_family_loss``; the ratio does not depend on ``d``)."""

    def evaluate(m_p: int) -> list[bool]:
        best = best_family_loss(T, q, m_p, 1, kind, seed=seed)
        return [best.loss <= target * best.uniform]

    return smallest_passing(evaluate, 1.0, 2, m_limit)[0]


def population_threshold(
    T: int,
    q: int,
    d: int,
    replicas: int,
    seed: int = 0,
    samples: int = 1024,
    target: float = TARGET,
    m_limit: int = 4096,
    kind: str = "sphere",
    by_law: bool = False,
) -> dict:
    """``m_p*`` of population gradient descent from ``W = 0`` on the position block.

    The law of the encodings is invariant under rotations, so the population gradient at
    ``W = αI`` commutes with every rotation and is itself a multiple of ``I`` (tested): gradient
    descent from 0 moves along ``W = α(t) I`` only and comes to rest at the first minimum of
    the family's loss in ``α`` (``best_family_loss(descent=True)``). Each replica is an
    independent Monte Carlo estimate of that loss (``samples`` sequences to fit ``α``, as many
    to evaluate it; stream ``(seed, e, "population-threshold")``); it succeeds at ``m_p`` when
    its loss is ``<= target x`` uniform. Bisection as :func:`trained_threshold`, guarded
    (``search.smallest_passing(..., guard=True)``): a loose ``m_p*``, passed by fewer than all
    replicas with neither it nor ``m_p* + 1`` passed by all, gets ``m_p* + 1, + 2, + 4, …``
    probed until one passes with every replica, so that no bootstrap draw over the replicas
    leaves the probes (SPEC B5.2, Part E). With ``by_law``
    (``sphere`` only) each loss comes from ``exact.family_law.best_law_loss``, whose cost does
    not grow with ``T``; the record then says ``"evaluator": "law"``."""
    require(not by_law or kind == "sphere", f"by_law needs sphere encodings, got {kind!r}")
    runs: dict[int, list] = {}

    def best(m_p: int, stream: int) -> FamilyBest:
        if by_law:
            return best_law_loss(T, q, m_p, d, samples, stream, True)
        return best_family_loss(T, q, m_p, d, kind, samples, stream, True)

    def evaluate(m_p: int) -> list[bool]:
        if m_p not in runs:
            runs[m_p] = [
                best(m_p, stream_seed(seed, e, "population-threshold")) for e in range(replicas)
            ]
        return [b.loss <= target * b.uniform for b in runs[m_p]]

    m_star, probes = smallest_passing(evaluate, RATE, 2, m_limit, guard=True)
    return {
        "T": T,
        "q": q,
        "d": d,
        "m_star": m_star,
        "target": target,
        "replicas": replicas,
        "solver": "population",
        "samples": samples,
        **({"evaluator": "law"} if by_law else {}),
        "probes": [_family_probe(p.as_record(), runs[p.size]) for p in probes],
    }


def _family_probe(probe: dict, bests: list[FamilyBest]) -> dict:
    """A probe's record with its replicas' loss ratios to uniform, their errors and ``α``."""
    ratios = [b.loss / b.uniform for b in bests]
    stderrs = [b.stderr / b.uniform for b in bests]
    return {**probe, "ratios": ratios, "stderrs": stderrs, "alphas": [b.alpha for b in bests]}


def search_from_family(
    converged: Callable[[int], Any], target: float, start: int, m_limit: int
) -> tuple[int | None, list[tuple[Probe, Any]]]:
    """``m_p*`` by ``search.smallest_passing`` from ``start`` (half the family's threshold: a
    trained selector is not expected below it, so the cheap small widths are skipped), repeated
    from 2 should that start pass, reusing every probe; ``converged(m_p)`` trains one width and
    returns a run with per-replica loss ``ratios``. Also every probe with its run, by width."""
    runs: dict[int, Any] = {}

    def evaluate(m_p: int) -> list[bool]:
        if m_p not in runs:
            runs[m_p] = converged(m_p)
        return [r <= target for r in runs[m_p].ratios]

    m_star, _ = smallest_passing(evaluate, RATE, start, m_limit)
    if m_star == start and start > 2:
        m_star, _ = smallest_passing(evaluate, RATE, 2, start)
    return m_star, [
        (Probe(m, tuple(r <= target for r in runs[m].ratios)), runs[m]) for m in sorted(runs)
    ]


def trained_threshold(
    T: int,
    q: int,
    d: int,
    replicas: int,
    seed: int = 0,
    training: Training = Training(),
    target: float = TARGET,
    m_limit: int = 2048,
) -> dict:
    """``m_p*``: the smallest width whose converged selectors reach ``target`` x uniform in a
    ``RATE`` share of the replicas (:func:`search_from_family`: doubling, then bisection to a
    step of 1, from half the family's threshold ``m_p^fam``). Each probe record keeps every
    replica's outcome and ratio, the steps used and the stopping rule, so the bootstrap
    (``stats.threshold_draws``) needs no recomputation."""
    family = family_threshold(T, q, target, m_limit, training.kind, seed)
    m_star, probes = search_from_family(
        lambda m_p: converge(T, q, m_p, d, replicas, seed, training, target),
        target,
        max(2, (family or m_limit) // 2),
        m_limit,
    )
    return {
        "T": T,
        "q": q,
        "d": d,
        "m_star": m_star,
        "family_m": family,
        "target": target,
        "replicas": replicas,
        "training": asdict(training),
        "probes": [{**p.as_record(), **asdict(run)} for p, run in probes],
    }
