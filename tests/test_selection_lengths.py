"""Mixed-length training of the selector (``train.selection_lengths``, SPEC Part G, item B5.3d):
with one length it is ``train.selection.train`` bit for bit; its lengths are uniform on the
range; a replica's run does not depend on the ensemble; its step is the autograd gradient."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnsep.configs import SelectionTrainConfig
from attnsep.tasks.selection import TokenSelection
from attnsep.train.selection import train
from attnsep.train.selection_lengths import step_length, subsets, train_mixed_lengths


def config(pe="stochastic", replicas=2, **extra):
    fixed = {"fixed_positions": 12} if pe == "fixed" else {}
    values = {
        "d": 3,
        "T": 6,
        "q": 2,
        "pe": pe,
        "pe_dim": 8,
        "trainable": "position",
        "objective": "population",
        "steps": 12,
        "batch": 16,
        "lr": 1.0,
        "seeds": replicas,
        "seed": 5,
    }
    return SelectionTrainConfig(**{**values, **fixed, **extra})


@pytest.mark.parametrize(
    "c", [config("stochastic"), config("fixed"), config("stochastic", pe_draws="explicit")]
)
def test_one_length_is_train_bit_for_bit(c):
    mixed, lengths = train_mixed_lengths(c, c.T)
    plain = train(c)
    assert lengths == [c.T] * c.steps
    assert torch.equal(mixed.W, plain.W) and torch.equal(mixed.losses, plain.losses)


def test_lengths_are_uniform_on_the_range():
    drawn = np.array([step_length(3, t, 4, 40) for t in range(4000)])
    assert drawn.min() == 4 and drawn.max() == 40
    counts = np.bincount(drawn, minlength=41)[4:]
    expected = len(drawn) / 37
    assert np.all(np.abs(counts - expected) < 5 * np.sqrt(expected))  # 5 s.d. of a count


@pytest.mark.parametrize("pe", ["stochastic", "fixed"])
def test_a_replica_does_not_depend_on_the_ensemble(pe):
    two, _ = train_mixed_lengths(config(pe, replicas=2), 3)
    one, _ = train_mixed_lengths(config(pe, replicas=1), 3)
    assert torch.allclose(two.W[:1], one.W, rtol=0, atol=1e-12)


def test_subsets_are_the_task_samples():
    task = TokenSelection(3, 6, 2)
    assert torch.equal(
        subsets(task, 7, 2, 5, ("train", 4), 5), task.sample(7, 2, 5, ("train", 4), length=5).y
    )


@pytest.mark.parametrize("pe", ["stochastic", "fixed"])
def test_each_step_reads_its_own_length(pe):
    """A one-step run whose drawn length is ``L < T`` is ``train``'s one-step run at ``T = L``
    (the same streams, table and update); at ``W = 0`` a step's loss is uniform attention's at
    its own length, ``d (L − q) / (q L)``."""
    c = config(pe, replicas=1, steps=1)
    length = step_length(c.seed, 0, 2, c.T)
    assert length < c.T  # the seed draws a shorter first step
    mixed, lengths = train_mixed_lengths(c, 2)
    plain = train(c.model_copy(update={"T": length}))
    assert lengths == [length]
    assert torch.equal(mixed.W, plain.W) and torch.equal(mixed.losses, plain.losses)
    # at W = 0 the loss is uniform attention's at the step's length: d (L - q) / (q L)
    two, lengths = train_mixed_lengths(c.model_copy(update={"steps": 2}), 2)
    assert float(two.losses[0, 0]) == pytest.approx(c.d * (lengths[0] - c.q) / (c.q * lengths[0]))
