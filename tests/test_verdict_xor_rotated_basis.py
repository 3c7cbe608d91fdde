"""A7.9 (SPEC Part G, item 7): the Gaussian population loss against its matrix form, Monte Carlo
and finite differences; the expressivity bound; the MLP's rotation equivariance; the finding's
numbers on constructed records; a tiny end-to-end run."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from attnsep.exact.gaussian_xor import population_loss, sampled_loss, simplex_floor_bound
from attnsep.experiments import base, xor_rotated_basis
from attnsep.experiments.xor_rotated_basis import EXPERIMENT
from attnsep.experiments.xor_rotated_basis.config import Config
from attnsep.experiments.xor_rotated_basis.run import split
from attnsep.metrics import stats
from attnsep.models.query_heads import haar_frame
from attnsep.train import gaussian_xor as gx

TINY = {
    "d_values": [8, 16],
    "seeds": 4,
    "budget": 3,
    "floor_restarts": 2,
    "floor_steps": 20,
    "mlp_seeds": 2,
    "mlp_steps": 20,
    "mlp_batch": 16,
    "mlp_width": 8,
    "test_samples": 128,
}


def _weights(E: int, d: int, seed: int) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    g, h = torch.softmax(2 * torch.randn(2, E, d, generator=gen, dtype=torch.float64), dim=-1)
    u, v = torch.randn(2, E, d, generator=gen, dtype=torch.float64)  # any u, v
    return g, h, u, v


def _sym(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a.unsqueeze(-1) * b.unsqueeze(-2) + b.unsqueeze(-1) * a.unsqueeze(-2)) / 2


def test_closed_form_equals_the_matrix_form():
    g, h, u, v = _weights(5, 7, 0)
    C = _sym(g, h) - _sym(u, v)
    trace = torch.diagonal(C, dim1=-2, dim2=-1).sum(-1)
    expected = trace**2 + 2 * (C * C).sum(dim=(-2, -1))
    assert torch.allclose(population_loss(g, h, u, v), expected, rtol=1e-12, atol=1e-12)


def test_closed_form_matches_monte_carlo_within_5_standard_errors():
    g, h, u, v = _weights(3, 6, 1)
    x = torch.randn(3, 200_000, 6, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    proj = [torch.einsum("end,ed->en", x, w) for w in (g, h, u, v)]
    per_sample = (proj[0] * proj[1] - proj[2] * proj[3]) ** 2
    mc = sampled_loss(g, h, u, v, x)
    assert torch.allclose(mc, per_sample.mean(dim=1), rtol=1e-12)
    se = per_sample.std(dim=1) / math.sqrt(x.shape[1])
    assert ((mc - population_loss(g, h, u, v)).abs() <= 5 * se).all()


def test_rotated_and_axis_targets_have_unit_second_moment():
    for task in gx.TASKS:
        u, v = gx.task_pairs(0, 12, 4, task)
        zero = torch.zeros_like(u)
        assert torch.allclose(
            population_loss(zero, zero, u, v), torch.ones(4, dtype=torch.float64), atol=1e-12
        )


def test_autograd_gradient_matches_finite_differences():
    g, h, u, v = _weights(2, 5, 3)
    z = torch.log(g).clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(population_loss(torch.softmax(z, -1), h, u, v).sum(), z)
    step = 1e-6
    for e, a in [(0, 0), (1, 3), (0, 4)]:
        plus, minus = z.detach().clone(), z.detach().clone()
        plus[e, a] += step
        minus[e, a] -= step
        fd = (
            population_loss(torch.softmax(plus, -1), h, u, v)[e]
            - population_loss(torch.softmax(minus, -1), h, u, v)[e]
        ) / (2 * step)
        assert abs(float(fd) - float(grad[e, a])) <= 1e-7 * max(1.0, abs(float(fd)))


def test_the_bound_holds_on_random_simplex_points_and_the_search():
    u, v = gx.task_pairs(5, 64, 6, "rotated")
    bound = simplex_floor_bound(u, v)
    assert (bound > 0.3).all()  # at d = 64 the bound already says "far from 0.05"
    gen = torch.Generator().manual_seed(0)
    for scale in (0.5, 4.0, 30.0):
        g, h = torch.softmax(scale * torch.randn(2, 6, 64, generator=gen, dtype=torch.float64), -1)
        assert (population_loss(g, h, u, v) >= bound - 1e-12).all()
    found = gx.simplex_floor(u, v, restarts=3, steps=100)
    assert (found >= bound.numpy() - 1e-12).all() and (found < 1.0).all()
    axis_u, axis_v = gx.task_pairs(5, 64, 6, "axis")
    assert torch.equal(simplex_floor_bound(axis_u, axis_v), torch.zeros(6))


def test_the_mlp_in_a_rotated_frame_repeats_the_axis_run():
    """Rotating the inputs, the first layer and the target's pair together changes nothing:
    the training is rotation-equivariant (the rotated arm equals the axis arm in law)."""
    d, E = 10, 2
    cfg = gx.GaussianMLPConfig(d=d, width=6, seeds=E, steps=30, batch=16, lr=0.05, seed=4)
    u, v = gx.task_pairs(4, d, E, "axis")
    frame = torch.stack([haar_frame(torch.Generator().manual_seed(e), d, d) for e in range(E)])
    axis = gx.train_mlp(cfg, u, v)["test_loss"]
    rot_u, rot_v = (
        torch.bmm(frame, u.unsqueeze(-1)).squeeze(-1),
        torch.bmm(frame, v.unsqueeze(-1)).squeeze(-1),
    )
    rotated = gx.train_mlp(cfg, rot_u, rot_v, frame)["test_loss"]
    assert np.allclose(axis, rotated, rtol=1e-9)
    assert (axis < 1.5).all()


def _transformer(task: str, d: int, finals: list[float], one: list[float]) -> dict:
    n = len(finals)
    out = {
        "model": "transformer",
        "task": task,
        "d": d,
        "m": 8,
        "loss_init": [1.0] * n,
        "loss_one_step": one,
        "loss_final": finals,
        "loss_min": [min(1.0, x) for x in finals],
    }
    if task == "rotated":
        out["floor_found"] = [0.9] * n
        out["floor_bound"] = [0.6] * n
    return out


def _mlp(task: str, d: int, losses: list[float]) -> dict:
    return {"model": "mlp", "task": task, "d": d, "width": 8, "steps": 10, "test_loss": losses}


def _records(mlp_rotated: list[float]) -> list[dict]:
    rows = []
    for d in (16, 64):
        rows.append(_transformer("axis", d, [0.0] * 30 + [2.0] * 2, [0.01] * 28 + [2.0] * 4))
        rows.append(_transformer("rotated", d, [2.0] * 32, [2.5] * 32))
        rows.append(_mlp("axis", d, [0.02] * 10 + [0.2] * 10))
        rows.append(_mlp("rotated", d, mlp_rotated))
    return rows


def _estimate(claim: dict, name: str) -> dict:
    return next(e for e in claim["estimates"] if e["name"] == name)


def test_the_finding_reports_rates_and_intervals_of_constructed_records():
    config = Config()
    claim = xor_rotated_basis.verdict.verdict(_records([0.03] * 9 + [0.3] * 11), config)
    assert claim["verdict"] == stats.FINDING
    json.dumps(claim, allow_nan=False)
    axis = _estimate(claim, "transformer, axis, d=64: success rate")
    assert axis["value"] == 30 / 32 and (axis["low"], axis["high"]) == pytest.approx(
        stats.wilson(30, 32)
    )
    one = _estimate(claim, "transformer, axis, d=16: one-step rate")
    assert one["value"] == 28 / 32
    assert _estimate(claim, "transformer, rotated, d=16: success rate")["value"] == 0
    diff = _estimate(claim, "mlp, d=64: rate rotated - axis")
    assert diff["value"] == pytest.approx(-0.05) and diff["low"] < 0 < diff["high"]
    ratio = _estimate(claim, "mlp, d=16: median loss rotated / axis")
    assert ratio["low"] <= ratio["value"] <= ratio["high"]
    assert _estimate(claim, "transformer, rotated, d=64: median ceiling found")["value"] == 0.9
    assert "contains 0 at every d" in claim["reason"] and "expressivity" in claim["reason"]
    for e in claim["estimates"]:
        assert e["low"] <= e["value"] <= e["high"], e


def test_the_finding_says_when_the_mlp_rates_differ():
    claim = xor_rotated_basis.verdict.verdict(_records([0.3] * 20), Config())
    diff = _estimate(claim, "mlp, d=16: rate rotated - axis")
    assert diff["high"] < 0
    assert "excludes 0 at some d" in claim["reason"]


def test_tiny_end_to_end_and_split_independence(tmp_path):
    config = EXPERIMENT.config("quick", **TINY)
    jobs = split(config)
    assert len(jobs) == 4
    records = [r for job in jobs for r in xor_rotated_basis.run.run(job)]
    json.dumps(records, allow_nan=False)
    whole = xor_rotated_basis.run.run(config)  # one job: the same numbers
    key = lambda r: (r["d"], r["model"], r["task"])  # noqa: E731
    assert sorted(records, key=key) == sorted(whole, key=key)
    claim = EXPERIMENT.verdict(records, config)
    assert claim["verdict"] == stats.FINDING and claim["reason"]
    paths = EXPERIMENT.figure(records, config, tmp_path)
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in paths)
    for preset in base.PRESETS:
        c = EXPERIMENT.config(preset)
        for job in split(c):
            stored = job.model_dump()
            assert EXPERIMENT.work is not None and EXPERIMENT.peak is not None
            parts = EXPERIMENT.work(stored)
            assert isinstance(parts, dict) and sum(parts.values()) > 0
            assert EXPERIMENT.peak(stored) > 0


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"d_values": [8192]}, "d_values must be <= 4096"),
        ({"d_values": [16, 16]}, "d_values must be distinct"),
        ({"seeds": 0}, "seeds"),
        ({"d_values": [4096], "seeds": 4096, "m": 1024}, "seeds \\* d \\* m must be <="),
        ({"mlp_lr": 100.0}, "mlp_lr"),
    ],
)
def test_bad_configs_are_one_line(bad, message):
    with pytest.raises(ValueError, match=message) as err:
        EXPERIMENT.config("quick", **bad)
    assert "\n" not in str(err.value)
