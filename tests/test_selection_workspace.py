"""Law-drawn training steps in a reused workspace (train.selection.Workspace, exact.products'
``out`` arrays): the same bits as the step on fresh arrays before it (``bench/selection_reference``,
the code of commit 7086ab4), and select-convergence's records pinned from that code."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch

from attnsep.exact import products
from attnsep.experiments import select_convergence
from attnsep.tasks.selection import TokenSelection
from attnsep.train.selection import (
    SelectionTrainConfig,
    Workspace,
    law_draws,
    law_terms,
    sampled_law_terms,
    train,
)
from pinned_support import matches

_PATH = Path(__file__).resolve().parent.parent / "bench" / "selection_reference.py"
_SPEC = importlib.util.spec_from_file_location("selection_reference", _PATH)
assert _SPEC is not None and _SPEC.loader is not None
reference = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(reference)


@pytest.mark.parametrize("shape", [(5, 3, 7), (1, 1, 1), (700, 1), (3, 2, 40_000), (0, 4)])
def test_row_norms_are_numpys_norms_bit_for_bit(shape: tuple[int, ...]) -> None:
    x = np.random.default_rng(0).standard_normal(shape)
    assert np.array_equal(products.row_norms(x), np.linalg.norm(x, axis=-1))


@pytest.mark.parametrize("kind", ["sphere", "gaussian"])
@pytest.mark.parametrize("m", [1, 2, 9])
def test_a_draw_into_arrays_is_the_fresh_draw(kind: str, m: int) -> None:
    fresh = products.draw(np.random.default_rng(4), 6, 7, 2, m, kind, "parts")
    out = (np.full((6, 2, m), np.nan), np.full((6, m), np.nan))
    filled = products.draw(np.random.default_rng(4), 6, 7, 2, m, kind, "parts", out)
    assert filled.on_y is out[0] and filled.normal is out[1]
    for name, value in vars(fresh).items():
        got = vars(filled)[name]
        assert (value is None and got is None) or np.array_equal(value, got), name
    old = reference._draw(np.random.default_rng(4), 6, 7, 2, m, kind)
    for name, value in vars(old).items():
        got = vars(filled)[name]
        assert (value is None and got is None) or np.array_equal(value, got), name


def test_stacking_one_replica_takes_views_and_given_arrays_as_they_are() -> None:
    one = products.draw(np.random.default_rng(1), 4, 6, 2, 3, "sphere", "parts")
    stacked = products.stack([one])
    assert np.shares_memory(stacked.on_y, one.on_y) and stacked.on_y.shape == (1, 4, 2, 3)
    two = products.stack([one, one], on_y=np.zeros((2, 4, 2, 3)))
    assert not two.on_y.any() and np.array_equal(two.t, np.stack([one.t, one.t]))


def random_W(d: int, m: int, scale: float) -> torch.Tensor:
    rng = np.random.default_rng(1)
    W = torch.from_numpy(rng.standard_normal((2, d + m, d + m)) * scale)
    W[:, d:, d:] += 2 * torch.eye(m, dtype=torch.float64)
    return W


@pytest.mark.parametrize("kind", ["sphere", "gaussian"])
@pytest.mark.parametrize("scale", [0.8, 0.0])  # 0: W = 2I, and below W = 0 (v = 0: the e_1 rows)
def test_terms_in_a_workspace_are_the_old_terms_bit_for_bit(kind: str, scale: float) -> None:
    d, m, T, q, B = 3, 5, 9, 2, 40
    for W in (random_W(d, m, scale), torch.zeros(2, d + m, d + m, dtype=torch.float64)):
        draws = law_draws(3, range(2), ("k",), B, T, q, m, kind)
        old = reference.law_terms(W[:, d:, d:], draws, d, kind)
        work = Workspace.of(2, B, q, m, m)
        into = law_draws(3, range(2), ("k",), B, T, q, m, kind, work)
        for ours in (
            law_terms(W[:, d:, d:], draws, d, kind),
            law_terms(W[:, d:, d:], into, d, kind, work),
        ):
            assert all(torch.equal(a, b) for a, b in zip(ours, old, strict=True))
        X = TokenSelection(d, T, q).tokens(4, 2, B, ("k",), length=T)
        old = reference.sampled_law_terms(W[:, :, d:], X, draws, kind)
        work = Workspace.of(2, B, q, m, d + m)
        into = law_draws(3, range(2), ("k",), B, T, q, m, kind, work)
        for ours in (
            sampled_law_terms(W[:, :, d:], X, draws, kind),
            sampled_law_terms(W[:, :, d:], X, into, kind, work),
        ):
            assert all(torch.equal(a, b) for a, b in zip(ours, old, strict=True))


CASES = {
    "population": dict(trainable="position", objective="population", seeds=2, lr=0.4),
    "population-gaussian": dict(
        trainable="position", objective="population", pe_kind="gaussian", lr=0.3
    ),
    "population-width-1": dict(trainable="position", objective="population", pe_dim=1, lr=0.2),
    "population-width-2": dict(
        trainable="position", objective="population", pe_dim=2, seeds=2, lr=0.2
    ),
    "sgd-full": dict(trainable="full", objective="sgd", seeds=2, lr=0.5),
    "sgd-position": dict(trainable="position", objective="sgd", lr=0.5),
    "sgd-gaussian": dict(trainable="full", objective="sgd", pe_kind="gaussian", lr=0.4),
}


@pytest.mark.parametrize("case", list(CASES))
def test_training_is_the_old_training_bit_for_bit(case: str) -> None:
    base = dict(d=3, T=10, q=2, pe_dim=6, batch=16, steps=12, seed=5)
    config = SelectionTrainConfig(**{**base, **CASES[case]})
    result = train(config)
    W, losses = reference.train(config)
    assert torch.equal(result.W, W) and torch.equal(result.losses, losses)


PINNED_RECORDS = [  # select_convergence.run at commit 7086ab4 (before the workspace; steps added)
    {
        "role": "paper-setting",
        "pe_dim": 8,
        "seed": 0,
        "steps": 24,
        "loss": 2.5315143763332166,
        "stderr": 0.15560952654261295,
        "uniform": 2.8333333333333335,
        "train_loss": 2.2617557065687364,
        "cos": 0.9198555179033795,
        "alpha": 0.5878213370708603,
        "off_identity": 0.09354808993335008,
        "content_norm": 0.49404295717663466,
        "family": 1.6607931487156404,
        "family_alpha": 2.1161217981026086,
    },  # noqa: E501
    {
        "role": "paper-setting",
        "pe_dim": 8,
        "seed": 1,
        "steps": 24,
        "loss": 2.2292087784398453,
        "stderr": 0.12916921738784967,
        "uniform": 2.8333333333333335,
        "train_loss": 2.3543692269193635,
        "cos": 0.9316581288898764,
        "alpha": 0.6225890706278986,
        "off_identity": 0.09053779675495063,
        "content_norm": 0.43689028161259125,
        "family": 1.7531673639384926,
        "family_alpha": 2.1527204379912694,
    },  # noqa: E501
    {
        "pe_dim": 8,
        "seed": 0,
        "steps": 30,
        "loss": 1.9261337731361696,
        "stderr": 0.057823415760489195,
        "path": "exact",
        "train_loss": 1.942603807427722,
        "cos": 0.9958278587615158,
        "uniform": 2.8333333333333335,
        "family": 1.6607931487156404,
        "family_stderr": 0.06389407348768784,
        "family_alpha": 2.1161217981026086,
    },  # noqa: E501
    {
        "pe_dim": 8,
        "seed": 1,
        "steps": 30,
        "loss": 1.844451377832906,
        "stderr": 0.05860062196017396,
        "path": "exact",
        "train_loss": 1.7735217390252902,
        "cos": 0.9952824881342344,
        "uniform": 2.8333333333333335,
        "family": 1.7531673639384926,
        "family_stderr": 0.08454116813791147,
        "family_alpha": 2.1527204379912694,
    },  # noqa: E501
    {
        "pe_dim": 12,
        "seed": 0,
        "steps": 30,
        "loss": 1.5272110761119784,
        "stderr": 0.06813432938893887,
        "path": "exact",
        "train_loss": 1.6087978790527506,
        "cos": 0.9956042812455483,
        "uniform": 2.8333333333333335,
        "family": 1.3627628145140922,
        "family_stderr": 0.08244605942821062,
        "family_alpha": 2.613265829039773,
    },  # noqa: E501
    {
        "pe_dim": 12,
        "seed": 1,
        "steps": 30,
        "loss": 1.5616328468407301,
        "stderr": 0.05790814207304092,
        "path": "exact",
        "train_loss": 1.6280656057764782,
        "cos": 0.9957704624312973,
        "uniform": 2.8333333333333335,
        "family": 1.3254167142380702,
        "family_stderr": 0.07663296170837902,
        "family_alpha": 2.5591505617440036,
    },  # noqa: E501
]


def test_select_convergence_records_are_pinned() -> None:
    config = select_convergence.config.Config(
        pe_dims=[8, 12],
        seeds=[0, 1],
        steps=30,
        eval_size=64,
        family_samples=64,
        paper_widths=[8],
        paper_steps_per_dim=3.0,
        paper_eval_size=64,
        paper_batch=32,
        paper_lr=0.5,
        products="float64",
    )
    assert matches(select_convergence.run.run(config), PINNED_RECORDS)  # floats to 1e-12


@pytest.mark.parametrize(
    ("trainable", "objective", "lr"), [("position", "population", 0.6), ("full", "sgd", 0.5)]
)
def test_float32_products_follow_the_float64_run(trainable, objective, lr) -> None:
    """``products="float32"`` rounds a step's two products to 24 bits: after 100 steps ``W``
    and the loss curve stay within ``1e-5`` (relative) of the float64 run, a few hundred times
    float32's unit roundoff, far below the steps' sampling noise."""
    runs = {
        precision: train(
            SelectionTrainConfig(
                pe_dim=48, trainable=trainable, objective=objective, steps=100, batch=96,
                lr=lr, seed=5, products=precision,
            )
        )
        for precision in ("float64", "float32")
    }  # fmt: skip
    exact, rounded = runs["float64"], runs["float32"]
    assert not torch.equal(exact.W, rounded.W)  # the products did run in float32
    assert float((rounded.W - exact.W).norm() / exact.W.norm()) < 1e-5
    assert torch.allclose(rounded.losses, exact.losses, rtol=1e-5, atol=0)


def test_float32_products_need_the_law_drawn_steps() -> None:
    with pytest.raises(ValueError, match="products 'float32' needs pe 'stochastic'"):
        SelectionTrainConfig(pe="fixed", products="float32")
    with pytest.raises(ValueError, match="pe_draws 'explicit'"):
        SelectionTrainConfig(pe_draws="explicit", products="float32")


def test_the_work_count_grows_like_the_products_only_at_large_widths() -> None:
    """B5.1's job (``select_convergence.run.b51_work``): ``B m²`` products with ``B ∝ m`` (8x per
    doubling) against ``(q + 1) m`` draws per sequence (4x) and each step's fixed cost (1x)."""
    config = select_convergence.config.Config().model_dump()
    steps = [select_convergence.config.steps_at(config["steps"], m) for m in (32, 64, 1024, 2048)]
    work = [select_convergence.run.b51_work(config, m) for m in (32, 64, 1024, 2048)]
    per_step = [w / s for w, s in zip(work, steps, strict=True)]
    assert 1 < per_step[1] / per_step[0] < 4 < 6.5 < per_step[3] / per_step[2] < 8
