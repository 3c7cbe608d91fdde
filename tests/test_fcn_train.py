"""FCN training (SPEC A7.6, B4, B5.4): replica independence, XOR success, the selection floor."""

from __future__ import annotations

from fractions import Fraction

import pytest
import torch

from attnsep.exact import selection as exact_selection
from attnsep.tasks.selection import TokenSelection, sts
from attnsep.train.fcn import (
    Diverged,
    SelectionFCNConfig,
    XorFCNConfig,
    cube_samples,
    default_xor_lr,
    selection_features,
    train_selection,
    train_xor,
)


def _same_replica(full, one, e: int) -> bool:
    pairs = zip(full.model.parameters(), one.model.parameters(), strict=True)
    return all(torch.equal(p[e], q[0]) for p, q in pairs)


@pytest.mark.parametrize(
    "options",
    [
        {"d": 16, "width": 5, "optimizer": "adam"},
        {"d": 16, "width": 8, "depth": 2, "loss": "hinge", "optimizer": "sgd", "lr": 0.1},
        {"d": 16, "width": 8, "samples": 300, "batch": 64},
    ],
)
def test_xor_replica_is_independent_of_the_ensemble(options: dict) -> None:
    """Replica ``e`` alone ends bitwise where it ends inside an ensemble (float64, CPU)."""
    full = train_xor(XorFCNConfig(replicas=3, steps=300, test_samples=512, **options))
    for e in range(3):
        one = train_xor(
            XorFCNConfig(replicas=1, first_replica=e, steps=300, test_samples=512, **options)
        )
        assert _same_replica(full, one, e)
        assert torch.equal(full.support[e], one.support[0])
        assert full.steps_run[e] == one.steps_run[0]
        assert full.test_error[e] == one.test_error[0]


def test_xor_odd_sizes_agree_to_rounding() -> None:
    """With sizes BLAS blocks differently per batch (odd ``d``), agreement is to rounding."""
    options = {"d": 33, "width": 7, "steps": 200, "test_samples": 512, "early_stop": False}
    full = train_xor(XorFCNConfig(replicas=3, **options))
    for e in range(3):
        one = train_xor(XorFCNConfig(replicas=1, first_replica=e, **options))
        for p, q in zip(full.model.parameters(), one.model.parameters(), strict=True):
            torch.testing.assert_close(p[e], q[0], rtol=1e-9, atol=1e-12)


def test_selection_replica_is_independent_of_the_ensemble() -> None:
    options = {"d": 2, "T": 4, "q": 2, "width": 5, "steps": 60, "batch": 64, "eval_samples": 64}
    full = train_selection(SelectionFCNConfig(replicas=3, **options))
    for e in range(3):
        one = train_selection(SelectionFCNConfig(replicas=1, first_replica=e, **options))
        assert _same_replica(full, one, e)
        assert full.loss[e] == one.loss[0] and full.stderr[e] == one.stderr[0]


def test_early_stop_keeps_the_weights_of_the_stopping_step() -> None:
    """A replica stopped at step ``s`` holds the weights of an ``s``-step run without stopping."""
    stopped = train_xor(XorFCNConfig(d=16, width=6, replicas=3, test_samples=512))
    for e in range(3):
        s = int(stopped.steps_run[e])
        assert s < stopped.config.steps
        plain = train_xor(
            XorFCNConfig(
                d=16,
                width=6,
                replicas=1,
                first_replica=e,
                steps=s,
                early_stop=False,
                test_samples=512,
            )
        )
        assert _same_replica(stopped, plain, e)


def test_wide_net_learns_xor_and_width_one_cannot() -> None:
    """Width 16 succeeds for every seed; one ReLU unit cannot fit XOR (error stays near 1/4)."""
    wide = train_xor(XorFCNConfig(d=32, width=16, replicas=4, seed=0))
    assert bool(wide.success.all()), wide.test_error
    assert int(wide.steps_run.max()) <= 500
    narrow = train_xor(XorFCNConfig(d=32, width=1, replicas=4, seed=0, steps=400))
    assert not bool(narrow.success.any())
    assert float(narrow.test_error.min()) > 0.15


def test_selection_loss_respects_the_fcn_floor() -> None:
    """Below ``Td`` the trained loss never beats the B4 floor (Monte Carlo, 3 standard errors)."""
    d, T, q = 2, 4, 2
    for width in (1, 2, 4, 7):
        cfg = SelectionFCNConfig(d=d, T=T, q=q, width=width, replicas=2, steps=300, lr=1e-2)
        result = train_selection(cfg)
        floor = float(exact_selection.fcn_loss_floor(T, q, d, width))
        assert floor > 0
        assert bool((result.loss + 3 * result.stderr >= floor).all()), (width, result.loss, floor)


def test_fcn_floor_formula() -> None:
    """SPEC B4: ``T = 20, q = 3`` and width ``Td − 1`` give ``17/1140``; zero from ``Td`` on."""
    assert exact_selection.fcn_loss_floor(20, 3, 10, 199) == Fraction(17, 1140)
    assert exact_selection.fcn_loss_floor(20, 3, 10, 200) == 0
    assert exact_selection.fcn_loss_floor(20, 3, 10, 150) == 50 * Fraction(17, 1140)
    # the width form: (Td - w)(T - q) / (q T (T - 1)), written out
    for d, T, q, width in [(2, 4, 2, 3), (4, 8, 2, 31), (10, 20, 3, 1), (5, 6, 6, 9)]:
        expected = Fraction(max(T * d - width, 0) * (T - q), q * T * (T - 1))
        assert exact_selection.fcn_loss_floor(T, q, d, width) == expected


def test_selection_features_and_target() -> None:
    data = TokenSelection(3, 5, 2).sample(0, 2, 4, ("check",))
    feats = selection_features(data.X, data.y)
    assert feats.shape == (2, 4, 3 * 5 + 5)
    assert torch.equal(feats[..., :15], data.X.flatten(-2))
    assert torch.equal(feats[..., 15:].sum(-1), torch.full((2, 4), 2.0, dtype=torch.float64))
    picked = feats[..., 15:].bool()
    manual = torch.stack([data.X[e, b][picked[e, b]].mean(0) for e in range(2) for b in range(4)])
    torch.testing.assert_close(sts(data.X, data.y).reshape(8, 3), manual)


def test_cube_samples_are_uniform_signs() -> None:
    gens = [torch.Generator().manual_seed(s) for s in range(2)]
    x = cube_samples(gens, 4000, 13)
    assert x.shape == (2, 4000, 13) and x.dtype == torch.float64
    assert bool((x.abs() == 1).all())
    assert float(x.mean().abs()) < 0.02
    assert float((x[:, :, 0] * x[:, :, 1]).mean().abs()) < 0.05
    again = cube_samples([torch.Generator().manual_seed(1)], 4000, 13)
    assert torch.equal(again[0], x[1])


def test_divergence_is_a_clear_error() -> None:
    with pytest.raises(Diverged, match="lower lr"):
        train_xor(XorFCNConfig(d=16, width=64, replicas=2, optimizer="sgd", lr=1e6, steps=200))
    with pytest.raises(ValueError, match="optimizer must be one of"):
        XorFCNConfig(optimizer="lbfgs")
    with pytest.raises(ValueError, match="q must be <= T"):
        SelectionFCNConfig(T=2, q=3)


def test_xor_default_rate_shrinks_with_the_width_and_keeps_wide_sgd_stable() -> None:
    """SGD's default ``min(0.1, 25/width)``: at width 2048, ``lr = 0.1`` diverges, the default
    trains (SPEC A7.6: SGD on fresh samples)."""
    assert XorFCNConfig().optimizer == "sgd"
    assert XorFCNConfig(width=4).rate == default_xor_lr("sgd", 4) == 0.1
    assert XorFCNConfig(width=1000).rate == pytest.approx(0.025)
    assert XorFCNConfig(width=4, optimizer="adam").rate == 1e-2
    assert XorFCNConfig(width=4, lr=0.5).rate == 0.5
    wide = {"d": 16, "width": 2048, "replicas": 1, "steps": 60, "test_samples": 512}
    with pytest.raises(Diverged):
        train_xor(XorFCNConfig(lr=0.1, early_stop=False, **wide))
    result = train_xor(XorFCNConfig(**wide))
    assert bool(torch.isfinite(result.test_loss).all())


def test_finished_replicas_leave_the_batch_without_changing_the_others() -> None:
    """Replicas stop at different checks; each still equals itself trained alone (noisy labels
    draw flips too), and a stopped replica's loss log is NaN after its stop."""
    options = {"d": 16, "width": 3, "noise": 0.05, "steps": 400, "test_samples": 512}
    full = train_xor(XorFCNConfig(replicas=4, **options))
    assert len(set(full.steps_run.tolist())) > 1, full.steps_run
    for e in range(4):
        one = train_xor(XorFCNConfig(replicas=1, first_replica=e, **options))
        assert _same_replica(full, one, e)
        assert full.steps_run[e] == one.steps_run[0]
        s = int(full.steps_run[e])
        assert bool(torch.isfinite(full.losses[:s, e]).all())
        assert bool(full.losses[s:, e].isnan().all())
