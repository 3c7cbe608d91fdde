"""Batching of the one step: held batches under the budget, partial-block draws, reused memory."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnsep.core.random_rows import ROW_BLOCK, block_normals
from attnsep.core.rng import generator
from attnsep.embeddings import per_replica_matmul, sphere_embeddings
from attnsep.train import memory
from attnsep.train.memory import one_step_batch, one_step_streamed
from attnsep.train.one_step import REPLICA_FIELDS, OneStepConfig, run_one_step


@pytest.mark.parametrize("width", [1, 3, 5, 32, 33])
@pytest.mark.parametrize("rows", [1, 5, 17, 1808, ROW_BLOCK - 1, ROW_BLOCK])
def test_a_partial_block_is_the_prefix_of_the_whole_block(width, rows):
    whole = torch.randn(ROW_BLOCK, width, generator=generator(3, 1, "embeddings", 2))
    assert torch.equal(block_normals(3, 1, "embeddings", 2, rows, width), whole[:rows])


def test_a_batch_over_the_budget_is_split_into_held_batches(monkeypatch):
    config = OneStepConfig(d=64, m=8, seeds=7, seed=2, device="cpu")
    looped = run_one_step(config.replace(replica_batch=1))
    monkeypatch.setattr(memory, "BATCH_ELEMENTS", 4 * 64 * 8)  # four replicas fit
    big = config.replace(replica_batch=7)
    assert one_step_batch(big) == 4 and not one_step_streamed(big)
    calls = []
    split = run_one_step(big, progress=lambda done, total: calls.append(done))
    assert calls == [4, 7]
    for name in REPLICA_FIELDS:
        assert np.array_equal(getattr(split, name), getattr(looped, name)), name


def test_auto_and_explicit_batch_sizes():
    assert one_step_batch(OneStepConfig(d=10_000, m=32, seeds=256)) == 26  # 2^23 // (d m)
    assert one_step_batch(OneStepConfig(d=10_000, m=32, seeds=256, replica_batch=256)) == 104
    assert one_step_batch(OneStepConfig(d=10_000, m=32, seeds=256, replica_batch=5)) == 5
    assert one_step_streamed(OneStepConfig(d=10**7, m=32, seeds=4))


def test_sphere_embeddings_draw_into_a_given_buffer():
    fresh = sphere_embeddings(4, 3, 50, 6, first_replica=1)
    buffer = torch.full((3, 50, 6), float("nan"), dtype=torch.float64)
    drawn = sphere_embeddings(4, 3, 50, 6, first_replica=1, out=buffer)
    assert drawn.data_ptr() == buffer.data_ptr()
    assert torch.equal(drawn, fresh)
    with pytest.raises(ValueError, match="out must be float64"):
        sphere_embeddings(4, 2, 50, 6, out=buffer)


@pytest.mark.parametrize(("h", "k", "n"), [(2, 32, 100), (3, 5, 33), (1, 7, 1)])
def test_per_replica_matmul_writes_each_replica_as_its_own_product(h, k, n):
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(5, h, k, dtype=torch.float64, generator=gen)
    b = torch.randn(5, k, n, dtype=torch.float64, generator=gen)
    out = per_replica_matmul(a, b)
    for e in range(5):
        assert torch.equal(out[e], per_replica_matmul(a[e : e + 1], b[e : e + 1])[0])
    leaf = a.clone().requires_grad_(True)  # under autograd the product stays differentiable
    (grad,) = torch.autograd.grad(per_replica_matmul(leaf, b).sum(), leaf)
    torch.testing.assert_close(grad, b.sum(dim=2)[:, None, :].expand(5, h, k))
