"""The A7.4 verdict on synthetic records, and the gradient alignment against autograd."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
import torch

from attnsep.embeddings import sphere_embeddings
from attnsep.experiments.xor_heads import Config, initial_state, verdict
from attnsep.metrics import stats
from attnsep.metrics.alignment import alignment_ratio, score_change
from attnsep.models.query_heads import QueryHeads
from attnsep.one_step import OneStepConfig, run_one_step
from attnsep.tasks.parity import SparseParity

CONFIG = Config()
DS = [256, 1024, 4096]


def summary(init: str, d: int, hits: int, seeds: int = 256) -> dict:
    low, high = stats.wilson(hits, seeds)
    ratios = np.random.default_rng(d).uniform(1.0, 2.0, seeds)
    return {
        "kind": "summary",
        "init": init,
        "d": d,
        "seeds": seeds,
        "on_target": hits,
        "on_target_rate": hits / seeds,
        "on_target_low": low,
        "on_target_high": high,
        "collapses": seeds - hits,
        "collapse_rate": (seeds - hits) / seeds,
        "ratio": ratios.tolist(),
    }


def records(anti: list[int], seeds: int = 256, ds: list[int] = DS) -> list[dict]:
    rows = [summary("antisymmetric", d, h, seeds) for d, h in zip(ds, anti, strict=True)]
    return rows + [summary("independent", d, seeds // 2, seeds) for d in ds]


def test_agreeing_records_are_reproduced():
    claim = verdict(records([240, 245, 250]), CONFIG)
    assert claim["verdict"] == stats.REPRODUCED
    json.dumps(claim, allow_nan=False)
    names = [e["name"] for e in claim["estimates"]]
    assert "independent on-target, d=4096" in names
    assert "antisymmetric alignment ratio median, d=1024" in names
    ratio = next(e for e in claim["estimates"] if e["name"].endswith("median, d=1024"))
    assert 1.0 < ratio["low"] <= ratio["value"] <= ratio["high"] < 2.0


def test_a_low_rate_at_the_largest_d_is_not_reproduced():
    claim = verdict(records([250, 240, 200]), CONFIG)  # 0.78 at d = 4096
    assert claim["verdict"] == stats.NOT_REPRODUCED
    assert "d=4096" in claim["reason"]


def test_too_few_seeds_are_inconclusive_and_say_how_many_would_decide():
    claim = verdict(records([19, 19, 19], seeds=20), CONFIG)  # 0.95, lower bound 0.76
    assert claim["verdict"] == stats.INCONCLUSIVE
    assert "about" in claim["reason"] and "(now 20)" in claim["reason"]


def test_a_failing_middle_size_is_inconclusive():
    claim = verdict(records([250, 200, 250]), CONFIG)
    assert claim["verdict"] == stats.INCONCLUSIVE
    assert "d=1024" in claim["reason"]


def test_only_small_sizes_are_inconclusive():
    assert verdict(records([64], ds=[64]), CONFIG)["verdict"] == stats.INCONCLUSIVE


def exact_loss(V: torch.Tensor, theta: torch.Tensor, support: torch.Tensor) -> torch.Tensor:
    """Mean over all of {-1,+1}^d of (f(x) - y)^2 with f = -(g.x)(h.x), y = -x_i* x_j*."""
    d = V.shape[1]
    x = torch.tensor(list(itertools.product([-1.0, 1.0], repeat=d)), dtype=torch.float64)
    gamma = torch.softmax(torch.einsum("edm,ehm->ehd", V, theta), dim=2)
    f = -torch.einsum("ehd,nd->enh", gamma, x).prod(dim=2)
    y = -(x[:, support[:, 0]] * x[:, support[:, 1]]).T  # E x 2^d
    return ((f - y) ** 2).mean(dim=1).sum()


def test_score_change_is_V_times_the_autograd_gradient_of_the_enumerated_loss():
    d, m, E = 6, 4, 3
    V = sphere_embeddings(5, E, d, m)
    theta = torch.randn(E, 2, m, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    support = torch.tensor([[0, 3], [1, 5], [2, 4]])
    leaf = theta.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(exact_loss(V, leaf, support), leaf)
    want = torch.einsum("edm,ehm->ehd", V, grad)
    got = score_change(QueryHeads(V), theta, SparseParity(d, 2, -1), support)
    torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-12)


def test_alignment_ratio_is_min_relevant_over_max_ambient():
    change = torch.tensor([[[0.5, -3.0, 1.0, -2.0], [4.0, 0.1, -0.2, 1.0]]])
    support = torch.tensor([[1, 3]])
    want = torch.tensor([[2.0 / 1.0, 0.1 / 4.0]])
    torch.testing.assert_close(alignment_ratio(change, support), want)


@pytest.mark.parametrize("init", ["antisymmetric", "independent"])
def test_initial_state_is_the_one_step_draw(init):
    step = OneStepConfig(d=20, m=6, seeds=5, seed=3, init=init, device="cpu")
    result = run_one_step(step, keep_embeddings=True)
    model, theta, support = initial_state(step, 2, 3)
    torch.testing.assert_close(model.V, torch.from_numpy(result.embeddings[2:]))
    torch.testing.assert_close(theta, torch.from_numpy(result.theta_before[2:]))
    assert support.tolist() == result.support[2:].tolist()
