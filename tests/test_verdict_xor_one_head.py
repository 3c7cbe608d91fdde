"""A7.10 (SPEC Part G, item 8): the one-head finding's numbers on constructed records, a tiny
end-to-end run, and the ablations' closed forms against enumeration of the cube and finite
differences."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from attnsep.exact.parity import cube, enumeration_terms
from attnsep.experiments import xor_one_head as one_head
from attnsep.metrics import stats
from attnsep.models.query_heads import QueryHeads
from attnsep.tasks.parity import SparseParity
from attnsep.train import tied_heads


def arm(successes: int, seeds: int, loss: float) -> dict:
    flags = [i < successes for i in range(seeds)]
    return {
        "loss0": [1.0] * seeds,
        "loss1": [loss] * seeds,
        "loss_final": [loss + 0.01 * i for i in range(seeds)],
        "success1": flags,
        "success_final": flags,
        "on_support1": flags,
    }


def test_numbers_and_intervals_on_constructed_records():
    rec = {
        "d": 64,
        "m": 9,
        "seeds": 20,
        "eta": 1.0,
        "arms": {"two": arm(18, 20, 0.1), "tied": arm(0, 20, 1.9), "one": arm(0, 20, 2.0)},
    }
    claim = one_head.verdict.verdict([rec], one_head.config.Config(d_values=[64], seeds=20))
    json.dumps(claim, allow_nan=False)
    assert claim["verdict"] == stats.FINDING and claim["kind"] == "finding"
    by = {e["name"]: e for e in claim["estimates"]}
    two = by["success after one step (two heads, d=64)"]
    assert two["value"] == 0.9 and (two["low"], two["high"]) == pytest.approx(stats.wilson(18, 20))
    tied = by["success after the budget (one head used twice, d=64)"]
    assert tied["value"] == 0 and tied["high"] == pytest.approx(stats.wilson(0, 20)[1])
    final = by["mean loss after the budget (one head, d=64)"]
    assert final["value"] == pytest.approx(2.095) and final["low"] < 2.095 < final["high"]
    assert by["best reachable loss (one head used twice, d=64)"]["value"] == 0.5
    assert by["best reachable loss (one head, d=64)"]["value"] == pytest.approx(1 + 1 / 64)
    assert "18/20" in claim["reason"] and "0 runs" in claim["reason"]


def test_tiny_end_to_end(tmp_path):
    config = one_head.EXPERIMENT.config("quick", d_values=[16, 32], seeds=4, budget=3)
    recs = [r for job in one_head.run.split(config) for r in one_head.run.run(job)]
    json.dumps(recs, allow_nan=False)
    claim = one_head.verdict.verdict(recs, config)
    assert claim["verdict"] == stats.FINDING
    for e in claim["estimates"]:
        assert e["low"] <= e["value"] <= e["high"], e
    for r in recs:  # neither ablation can succeed; the tied head stays above its floor
        assert not any(r["arms"]["tied"]["success_final"] + r["arms"]["one"]["success_final"])
        assert min(r["arms"]["tied"]["loss_final"]) >= 0.5 - 1e-12
        assert min(r["arms"]["one"]["loss_final"]) >= 1 + 1 / r["d"] - 1e-12
    assert (
        one_head.figure.figure(recs, config, tmp_path)[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    )


def random_theta(heads: int, seeds: int = 3, m: int = 5) -> torch.Tensor:
    g = torch.Generator().manual_seed(heads)
    return 2 * torch.randn(seeds, heads, m, generator=g, dtype=torch.float64)


@pytest.mark.parametrize("name, heads", [("tied", 1), ("one", 1), ("two", 2)])
def test_losses_match_enumeration(name, heads):
    d = 7
    model = QueryHeads.sample(1, 3, d, 5)
    support = SparseParity(d).supports(1, 3)
    theta = random_theta(heads)
    gamma = model.weights(theta)
    x = cube(d)
    y = -x[:, support].prod(dim=2).T  # E x 2^d
    proj = x @ gamma.transpose(1, 2)  # E x 2^d x H
    f = -(proj[..., 0] ** 2) if name == "tied" else -proj.prod(dim=2)
    exact = ((f - y) ** 2).mean(dim=1)
    assert (tied_heads.loss(model, theta, support, name) - exact).abs().max() < 1e-12
    if name == "one":  # the label term vanishes: the loss is |g|^2 + 1
        assert (exact - (gamma[:, 0] ** 2).sum(-1) - 1).abs().max() < 1e-12
    if name == "two":
        assert enumeration_terms(gamma, support, -1, -1)[1].shape == y.shape


def test_tied_gradient_matches_finite_differences():
    model = QueryHeads.sample(2, 2, 9, 4)
    support = SparseParity(9).supports(2, 2)
    theta = random_theta(1, seeds=2, m=4).requires_grad_(True)
    (grad,) = torch.autograd.grad(tied_heads.loss(model, theta, support, "tied").sum(), theta)
    h = 1e-6
    for idx in [(0, 0, 0), (1, 0, 3), (0, 0, 2)]:
        bump = torch.zeros_like(theta)
        bump[idx] = h
        plus = tied_heads.loss(model, theta.detach() + bump, support, "tied").sum()
        minus = tied_heads.loss(model, theta.detach() - bump, support, "tied").sum()
        assert float((plus - minus) / (2 * h)) == pytest.approx(float(grad[idx]), abs=1e-7)


def test_tied_floor_is_one_half():
    """On a grid of (p, q) the tied head's loss is smallest at p = q = 1/2, where it is 1/2; by
    enumeration at g = (e_i + e_j)/2 it is 1/2, and at random weights it stays above."""
    grid = np.linspace(0, 1, 201)
    values = [(tied_heads.tied_best_loss(p, q), p, q) for p in grid for q in grid if p + q <= 1]
    best, p, q = min(values)
    assert best == pytest.approx(0.5) and (p, q) == pytest.approx((0.5, 0.5))
    d = 8
    x = cube(d)
    g = torch.zeros(d, dtype=torch.float64)
    g[[2, 5]] = 0.5
    assert float((((x @ g) ** 2 - x[:, 2] * x[:, 5]) ** 2).mean()) == pytest.approx(0.5)
    rng = np.random.default_rng(0)
    for _ in range(50):
        w = torch.tensor(rng.dirichlet(np.full(d, 0.3)))
        assert float((((x @ w) ** 2 - x[:, 2] * x[:, 5]) ** 2).mean()) >= 0.5 - 1e-12
    assert math.isclose(tied_heads.TIED_BEST_LOSS, 0.5)
