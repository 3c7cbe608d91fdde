"""FCN training (SPEC A7.6, B4, B5.4): one loop for both tasks, replica independence, the
task's sampler, XOR success, the selection floor."""

from __future__ import annotations

from fractions import Fraction

import pytest
import torch

from attnsep.configs import default_xor_lr
from attnsep.core.rng import generator
from attnsep.exact import selection_bounds as exact_selection
from attnsep.tasks.parity import SparseParity
from attnsep.tasks.selection import TokenSelection, sts
from attnsep.train.fcn import (
    Diverged,
    SelectionFCNConfig,
    XorFCNConfig,
    loop,
    selection_features,
    train,
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
    full = train_xor(XorFCNConfig(seeds=3, steps=300, test_samples=512, **options))
    for e in range(3):
        one = train_xor(
            XorFCNConfig(seeds=1, first_replica=e, steps=300, test_samples=512, **options)
        )
        assert _same_replica(full, one, e)
        assert torch.equal(full.support[e], one.support[0])
        assert full.steps_run[e] == one.steps_run[0]
        assert full.test_error[e] == one.test_error[0]


def test_xor_odd_sizes_agree_to_rounding() -> None:
    """With sizes BLAS blocks differently per batch (odd ``d``), agreement is to rounding."""
    options = {"d": 33, "width": 7, "steps": 200, "test_samples": 512, "early_stop": False}
    full = train_xor(XorFCNConfig(seeds=3, **options))
    for e in range(3):
        one = train_xor(XorFCNConfig(seeds=1, first_replica=e, **options))
        for p, q in zip(full.model.parameters(), one.model.parameters(), strict=True):
            torch.testing.assert_close(p[e], q[0], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("samples", [None, 100])
def test_selection_replica_is_independent_of_the_ensemble(samples: int | None) -> None:
    options = {"d": 2, "T": 4, "q": 2, "width": 5, "steps": 60, "batch": 64, "eval_samples": 64}
    full = train_selection(SelectionFCNConfig(seeds=3, samples=samples, **options))
    for e in range(3):
        one = train_selection(
            SelectionFCNConfig(seeds=1, first_replica=e, samples=samples, **options)
        )
        assert _same_replica(full, one, e)
        assert full.loss[e] == one.loss[0] and full.stderr[e] == one.stderr[0]


def test_chunks_by_first_replica_equal_the_whole_run() -> None:
    """Replicas 0..3 as chunks ``[0, 1]`` and ``[2, 3]``: the same nets and results."""
    options = {"d": 16, "width": 6, "noise": 0.05, "steps": 300, "test_samples": 512}
    full = train_xor(XorFCNConfig(seeds=4, **options))
    chunks = [train_xor(XorFCNConfig(seeds=2, first_replica=f, **options)) for f in (0, 2)]
    for name in ("support", "test_error", "test_loss", "steps_run"):
        assert torch.equal(getattr(full, name), torch.cat([getattr(c, name) for c in chunks]))
    for p, *qs in zip(
        full.model.parameters(), *(c.model.parameters() for c in chunks), strict=True
    ):
        assert torch.equal(p, torch.cat(qs))


def test_both_tasks_run_through_one_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """``train_xor`` and ``train_selection`` are :func:`train`, and each run is one call of the
    shared :func:`loop.fit` with the task's net sizes."""
    assert train_xor is train and train_selection is train
    seen = []

    def spy(model, task, cfg, progress=None):
        seen.append((type(cfg).__name__, task.inputs, task.outputs, task.done is not None))
        return fit(model, task, cfg, progress)

    fit = loop.fit
    monkeypatch.setattr(loop, "fit", spy)
    train(XorFCNConfig(d=12, width=3, seeds=2, steps=50, test_samples=64))
    train(SelectionFCNConfig(d=2, T=4, q=2, width=3, seeds=2, steps=5, eval_samples=16))
    assert seen == [("XorFCNConfig", 12, 1, True), ("SelectionFCNConfig", 4 * 2 + 4, 2, False)]
    with pytest.raises(TypeError, match="XorFCNConfig or SelectionFCNConfig, got dict"):
        train({"d": 12})


def test_early_stop_keeps_the_weights_of_the_stopping_step() -> None:
    """A replica stopped at step ``s`` holds the weights of an ``s``-step run without stopping."""
    stopped = train_xor(XorFCNConfig(d=16, width=6, seeds=3, test_samples=512))
    for e in range(3):
        s = int(stopped.steps_run[e])
        assert s < stopped.config.steps
        plain = train_xor(
            XorFCNConfig(
                d=16,
                width=6,
                seeds=1,
                first_replica=e,
                steps=s,
                early_stop=False,
                test_samples=512,
            )
        )
        assert _same_replica(stopped, plain, e)


def test_wide_net_learns_xor_and_width_one_cannot() -> None:
    """Width 16 succeeds for every seed; one ReLU unit cannot fit XOR (error stays near 1/4)."""
    wide = train_xor(XorFCNConfig(d=32, width=16, seeds=4, seed=0))
    assert bool(wide.success.all()), wide.test_error
    assert int(wide.steps_run.max()) <= 500
    narrow = train_xor(XorFCNConfig(d=32, width=1, seeds=4, seed=0, steps=400))
    assert not bool(narrow.success.any())
    assert float(narrow.test_error.min()) > 0.15


def test_selection_loss_respects_the_fcn_floor() -> None:
    """Below ``Td`` the trained loss never beats the B4 floor (Monte Carlo, 3 standard errors)."""
    d, T, q = 2, 4, 2
    for width in (1, 2, 4, 7):
        cfg = SelectionFCNConfig(d=d, T=T, q=q, width=width, seeds=2, steps=300, lr=1e-2)
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


def test_task_sampler_draws_uniform_signs_and_flips() -> None:
    """:meth:`SparseParity.draw`: ``±1`` with mean and pairwise products within 4 standard
    errors of 0, flips at the noise rate, replica ``e`` from ``gens[e]`` alone, and a prefix
    (``rows``) of the same draw."""
    task = SparseParity(13, 2, -1, 0.1)
    support = task.supports(0, 2)
    gens = [generator(0, e, "check") for e in range(2)]
    x, y = task.draw(support, gens, 4000)
    assert x.shape == (2, 4000, 13) and x.dtype == torch.float64
    assert bool((x.abs() == 1).all())
    assert float(x.mean().abs()) < 4 / x.numel() ** 0.5
    pairs = x[:, :, :-1] * x[:, :, 1:]
    assert float(pairs.mean().abs()) < 4 / pairs.numel() ** 0.5
    flipped = (y != task.labels(x, support)).double().mean()
    assert abs(float(flipped) - 0.1) < 4 * (0.1 * 0.9 / y.numel()) ** 0.5
    alone = task.draw(support[1:], [generator(0, 1, "check")], 4000)
    assert torch.equal(alone[0][0], x[1]) and torch.equal(alone[1][0], y[1])
    prefix = task.draw(support, [generator(0, e, "check") for e in range(2)], 4000, rows=100)
    assert torch.equal(prefix[0], x[:, :100]) and torch.equal(prefix[1], y[:, :100])


@pytest.mark.parametrize("samples", [None, 200])
def test_xor_sets_come_from_the_task_sampler(samples: int | None) -> None:
    """The test set is :meth:`SparseParity.draw` on streams ``(seed, e, "fcn-test")``: the
    result's test error and loss are recomputed from it exactly."""
    cfg = XorFCNConfig(d=16, width=4, seeds=2, steps=100, samples=samples, test_samples=300)
    result = train_xor(cfg)
    gens = [generator(cfg.seed, e, "fcn-test") for e in range(2)]
    x, y = SparseParity.of(cfg).draw(result.support, gens, cfg.test_samples)
    f = result.model(x).squeeze(-1)
    wrong = (torch.sign(f) != SparseParity.of(cfg).labels(x, result.support)).double().mean(dim=1)
    assert torch.equal(result.test_error, wrong)
    torch.testing.assert_close(result.test_loss, (f - y).pow(2).mean(dim=1), rtol=1e-12, atol=0)


def test_test_set_chunks_are_the_task_sampler_draw() -> None:
    """The test set, expanded ``EVAL_ROWS`` rows at a time into one buffer, is
    :meth:`SparseParity.draw`'s (bytes, flips and labels), also for ``d`` not a multiple of 8."""
    from attnsep.train.fcn.xor import _sample_chunks

    task = SparseParity(d=13, noise=0.2)
    support = task.supports(0, 2)
    n = 2 * loop.EVAL_ROWS + 100
    x, y = task.draw(support, [generator(0, e, "check") for e in range(2)], n)
    gens = [generator(0, e, "check") for e in range(2)]
    chunks = [(c.clone(), labels) for c, labels in _sample_chunks(task, support, gens, n, x.dtype)]
    assert torch.equal(torch.cat([c for c, _ in chunks], dim=1), x)
    assert torch.equal(torch.cat([labels for _, labels in chunks], dim=1), y)


def test_divergence_is_a_clear_error() -> None:
    with pytest.raises(Diverged, match="lower lr"):
        train_xor(XorFCNConfig(d=16, width=64, seeds=2, optimizer="sgd", lr=1e6, steps=200))
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
    wide = {"d": 16, "width": 2048, "seeds": 1, "steps": 60, "test_samples": 512}
    with pytest.raises(Diverged):
        train_xor(XorFCNConfig(lr=0.1, early_stop=False, **wide))
    result = train_xor(XorFCNConfig(**wide))
    assert bool(torch.isfinite(result.test_loss).all())


def test_finished_replicas_leave_the_batch_without_changing_the_others() -> None:
    """Replicas stop at different checks; each still equals itself trained alone (noisy labels
    draw flips too), and a stopped replica's loss log is NaN after its stop."""
    options = {"d": 16, "width": 3, "noise": 0.05, "steps": 400, "test_samples": 512}
    full = train_xor(XorFCNConfig(seeds=4, **options))
    assert len(set(full.steps_run.tolist())) > 1, full.steps_run
    for e in range(4):
        one = train_xor(XorFCNConfig(seeds=1, first_replica=e, **options))
        assert _same_replica(full, one, e)
        assert full.steps_run[e] == one.steps_run[0]
        s = int(full.steps_run[e])
        assert bool(torch.isfinite(full.losses[:s, e]).all())
        assert bool(full.losses[s:, e].isnan().all())
