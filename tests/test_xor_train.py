"""Training beyond one step (``attnsep.train.xor_train``, ``train.descent``, ``attnsep xor train``):
the hand-written pieces against autograd and torch, agreement with the one-step path,
replica independence, the saved result read back, the command's output and its bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from attnsep.exact.parity import cube, enumeration_loss
from attnsep.metrics.parity import certified_error
from attnsep.models.query_heads import head_product
from attnsep.results import XorTrainResult, load
from attnsep.train.descent import Adam, Descent
from attnsep.train.one_step import OneStepConfig, run_one_step
from attnsep.train.xor_train import (
    XorTrainConfig,
    cube_split,
    sample_gradient,
    train_xor,
)
from cli_support import attnsep


def test_sample_gradient_matches_autograd() -> None:
    gen = torch.Generator().manual_seed(0)
    for heads in (2, 3, 4):
        gamma = torch.randn(3, heads, 7, generator=gen, dtype=torch.float64)
        x = torch.randint(0, 2, (3, 50, 7), generator=gen).double() * 2 - 1
        y = torch.randint(0, 2, (3, 50), generator=gen).double() * 2 - 1
        loss, grad = sample_gradient(gamma, x, y, -1)
        leaf = gamma.clone().requires_grad_(True)
        reference = ((head_product(leaf, x, -1) - y) ** 2).mean(dim=1)
        (expected,) = torch.autograd.grad(reference.sum(), leaf)
        torch.testing.assert_close(loss, reference.detach(), rtol=0, atol=1e-13)
        torch.testing.assert_close(grad, expected, rtol=1e-12, atol=1e-14)


def test_adam_matches_torch_and_keeps_replicas_apart() -> None:
    gen = torch.Generator().manual_seed(1)
    theta = torch.randn(4, 2, 3, generator=gen, dtype=torch.float64)
    grads = [torch.randn(4, 2, 3, generator=gen, dtype=torch.float64) for _ in range(5)]
    ours, rule = theta.clone(), Adam(0.03)
    param = theta.clone().requires_grad_(True)
    reference = torch.optim.Adam([param], lr=0.03)
    for g in grads:
        ours = rule(ours, g)
        param.grad = g.clone()
        reference.step()
    torch.testing.assert_close(ours, param.detach(), rtol=0, atol=1e-14)
    alone, rule = theta[1:2].clone(), Adam(0.03)
    for g in grads:
        alone = rule(alone, g[1:2])
    torch.testing.assert_close(alone, ours[1:2], rtol=0, atol=0)


def test_one_step_size_per_replica_is_each_replica_at_its_own_size() -> None:
    def objective(theta):
        return (theta**2).sum(dim=(1, 2)), 2 * theta

    theta = torch.ones(3, 1, 2, dtype=torch.float64)
    etas = torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64)[:, None, None]
    together = Descent(objective, theta, etas)
    together.run_to(4)
    for e in range(3):
        alone = Descent(objective, theta[e : e + 1], float(etas[e]))
        alone.run_to(4)
        torch.testing.assert_close(alone.theta, together.theta[e : e + 1], rtol=0, atol=0)


@pytest.mark.parametrize("k", [2, 3])
def test_the_first_population_step_is_the_one_step(k: int) -> None:
    eta = 3.0e4 if k == 2 else 2.0e6
    one = run_one_step(OneStepConfig(d=24, m=8, seeds=3, k=k, eta=eta))
    trained = train_xor(XorTrainConfig(d=24, m=8, k=k, seeds=3, steps=1, eta=eta, device="cpu"))
    np.testing.assert_allclose(trained.theta, one.theta_after, rtol=0, atol=1e-12)
    np.testing.assert_allclose(trained.population_loss[:, 0], one.loss_before, atol=1e-12)
    np.testing.assert_allclose(trained.population_loss[:, 1], one.loss_after, atol=1e-12)
    np.testing.assert_allclose(trained.certified_error[:, 1], one.certified_error, atol=1e-12)


CASES = {
    "population": {},
    "fresh": {"gradient": "fresh", "samples": 64},
    "fixed batches": {"gradient": "fixed", "samples": 100, "batch": 16, "optimizer": "adam"},
    "cube": {"gradient": "fixed", "cube_fraction": 0.75, "optimizer": "adam"},
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_replica_does_not_depend_on_the_others(case: str) -> None:
    base = dict(d=10, m=6, k=3, steps=4, device="cpu", eta_scale=0.5, **CASES[case])
    few = train_xor(XorTrainConfig(seeds=2, **base))
    many = train_xor(XorTrainConfig(seeds=4, **base))
    for name in ("theta", "loss", "population_loss", "mass", "certified_error"):
        np.testing.assert_allclose(getattr(few, name), getattr(many, name)[:2], rtol=0, atol=1e-12)


def test_recorded_trajectories_are_the_exact_quantities() -> None:
    cfg = XorTrainConfig(d=10, m=6, k=3, seeds=3, steps=5, gradient="fresh", samples=200)
    result = train_xor(cfg)
    gamma, support = torch.from_numpy(result.weights), torch.from_numpy(result.support)
    by_cube = enumeration_loss(gamma, support, sign=-1, task_sign=-1)
    np.testing.assert_allclose(result.population_loss[:, -1], by_cube.numpy(), atol=1e-12)
    np.testing.assert_allclose(result.certified_error[:, -1], certified_error(gamma, support))
    np.testing.assert_allclose(
        result.mass[:, -1],
        np.take_along_axis(
            result.weights, np.broadcast_to(result.support[:, None, :], result.mass[:, -1].shape), 2
        ),
    )
    assert not np.allclose(result.loss, result.population_loss)  # batch loss, not population


def test_cube_split_and_test_accuracy() -> None:
    train, test = cube_split(6, 0.75, seed=2, replicas=2)
    assert train.shape == (2, 48, 6) and test.shape == (2, 16, 6)
    for e in range(2):
        rows = {tuple(r) for r in torch.cat([train[e], test[e]]).int().tolist()}
        assert rows == {tuple(r) for r in cube(6).int().tolist()}
    result = train_xor(
        XorTrainConfig(d=6, m=4, k=2, seeds=2, steps=2, cube_fraction=0.75, seed=2, eta=500.0)
    )
    gamma, support = torch.from_numpy(result.weights), torch.from_numpy(result.support)
    y = -test[:, :, support[0]].prod(dim=2)
    for e in range(2):
        y_e = -test[e][:, support[e]].prod(dim=1)
        f = head_product(gamma[e : e + 1], test[e : e + 1], -1)[0]
        assert result.test_accuracy[e, -1] == pytest.approx(
            float((torch.sign(f) == y_e).double().mean())
        )
    assert y.shape == (2, 16)


def test_stop_at_success_stops_when_every_replica_succeeded() -> None:
    cfg = XorTrainConfig(d=16, m=16, k=2, seeds=4, steps=50, eta_scale=16.0, stop_at_success=True)
    result = train_xor(cfg)
    reached = result.steps_to_success()
    assert all(s is not None for s in reached)
    assert result.steps_run == max(reached) < 50


def test_save_load_round_trip_and_frame(tmp_path) -> None:
    cfg = XorTrainConfig(d=8, m=4, k=3, seeds=2, steps=3, gradient="fixed", cube_fraction=0.5)
    result = train_xor(cfg)
    path = tmp_path / "run.npz"
    XorTrainResult(result).save(path)
    back = load(path)
    assert isinstance(back, XorTrainResult) and back.config == result.config
    assert back.report() == result.report()
    for name in ("theta", "weights", "loss", "mass", "certified_error", "test_accuracy"):
        np.testing.assert_array_equal(getattr(back.raw, name), getattr(result, name))
    frame = result.to_frame()
    assert len(frame) == 2 * 4
    assert {"replica", "step", "population_loss", "test_accuracy", "mass_h2_s1"} <= set(frame)
    assert (
        frame.loc[(frame.replica == 1) & (frame.step == 3), "mass_h0_s2"].item()
        == (result.mass[1, 3, 0, 2])
    )


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"gradient": "fresh"}, "needs samples"),
        ({"gradient": "magic"}, "gradient must be one of"),
        ({"samples": 10}, "population gradient takes no samples"),
        ({"gradient": "fixed", "cube_fraction": 0.5, "d": 30}, "cube split needs d <= 20"),
        ({"batch": 4}, "batch applies to gradient 'fixed' only"),
        ({"k": 5, "d": 10}, "k must be <= 4"),
        ({"optimizer": "lbfgs"}, "optimizer must be one of"),
        ({"gradient": "fresh", "samples": 10**7, "seeds": 64}, "seeds \\* samples \\* d must be"),
    ],
)
def test_bad_configs_are_one_line_errors(changes: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        XorTrainConfig(**{"d": 8, **changes})


# --- the command ---------------------------------------------------------------------------

BASE = ["xor", "train", "--d", "12", "--m", "6", "--k", "3", "--seeds", "3", "--steps", "4"]


def test_json_save_and_figures(tmp_path) -> None:
    out, figs = tmp_path / "run.npz", tmp_path / "figs"
    proc = attnsep(*BASE, "--json", "--save", str(out), "--figures", str(figs), "--quiet")
    assert proc.returncode == 0, proc.stderr
    report = proc.json()
    for key in ("success_rate", "steps_to_success", "loss_final", "eta", "steps_run"):
        assert key in report
    assert report["steps_run"] == 4 and len(report["steps_to_success"]["values"]) == 3
    back = load(out)
    assert back.summary()["success_rate"] == report["success_rate"]
    assert back.report()["loss_final"] == report["loss_final"]
    assert back.report()["figures"] == report["figures"]
    assert {p.split("/")[-1] for p in report["figures"]} == {
        "train_loss.png",
        "train_attention.png",
    }
    assert all(open(p, "rb").read(8) == b"\x89PNG\r\n\x1a\n" for p in report["figures"])
    json.dumps(report, allow_nan=False)


def test_table_and_progress_bar() -> None:
    proc = attnsep(*BASE)
    assert proc.returncode == 0, proc.stderr
    assert "success rate" in proc.stdout and "steps to success" in proc.stdout
    assert "xor train" in proc.stderr and "4/4" in proc.stderr


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--gradient", "fresh"], "error: gradient 'fresh' needs samples"),
        (["--eta", "-1"], "error: eta must be a finite number > 0, got -1"),
        (["--eta", "fast"], "error: --eta must be 'auto' or a number, got 'fast'"),
        (["--save", "run.txt"], "error: output file must end in .npz"),
    ],
)
def test_bad_input_exits_2_with_one_line(extra, message, tmp_path) -> None:
    proc = attnsep(*BASE, *extra)
    assert proc.returncode == 2
    assert proc.stderr.startswith(message) and proc.stderr.count("\n") == 1
    assert not list(tmp_path.iterdir())
