"""Training the selector on sparse token selection, all replicas at once (SPEC B3).

Optimizer (*choice*, measured at ``d=10, T=20, q=3, m_p=128``): plain SGD, the rate decaying
linearly from ``lr`` to ``0``. Adam was measured and rejected: its per-entry normalization
turns the zero-mean gradient noise on the ``m_p² − m_p`` off-diagonal entries into a random
walk as large as the signal (``cos(W, W*) ≈ 0.90`` after 1500 steps), while SGD's noise
shrinks with the decaying rate. With the full ``W`` trainable the content-row block (tokens
of norm ``√d``) limits the rate: ``lr = 5`` reached ``cos 0.98``, ``lr = 10`` lost stability
mid-run (loss up to 2.4, final cos 0.92), ``lr = 20`` ended above the zero predictor; the
default ``lr = 3`` keeps a margin and reaches cos 0.995. ``1500`` steps bring the position
block ``W_pp ≈ αI`` to ``α ≈ 3.68``, at the population optimum along ``αI`` (``≈ 3.7``,
where the exact-over-tokens loss is ``0.252``): about 25 s with one thread.

Objectives:

* ``sgd`` — a fresh batch of ``batch`` sequences per step (fresh encodings per sequence
  when the PE is stochastic), sampled loss ``mean_b ‖f − STS‖²``;
* ``population`` — gradient descent on the exact-over-tokens loss (SPEC B3): exact over
  the Gaussian tokens, Monte Carlo over ``batch`` fresh ``(y, PE)`` draws per step. It needs
  ``trainable = "position"`` (a trainable content block makes the logits token-dependent).

Replica ``e`` draws step ``t`` from streams ``(seed, e, ..., "train", t)``; SGD acts entry by
entry on ``W`` (``E x D x D``), so a replica's trajectory does not depend on ``E``.

Steps with stochastic PE draw only what the step depends on (``pe_draws="law"``, the default;
:func:`law_terms` for the population objective, :func:`sampled_law_terms` for SGD on the full
``W``, where the tokens are drawn as they are), exact in distribution: with ``v = W_pp u_y``,
an encoding off ``y`` enters through its coordinate ``t_i`` along ``v`` (logit ``‖v‖ t_i``) and
its part orthogonal to ``v``, which reaches the gradient only through the sum
``R = Σ_{i∉y} c_i p_i^⊥`` (``c_i = ∂L/∂a_i``). ``R`` is isotropic in ``v^⊥``: its direction is
one uniform draw, its norm follows the random walk
``‖S_k‖² = ‖S_{k−1}‖² + w_k² + 2 w_k ‖S_{k−1}‖ cos_k`` (``cos_k`` a coordinate of a uniform unit
vector of ``v^⊥``, independent of the past). A sequence costs ``O(q m_p + T)`` draws instead of
``O(T m_p)``, so ``T = 1024`` steps are cheap and the SGD step of the paper's setting
(``m_p = 512``, batch 256) costs its two ``D x m_p`` products (bench row 6); the draws come
from the streams ``(seed, e, "pe-law", "train", t)``, never from the explicit
``(seed, e, "pe", ...)`` ones (``pe_draws="explicit"``).

Cost of a law-drawn step: its two products ``v = W u`` and ``mean_b g uᵀ`` (``2 B m_p²``
multiply-adds, ``B = 4 m_p`` in B5.1) and ``(q + 1) m_p`` normals per sequence; everything else
is a few passes over ``B x m_p`` arrays, made in a :class:`Workspace` that the steps reuse, with
the same operations, and so the same bits, as on fresh arrays (``bench_select_convergence``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from ..configs import SelectionTrainConfig
from ..core.device import resolve_dtype
from ..core.rng import stream_seed
from ..exact import products
from ..exact.selection import per_sequence_loss
from ..models.selector import forward, trainable_mask
from ..positional_encodings import FixedPE, StochasticPE, encodings_for
from ..tasks.selection import TokenSelection, sts


@dataclass(frozen=True)
class SelectionTrainResult:
    """Trained ``W`` (``E x D x D``), the encodings used, and the loss per step (``steps x E``)."""

    config: SelectionTrainConfig
    W: torch.Tensor
    encodings: StochasticPE | FixedPE
    losses: torch.Tensor

    @property
    def train_loss(self) -> torch.Tensor:
        """Per replica: mean training loss over the last tenth of the steps."""
        tail = max(1, self.losses.shape[0] // 10)
        return self.losses[-tail:].mean(dim=0)


def _step_loss(
    config: SelectionTrainConfig, W: torch.Tensor, pe: StochasticPE | FixedPE, step: int
) -> torch.Tensor:
    """Per-replica loss of step ``step`` on its fresh batch (``E``)."""
    key = ("train", step)
    data = TokenSelection.of(config).sample(config.seed, config.seeds, config.batch, key)
    P = pe.draw(key, config.batch, config.T)
    if config.objective == "population":
        return per_sequence_loss(W, P, data.y).mean(dim=-1)
    f, _ = forward(W, data.X, P, data.y)
    return (f - sts(data.X, data.y)).pow(2).sum(dim=-1).mean(dim=-1)


@dataclass
class Workspace:
    """The arrays a law-drawn step fills, kept from one step to the next: at ``m_p = 2048`` and
    a batch of ``8192`` each ``B x m_p`` array is 134 MB, and a fresh one costs its page faults,
    more than the arithmetic done in it. numpy draws the subset's encodings ``on_y``
    (``E x B x q x m``) and the directions ``normal`` (``E x B x m``) into them; torch fills
    ``u = u_y`` (``E x B x m``), ``v = W z_q`` and ``g`` (``E x B x rows``, ``rows = m``, or
    ``D`` for the full ``W``), ``side`` (``E x B x m``) and the gradient ``grad``
    (``E x rows x m``)."""

    on_y: np.ndarray
    normal: np.ndarray
    u: torch.Tensor
    v: torch.Tensor
    g: torch.Tensor
    side: torch.Tensor
    grad: torch.Tensor

    @classmethod
    def of(cls, replicas: int, batch: int, q: int, m_p: int, rows: int) -> Workspace:
        def tensor(*shape: int) -> torch.Tensor:
            return torch.empty(replicas, *shape, dtype=torch.float64)

        return cls(
            np.empty((replicas, batch, q, m_p)),
            np.empty((replicas, batch, m_p)),
            tensor(batch, m_p),
            tensor(batch, rows),
            tensor(batch, rows),
            tensor(batch, m_p),
            tensor(rows, m_p),
        )


def _product(
    a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None, dtype: torch.dtype
) -> torch.Tensor:
    """The batched product ``a @ b`` (float64), into ``out`` when given, computed in ``dtype``.
    In float32 (``SelectionTrainConfig.products``) the operands are rounded to 24 bits and
    the sums run in float32: the products alone take 0.4–0.5 of float64's time at ``m_p =
    512`` to 2048 (one thread), and a trained ``W`` moves by about ``1e-7`` relative (bench
    row 12), far below a step's sampling noise."""
    if dtype == torch.float64:
        return torch.bmm(a, b) if out is None else torch.bmm(a, b, out=out)
    low = torch.bmm(a.to(dtype), b.to(dtype))
    return low.to(torch.float64) if out is None else out.copy_(low)


def law_draws(
    seed: int,
    replicas: range,
    key: tuple[int | str, ...],
    batch: int,
    T: int,
    q: int,
    m_p: int,
    kind: str,
    work: Workspace | None = None,
) -> products.Draw:
    """One batch's draws for :func:`law_terms` and :func:`sampled_law_terms`
    (``exact.products.draw``, ``parts`` recipe), stacked over the replicas; replica ``e`` draws
    from stream ``(seed, e, "pe-law", *key)`` only (independent of ``E``). With ``work`` the
    subset's encodings and the directions are drawn into its arrays (the same numbers)."""

    def one(i: int, e: int) -> products.Draw:
        rng = np.random.default_rng(stream_seed(seed, e, "pe-law", *key))
        out = None if work is None else (work.on_y[i], work.normal[i])
        return products.draw(rng, batch, T, q, m_p, kind, "parts", out)

    draws = [one(i, e) for i, e in enumerate(replicas)]
    if work is None:
        return products.stack(draws)
    return products.stack(draws, on_y=work.on_y, normal=work.normal)


def _walk_norm(steps: np.ndarray, cosines: np.ndarray) -> np.ndarray:
    """``‖Σ_k w_k r_k‖`` for ``r_k`` i.i.d. uniform unit vectors, given ``w`` and the cosines
    between each ``r_k`` and the partial sum before it (last axis: ``k``)."""
    w = np.ascontiguousarray(np.moveaxis(steps, -1, 0))
    c = np.ascontiguousarray(np.moveaxis(2.0 * cosines, -1, 0))
    square = np.zeros(w.shape[1:])
    for k in range(w.shape[0]):
        square += w[k] * (w[k] + np.sqrt(square) * c[k])
        np.maximum(square, 0.0, out=square)
    return np.sqrt(square)


def _chunked_walk_norm(steps: np.ndarray, cosines: np.ndarray, joins: np.ndarray) -> np.ndarray:
    """:func:`_walk_norm` in ``J + L ≈ 2 sqrt(K)`` vectorized rounds instead of ``K``.

    The ``K`` steps (last axis) walk in ``J`` chunks of ``L`` side by side
    (``exact.products.walk_chunks``; zero steps pad the last chunk); the chunks' sums are
    independent and isotropic, so their norms add up by one more walk of ``J`` steps whose
    cosines are ``joins`` (fresh ones)."""
    K = steps.shape[-1]
    chunks, length = products.walk_chunks(K)
    pad = [(0, 0)] * (steps.ndim - 1) + [(0, chunks * length - K)]
    shape = (*steps.shape[:-1], chunks, length)
    sums = _walk_norm(np.pad(steps, pad).reshape(shape), np.pad(cosines, pad).reshape(shape))
    return _walk_norm(sums, joins)


def _law_logits(
    v_p: torch.Tensor, draws: products.Draw, in_place: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """Position logits ``p_i · v_p`` (subset first, ``E x B x T``) and the unit vector along
    ``v_p`` (``e_1`` where ``v_p = 0``; the law off ``y`` does not depend on it); with
    ``in_place`` the unit vector is written over ``v_p``."""
    on_y, t = torch.from_numpy(draws.on_y), torch.from_numpy(draws.t)
    inside = torch.einsum("...qm,...m->...q", on_y, v_p)
    norm = torch.linalg.vector_norm(v_p, dim=-1, keepdim=True)
    logits = torch.cat([inside, norm * t], dim=-1)
    unit = torch.div(v_p, norm.clamp_min(1e-300), out=v_p if in_place else None)
    zero = ~(norm[..., 0] > 0)
    if bool(zero.any()):
        unit[zero] = 0.0
        unit[..., 0][zero] = 1.0
    return logits, unit


def _law_position_gradient(
    c: torch.Tensor,
    draws: products.Draw,
    unit: torch.Tensor,
    kind: str,
    out: torch.Tensor | None = None,
    side: torch.Tensor | None = None,
) -> torch.Tensor:
    """``Σ_i c_i p_i`` (``E x B x m``) for the logits' gradients ``c`` (``E x B x T``, subset
    first), exact in distribution: the subset's encodings as drawn, the others along ``unit``
    by their coordinates and orthogonal to it by one isotropic draw of the walk's norm.

    ``out`` receives the result and ``side`` (``E x B x m``) the orthogonal part, when given;
    ``unit`` is spent (scaled in place). The operations, and so the bits, are those of
    ``subset + along * unit + side`` on fresh arrays."""
    q = draws.on_y.shape[-2]
    c_out = c[..., q:]
    normal = torch.from_numpy(draws.normal)
    side = torch.mul(normal, unit, out=side)
    torch.mul(side.sum(dim=-1, keepdim=True), unit, out=side)
    torch.sub(normal, side, out=side)
    if kind == "sphere":
        assert draws.walk is not None and draws.joins is not None  # the sphere's parts recipe
        steps = c_out.numpy() * draws.perp
        length = torch.from_numpy(_chunked_walk_norm(steps, draws.walk, draws.joins))
        side.mul_(length.unsqueeze(-1) / side.norm(dim=-1, keepdim=True).clamp_min(1e-300))
    else:
        side.mul_((c_out.pow(2).sum(dim=-1, keepdim=True) / unit.shape[-1]).sqrt())
    along = (c_out * torch.from_numpy(draws.t)).sum(dim=-1, keepdim=True)
    on_y = torch.from_numpy(draws.on_y)
    rows = c.shape[0] * c.shape[1]
    weights, encodings = c[..., :q].reshape(rows, 1, q), on_y.reshape(rows, q, -1)
    if out is not None and out.is_contiguous():
        torch.bmm(weights, encodings, out=out.view(rows, 1, -1))
    else:  # "ebq,ebqm->ebm" as torch.einsum computes it, the same bits
        subset = torch.bmm(weights, encodings).view(*c.shape[:2], -1)
        out = subset if out is None else out.copy_(subset)
    out.add_(unit.mul_(along))
    return out.add_(side)


def law_terms(
    W_pp: torch.Tensor,
    draws: products.Draw,
    d: int,
    kind: str,
    work: Workspace | None = None,
    precision: torch.dtype = torch.float64,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per sequence, exact in distribution (module docstring): ``(loss, g, u)`` with
    ``loss = d Σ_i (s_i − 1{i∈y}/q)²`` (``E x B``), ``g = Σ_i (∂loss/∂a_i) p_i`` and ``u = u_y``
    (``E x B x m``); the gradient of the loss in ``W_pp`` (``E x m x m``) is ``mean_b g uᵀ``.
    ``work``: arrays to fill instead of fresh ones (the same bits); ``precision``: that of the
    product ``v = W u`` (:func:`_product`)."""
    q = draws.on_y.shape[-2]
    on_y = torch.from_numpy(draws.on_y)
    u = on_y.sum(dim=-2) if work is None else torch.sum(on_y, dim=-2, out=work.u)
    v = _product(u, W_pp.transpose(-1, -2), None if work is None else work.v, precision)
    logits, unit = _law_logits(v, draws, in_place=work is not None)
    s = products.weights(logits)
    loss = products.subset_loss(s[..., :q], s[..., q:].pow(2).sum(dim=-1), d)
    gap = s.clone()
    gap[..., :q] -= 1.0 / q
    c = (2 * d) * s * (gap - (s * gap).sum(dim=-1, keepdim=True))
    buffers = (None, None) if work is None else (work.g, work.side)
    return loss, _law_position_gradient(c, draws, unit, kind, *buffers), u


def sampled_law_terms(
    W_cols: torch.Tensor,
    X: torch.Tensor,
    draws: products.Draw,
    kind: str,
    work: Workspace | None = None,
    precision: torch.dtype = torch.float64,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The sampled loss of the full ``W`` (SGD) with its encodings drawn by law: per sequence
    ``(loss, g, u)`` with ``loss = ‖f − STS‖²`` (``E x B``), ``g = Σ_i (∂loss/∂a_i) z_i``
    (``E x B x D``) and ``u = u_y``; the gradient in ``W[:, d:]`` (``E x D x m``) is
    ``mean_b g uᵀ``. ``W_cols`` is ``W[:, :, d:]``; the tokens ``X`` (``E x B x T x d``) are
    drawn as they are, the subset at their first ``q`` positions (exchangeable). ``work``:
    arrays to fill instead of fresh ones (the same bits); ``precision``: that of the product
    ``v = W u`` (:func:`_product`)."""
    d, q = X.shape[-1], draws.on_y.shape[-2]
    on_y = torch.from_numpy(draws.on_y)
    u = on_y.sum(dim=-2) if work is None else torch.sum(on_y, dim=-2, out=work.u)
    v = _product(u, W_cols.transpose(-1, -2), None if work is None else work.v, precision)
    positions, unit = _law_logits(v[..., d:], draws, in_place=work is not None)
    s = torch.softmax(torch.einsum("ebtk,ebk->ebt", X, v[..., :d]) + positions, dim=-1)
    f = torch.einsum("ebt,ebtk->ebk", s, X)
    error = f - X[..., :q, :].mean(dim=-2)
    along_error = torch.einsum("ebtk,ebk->ebt", X, 2 * error)
    c = s * (along_error - (s * along_error).sum(dim=-1, keepdim=True))
    g = torch.empty(*c.shape[:2], v.shape[-1], dtype=v.dtype) if work is None else work.g
    g[..., :d] = torch.einsum("ebt,ebtk->ebk", c, X)
    side = None if work is None else work.side
    _law_position_gradient(c, draws, unit, kind, g[..., d:], side)
    return error.pow(2).sum(dim=-1), g, u


class _LawSteps:
    """The steps of :func:`train` whose stochastic encodings are drawn by law: the population
    loss of the position block, or the sampled loss of the full ``W`` on the step's tokens
    (stream ``(seed, e, "tokens", "train", t)``); one :class:`Workspace` for all of them."""

    def __init__(self, config: SelectionTrainConfig) -> None:
        self.config = config
        population = config.objective == "population"
        size = config.pe_dim if population else config.d + config.pe_dim
        self.work = Workspace.of(config.seeds, config.batch, config.q, config.pe_dim, size)
        self.precision = resolve_dtype(config.products)
        # the rows of W a step moves (the mask's), and the rows of g that reach them
        position = config.trainable == "position"
        self.rows = slice(config.d if position else 0, None)
        self.g_rows = slice(config.d if position and not population else 0, None)

    def __call__(
        self, W: torch.Tensor, step: int
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Per-replica loss (``E``) and the step's ``(g, u)`` (:meth:`update`)."""
        config, d, key = self.config, self.config.d, ("train", step)
        draws = law_draws(
            config.seed,
            range(config.seeds),
            key,
            config.batch,
            config.T,
            config.q,
            config.pe_dim,
            config.pe_kind,
            self.work,
        )
        if config.objective == "population":
            loss, g, u = law_terms(
                W[:, d:, d:], draws, d, config.pe_kind, self.work, self.precision
            )
        else:
            task = TokenSelection.of(config)
            X = task.tokens(config.seed, config.seeds, config.batch, key, length=config.T)
            loss, g, u = sampled_law_terms(
                W[:, :, d:], X, draws, config.pe_kind, self.work, self.precision
            )
        return loss.mean(dim=-1), g, u

    def update(self, W: torch.Tensor, g: torch.Tensor, u: torch.Tensor, rate: float) -> None:
        """``W −= rate · mask · (g uᵀ / B)`` in place, on the block the mask keeps (the mask's
        ones leave the bits as they are)."""
        grad = _product(g.transpose(-1, -2), u, self.work.grad, self.precision)
        grad.div_(self.config.batch).mul_(rate)
        W[:, self.rows, self.config.d :] -= grad[:, self.g_rows]


def train(
    config: SelectionTrainConfig, progress: Callable[[int, int], None] | None = None
) -> SelectionTrainResult:
    """SGD (or population GD) from ``W = 0`` for ``config.steps`` steps (SPEC B3);
    ``progress(step, steps)`` after each step, if given."""
    pe = encodings_for(config)
    size = config.d + config.pe_dim
    by_law = config.pe == "stochastic" and config.pe_draws == "law"
    W = torch.zeros(config.seeds, size, size, dtype=torch.float64, requires_grad=not by_law)
    mask = trainable_mask(config.d, config.pe_dim, config.trainable)
    law = _LawSteps(config) if by_law else None
    losses = torch.empty(config.steps, config.seeds, dtype=torch.float64)
    for step in range(config.steps):
        if law is not None:
            loss, g, u = law(W, step)
        else:
            loss = _step_loss(config, W, pe, step)
        if not bool(torch.isfinite(loss).all()):
            raise ValueError(f"training diverged at step {step} (loss {loss.tolist()}): lower lr")
        rate = config.lr * (1.0 - step / config.steps)
        if law is not None:
            law.update(W, g, u, rate)
        else:
            (grad,) = torch.autograd.grad(loss.sum(), W)
            with torch.no_grad():
                W -= rate * mask * grad
        losses[step] = loss.detach()
        if progress is not None:
            progress(step + 1, config.steps)
    W = W.detach()
    if not bool(torch.isfinite(W).all()) or not math.isfinite(float(losses.sum())):
        raise ValueError("training produced non-finite weights: lower lr")
    return SelectionTrainResult(config=config, W=W, encodings=pe, losses=losses)
