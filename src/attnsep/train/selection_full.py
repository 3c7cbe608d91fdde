"""The PE width a selector needs when SGD trains the whole ``W``, content block included: ``m_p*``
by bisection, each probe trained to a stopping rule (SPEC B2, B3; SPEC Part G, item B5.5).

**Model** (SPEC B2): logits ``a_i = z_iᵀ W z_q`` with ``z_i = (x_i ; p_i)`` and the query
``z_q = (0 ; u_y)``, so ``a_i = x_iᵀ W_xp u_y + p_iᵀ W_pp u_y``: only the last ``m_p`` columns of
``W`` (the content rows ``W_xp``, ``d x m_p``, and the position block ``W_pp``) enter the
logits, and the gradient of every other entry is exactly 0 (the query's content is 0). Training
the full ``W`` from 0 is therefore training ``W[:, d:]`` (``(d + m_p) x m_p``), the rest staying
0; that is what is stored and updated.

**Training** (*choice*): SGD on the sampled loss per coordinate ``‖f − STS‖² / d`` of a fresh
batch each step, tokens ``x_i ~ N(0, I_d)`` drawn as they are and the stochastic encodings drawn
by their law (``train.selection.sampled_law_terms``, exact in distribution), with one rate per
block, each set by the loss's structure at uniform attention (``W = 0``, ``u = u_y``,
``E‖u‖² = q``, ``L_u = (T − q)/(qT)`` the uniform loss per coordinate):

* position block: ``lr_per_dim · m_p`` (``selection_threshold.Training``): along ``W = αI``
  the gradient is ``L'(α) W* / m_p``, so this rate moves ``α`` at a pace free of ``m_p``.
* content rows ``W_xp``: their population gradient is 0 at ``W_xp = 0`` (``x → −x`` maps the
  loss at ``W_xp`` to the loss at ``−W_xp``), so SGD there only adds noise. The loss is a bowl
  ``L_u + h ‖W_xp‖²_F / 2`` with ``h = 2 (1 + (d + 1)/T) q / (m_p d)`` (logits ``x_i · v``,
  ``v = W_xp u``, shift ``f`` by ``≈ v``), and a per-sequence gradient of mean square
  ``C = 4 q L_u ((1 + d/T)² + d/T) / d`` (both checked by Monte Carlo). SGD at rate ``η`` and
  batch ``B`` then rests ``η C / (4B)`` above ``L_u`` (stationary noise of a quadratic), i.e.
  ``η q ((1 + d/T)² + d/T) / (d B)`` x uniform, free of ``m_p``. The content rate is the one
  whose floor is ``noise_share x target`` x uniform, at most ``1 / (2h)`` (a stable,
  non-oscillating step, where the floor's formula holds to ~25%): the content rows train at
  every ``(d, q, m_p)`` with the same noise cost relative to the success threshold. One rate
  for both blocks (``lr_per_dim · m_p`` on the content too) leaves a floor ``∝ m_p q / B``:
  ``0.016 m_p`` x uniform at ``q = 8, T = 16, d = 8`` (the target 0.5 by ``m_p ≈ 31``); the
  bold driver's halving that escapes it slows ``α`` by as much, so wider encodings trained
  *slower* and the search's monotonicity broke.

The rates then follow the stopping rule of ``stopping`` (its ``BoldDriver``), one factor
per replica on both (the content rate never above its value above): chunks of steps judged on
one fixed monitor draw, the bold driver (a chunk that raised the monitor loss is undone at half
the rate, one that lowered it grows the rate), annealing on plateaus, then a stop at the first
of ``reached``, ``near-best`` (within ``near_best`` of the ``W = αI`` family's best loss),
``plateau`` or ``cap``. Success is judged on an independent eval draw: sampled loss
``<= target x`` uniform (``d (T − q) / (qT)``).

Randomness: replica ``e`` draws its encodings from stream ``(seed, e, "pe-law", "select-full",
T, q, m_p, part, *key)`` (shared by every ``d``) and its tokens from ``(seed, e, "select-full",
"tokens", T, q, m_p, d, part, *key)``: a replica's trajectory depends neither on how many
replicas run beside it nor on how the jobs are split.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache, partial

import numpy as np
import torch

from ..configs import POSITION_LR_PER_DIM
from ..core.rng import stream_seed
from ..core.validate import int_at_least, one_of, positive_finite, require
from ..exact import products
from ..exact.family import best_family_loss
from ..exact.selection_bounds import uniform_attention_loss
from .selection import law_draws, sampled_law_terms
from .selection_threshold import family_threshold, search_from_family
from .stopping import BoldDriver, Stopping


@dataclass(frozen=True)
class FullTraining:
    """One probe's SGD on the full ``W`` (module docstring): batch, starting rate per PE
    dimension (of the loss per coordinate), eval draw and stopping rule."""

    batch: int = 64
    lr_per_dim: float = 8 * POSITION_LR_PER_DIM
    noise_share: float = 0.1  # the content rows' SGD floor, a share of target x uniform
    eval_size: int = 1024
    kind: str = "sphere"
    stopping: Stopping = Stopping(monitor=256)

    def __post_init__(self) -> None:
        int_at_least("batch", self.batch, 1)
        positive_finite("lr_per_dim", self.lr_per_dim)
        positive_finite("noise_share", self.noise_share)
        int_at_least("eval_size", self.eval_size, 2)
        one_of("pe kind", self.kind, ("sphere", "gaussian"))


Batch = tuple[torch.Tensor, products.Draw]


def content_curvature(T: int, q: int, m_p: int, d: int) -> float:
    """``h``: the per-coordinate loss's curvature along any content direction of unit Frobenius
    norm at ``W = 0`` (module docstring)."""
    return 2.0 * (1.0 + (d + 1) / T) * q / (m_p * d)


def content_noise(T: int, q: int, d: int) -> float:
    """``C / L_u``: a sequence's content gradient's mean square over the uniform loss per
    coordinate, at ``W = 0`` (module docstring)."""
    return 4.0 * q * ((1.0 + d / T) ** 2 + d / T) / d


def content_rate(T: int, q: int, m_p: int, d: int, batch: int, floor: float) -> float:
    """The content rows' rate: SGD's stationary excess ``η C / (4B)`` equal to ``floor`` x
    uniform, at most ``1 / (2h)``."""
    return min(4.0 * batch * floor / content_noise(T, q, d), 0.5 / content_curvature(T, q, m_p, d))


def draw_batch(
    T: int, q: int, m_p: int, d: int, seed: int, replicas: int, kind: str, key: tuple, size: int
) -> Batch:
    """``(X, draws)``: tokens ``E x size x T x d`` (the subset at the first ``q`` positions) and
    the encodings' law draws (``train.selection.law_draws``), streams of the module docstring."""
    pe_key = ("select-full", T, q, m_p, *key)
    draws = law_draws(seed, range(replicas), pe_key, size, T, q, m_p, kind)
    xs = [
        np.random.default_rng(
            stream_seed(seed, e, "select-full", "tokens", T, q, m_p, d, *key)
        ).standard_normal((size, T, d))
        for e in range(replicas)
    ]
    return torch.from_numpy(np.stack(xs)), draws


def batch_loss(W: torch.Tensor, data: Batch, kind: str) -> torch.Tensor:
    """Per-sequence sampled loss ``‖f − STS‖²`` (``E x B``) of ``W = W[:, d:]``."""
    return sampled_law_terms(W, data[0], data[1], kind)[0]


@dataclass(frozen=True)
class FullConverged:
    """A probe per replica: final loss / uniform on the eval draw (± s.e.), steps, the rule that
    stopped, the content rows' share ``‖W_xp‖ / ‖W[:, d:]‖``, ``cos(W, W*)`` (``W*`` the
    identity on the position block, SPEC B2) and the family's best loss / uniform."""

    ratios: list[float]
    stderrs: list[float]
    steps: list[int]
    rules: list[str]
    content: list[float]
    cosines: list[float]
    family_ratio: float
    content_rate: float


def _sgd_step(W: torch.Tensor, rate: torch.Tensor, data: Batch, kind: str) -> torch.Tensor:
    """One SGD step on the loss per coordinate: ``W − rate · mean_b g uᵀ / d`` (``rate``:
    ``E x 1 x 1``, or ``E x (d + m_p) x 1`` a rate per row)."""
    X, draws = data
    _, g, u = sampled_law_terms(W, X, draws, kind)
    return W - rate * (torch.bmm(g.transpose(-1, -2), u) / (X.shape[1] * X.shape[-1]))


@lru_cache(maxsize=256)
def family_ratio(T: int, q: int, m_p: int, kind: str, seed: int) -> float:
    """The ``W = αI`` family's best loss over uniform (``d``-free)."""
    best = best_family_loss(T, q, m_p, 1, kind, seed=seed)
    return best.loss / best.uniform


def _block_rates(lr: torch.Tensor, base: float, eta: float, d: int, m_p: int) -> torch.Tensor:
    """Per replica and row (``E x (d + m_p) x 1``): the position rows' ``lr``; the content
    rows' ``eta`` times the bold driver's factor ``lr / base``, at most 1."""
    content = (torch.arange(d + m_p) < d)[None, :, None]
    return torch.where(content, eta * (lr / base).clamp(max=1.0), lr)


def _shares(W: torch.Tensor, d: int) -> tuple[list[float], list[float]]:
    """Per replica ``‖W_xp‖ / ‖W[:, d:]‖`` and ``cos(W, W*)``."""
    total = torch.linalg.matrix_norm(W).clamp_min(1e-300)
    content = torch.linalg.matrix_norm(W[:, :d]) / total
    trace = torch.diagonal(W[:, d:], dim1=-2, dim2=-1).sum(dim=-1)
    cosine = trace / (total * math.sqrt(W.shape[-1]))
    return content.tolist(), cosine.tolist()


def converge_full(
    T: int,
    q: int,
    m_p: int,
    d: int,
    replicas: int,
    seed: int,
    training: FullTraining = FullTraining(),
    target: float = 0.2,
) -> FullConverged:
    """SGD on the full ``W`` of ``replicas`` selectors until the stopping rule fires."""
    require(q < T, f"q must be < T (the uniform loss is 0 at q = T), got q={q}, T={T}")
    stop, kind = training.stopping, training.kind
    uniform = float(uniform_attention_loss(T, q, d)) / d  # per coordinate
    best = family_ratio(T, q, m_p, kind, seed) * uniform

    sample = partial(draw_batch, T, q, m_p, d, seed, replicas, kind)
    monitor = sample(("monitor",), stop.monitor)

    def mean_loss(W: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return batch_loss(W, monitor, kind).mean(dim=-1) / d

    W = torch.zeros(replicas, d + m_p, m_p, dtype=torch.float64)
    base = training.lr_per_dim * m_p
    eta = content_rate(T, q, m_p, d, training.batch, training.noise_share * target)
    driver = BoldDriver.of(stop, base, mean_loss(W), target, uniform, best)
    step = 0
    while driver.going(step):
        rates = driver.running() * _block_rates(driver.lr, base, eta, d, m_p)
        start = W.clone()
        for _ in range(stop.chunk):
            W = _sgd_step(W, rates, sample(("train", step), training.batch), kind)
            step += 1
        W = driver.judge(W, start, mean_loss(W), step)
    with torch.no_grad():
        final = batch_loss(W, sample(("eval",), training.eval_size), kind) / (d * uniform)
    stderrs = final.std(dim=-1) / math.sqrt(training.eval_size)
    summary = (final.mean(dim=-1).tolist(), stderrs.tolist(), driver.steps, driver.rules)
    return FullConverged(*summary, *_shares(W, d), best / uniform, eta)


@lru_cache(maxsize=64)
def cached_family_threshold(T: int, q: int, target: float, m_limit: int, kind: str) -> int | None:
    """``selection_threshold.family_threshold`` (seed 0), kept per process."""
    return family_threshold(T, q, target, m_limit, kind, 0)


def full_threshold(
    T: int,
    q: int,
    d: int,
    replicas: int,
    seed: int = 0,
    training: FullTraining = FullTraining(),
    target: float = 0.2,
    m_limit: int = 1024,
    family_start: bool = True,
) -> dict:
    """``m_p*`` of full-``W`` SGD: the smallest width whose converged selectors reach ``target``
    x uniform in a ``RATE`` share of the replicas, by ``search.smallest_passing`` from half the
    ``W = αI`` family's threshold ``m_p^fam`` (repeated from 2 should that start pass, reusing
    every probe). Each probe record keeps every replica's outcome, loss ratio, steps, stopping
    rule, content share and cosine. Without ``family_start`` the search starts at 2 and the
    family's threshold is not computed (``family_m`` is ``None``)."""
    family = cached_family_threshold(T, q, target, m_limit, training.kind) if family_start else None
    m_star, probes = search_from_family(
        lambda m_p: converge_full(T, q, m_p, d, replicas, seed, training, target),
        target,
        max(2, (family or 4) // 2),
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
        "solver": "sgd-full",
        "probes": [{**p.as_record(), **vars(run)} for p, run in probes],
    }
