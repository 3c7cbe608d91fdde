"""The law-drawn training step of ``attnsep.train.selection`` as it was before its workspace
(commit 7086ab4), kept as the baseline of ``bench_select_convergence`` and of
``tests/test_selection_workspace.py``: every step on fresh arrays, the replicas' draws copied by
``np.stack`` (one replica too), the subset's norms by ``np.linalg.norm`` (an ``x``-sized
temporary), the unit vector along ``v`` and the orthogonal part formed, and the update through
a ``D x D`` gradient and the mask. The same operations as the library's step, so the same bits.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from attnsep.configs import SelectionTrainConfig
from attnsep.core.rng import stream_seed
from attnsep.exact import products
from attnsep.models.selector import trainable_mask
from attnsep.tasks.selection import TokenSelection
from attnsep.train.selection import _chunked_walk_norm


def _draw(rng: np.random.Generator, batch: int, T: int, q: int, m_p: int, kind: str):
    on_y = rng.standard_normal((batch, q, m_p))
    if kind == "sphere":
        on_y /= np.linalg.norm(on_y, axis=-1, keepdims=True)
    else:
        on_y /= math.sqrt(m_p)
    normal = rng.standard_normal((batch, m_p))
    shape = (batch, T - q)
    if kind != "sphere":
        return products.Draw(on_y, products.coordinates(rng, shape, m_p, kind, "parts"), normal)
    t, perp, walk, joins = products.sphere_parts(rng, shape, m_p)
    return products.Draw(on_y, t, normal, perp, walk, joins)


def law_draws(seed, replicas, key, batch, T, q, m_p, kind) -> products.Draw:
    draws = []
    for e in replicas:
        rng = np.random.default_rng(stream_seed(seed, e, "pe-law", *key))
        draws.append(_draw(rng, batch, T, q, m_p, kind))
    fields = zip(*(vars(d).values() for d in draws), strict=True)
    on_y, t, *rest = (None if arrays[0] is None else np.stack(arrays) for arrays in fields)
    return products.Draw(on_y, t, *rest)


def _law_logits(v_p: torch.Tensor, draws: products.Draw):
    on_y, t = torch.from_numpy(draws.on_y), torch.from_numpy(draws.t)
    inside, outside = products.products(on_y, t, v_p)
    norm = torch.linalg.vector_norm(v_p, dim=-1, keepdim=True)
    first = torch.zeros(v_p.shape[-1], dtype=v_p.dtype)
    first[0] = 1.0
    unit = torch.where(norm > 0, v_p / norm.clamp_min(1e-300), first)
    return torch.cat([inside, outside], dim=-1), unit


def _law_position_gradient(c, draws: products.Draw, unit, kind: str):
    q = draws.on_y.shape[-2]
    c_out = c[..., q:]
    normal = torch.from_numpy(draws.normal)
    side = normal - (normal * unit).sum(dim=-1, keepdim=True) * unit
    if kind == "sphere":
        steps = c_out.numpy() * draws.perp
        length = torch.from_numpy(_chunked_walk_norm(steps, draws.walk, draws.joins))
        side = side * (length.unsqueeze(-1) / side.norm(dim=-1, keepdim=True).clamp_min(1e-300))
    else:
        side = side * (c_out.pow(2).sum(dim=-1, keepdim=True) / unit.shape[-1]).sqrt()
    along = (c_out * torch.from_numpy(draws.t)).sum(dim=-1, keepdim=True)
    subset = torch.einsum("ebq,ebqm->ebm", c[..., :q], torch.from_numpy(draws.on_y))
    return subset + along * unit + side


def law_terms(W_pp, draws: products.Draw, d: int, kind: str):
    q = draws.on_y.shape[-2]
    u = torch.from_numpy(draws.on_y).sum(dim=-2)
    logits, unit = _law_logits(torch.bmm(u, W_pp.transpose(-1, -2)), draws)
    s = products.weights(logits)
    loss = products.subset_loss(s[..., :q], s[..., q:].pow(2).sum(dim=-1), d)
    gap = s.clone()
    gap[..., :q] -= 1.0 / q
    c = (2 * d) * s * (gap - (s * gap).sum(dim=-1, keepdim=True))
    return loss, _law_position_gradient(c, draws, unit, kind), u


def sampled_law_terms(W_cols, X, draws: products.Draw, kind: str):
    d, q = X.shape[-1], draws.on_y.shape[-2]
    u = torch.from_numpy(draws.on_y).sum(dim=-2)
    v = torch.bmm(u, W_cols.transpose(-1, -2))
    positions, unit = _law_logits(v[..., d:], draws)
    s = torch.softmax(torch.einsum("ebtk,ebk->ebt", X, v[..., :d]) + positions, dim=-1)
    f = torch.einsum("ebt,ebtk->ebk", s, X)
    error = f - X[..., :q, :].mean(dim=-2)
    along_error = torch.einsum("ebtk,ebk->ebt", X, 2 * error)
    c = s * (along_error - (s * along_error).sum(dim=-1, keepdim=True))
    g = torch.cat(
        [torch.einsum("ebt,ebtk->ebk", c, X), _law_position_gradient(c, draws, unit, kind)], -1
    )
    return error.pow(2).sum(dim=-1), g, u


def _law_step(config: SelectionTrainConfig, W: torch.Tensor, step: int):
    d, key = config.d, ("train", step)
    draws = law_draws(
        config.seed,
        range(config.seeds),
        key,
        config.batch,
        config.T,
        config.q,
        config.pe_dim,
        config.pe_kind,
    )
    if config.objective == "population":
        loss, g, u = law_terms(W[:, d:, d:], draws, d, config.pe_kind)
        rows = slice(d, None)
    else:
        task = TokenSelection.of(config)
        X = task.tokens(config.seed, config.seeds, config.batch, key, length=config.T)
        loss, g, u = sampled_law_terms(W[:, :, d:], X, draws, config.pe_kind)
        rows = slice(None)
    grad = torch.zeros_like(W)
    grad[:, rows, d:] = torch.bmm(g.transpose(-1, -2), u) / config.batch
    return loss.mean(dim=-1), grad


def train(config: SelectionTrainConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """``(W, losses)`` of ``attnsep.train.selection.train`` with law draws, the old way."""
    assert config.pe == "stochastic" and config.pe_draws == "law"
    size = config.d + config.pe_dim
    W = torch.zeros(config.seeds, size, size, dtype=torch.float64)
    mask = trainable_mask(config.d, config.pe_dim, config.trainable)
    losses = torch.empty(config.steps, config.seeds, dtype=torch.float64)
    for step in range(config.steps):
        loss, grad = _law_step(config, W, step)
        rate = config.lr * (1.0 - step / config.steps)
        W -= rate * mask * grad
        losses[step] = loss
    return W, losses
