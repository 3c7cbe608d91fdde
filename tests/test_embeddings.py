"""Streamed embeddings (SPEC A2, A4 at large d): the same rows and products as the held tensor."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnsep.core.random_rows import ROW_BLOCK
from attnsep.embeddings import StreamedEmbeddings, per_replica_matmul, sphere_embeddings
from attnsep.models.query_heads import QueryHeads, initial_queries
from attnsep.train import memory, one_step


@pytest.mark.parametrize("chunk_rows", [333, ROW_BLOCK, 3 * ROW_BLOCK, None])
def test_streamed_rows_and_products_match_the_held_tensor(chunk_rows):
    d, m, E = 2 * ROW_BLOCK + 123, 8, 3
    held = sphere_embeddings(5, E, d, m, first_replica=2)
    streamed = StreamedEmbeddings(5, E, d, m, first_replica=2, chunk_rows=chunk_rows)
    assert torch.equal(torch.cat([V for _, _, V in streamed.chunks()], dim=1), held)
    theta = initial_queries(5, E, 2, m, first_replica=2)
    dense = QueryHeads(held)
    torch.testing.assert_close(streamed.scores(theta), dense.scores(theta), rtol=0, atol=1e-14)
    grad = torch.randn(E, 2, d, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(
        streamed.backproject(grad), dense.backproject(grad), rtol=1e-12, atol=1e-12
    )


def test_per_replica_matmul_is_a_batched_matmul():
    a = torch.randn(4, 3, 7, dtype=torch.float64)
    b = torch.randn(4, 7, 5, dtype=torch.float64)
    torch.testing.assert_close(per_replica_matmul(a, b), torch.bmm(a, b))


def test_one_step_streamed_equals_held(monkeypatch):
    config = one_step.OneStepConfig(d=3000, m=16, seeds=4, seed=1)
    held = one_step.run_one_step(config)
    monkeypatch.setattr(memory, "BATCH_ELEMENTS", 1000)  # force the streamed path
    streamed = one_step.run_one_step(config.replace(replica_batch=4))
    np.testing.assert_allclose(streamed.theta_after, held.theta_after, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(streamed.loss_after, held.loss_after, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(streamed.specialized, held.specialized)
    np.testing.assert_array_equal(streamed.support, held.support)


def test_kept_stream_draws_once_and_gives_the_streams_products(monkeypatch):
    """A stream drawn into ``out`` keeps its rows: drawn in one pass, bitwise the same products."""
    import attnsep.embeddings as embeddings

    d, m, E = 2 * ROW_BLOCK + 123, 8, 2
    theta = initial_queries(5, E, 2, m)
    grad = torch.randn(E, 2, d, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    drawn = []
    draw = embeddings.sphere_rows
    monkeypatch.setattr(embeddings, "sphere_rows", lambda *a, **k: drawn.append(a) or draw(*a, **k))
    products = {}
    for keep in (False, True):
        drawn.clear()
        out = torch.empty(E, d, m, dtype=torch.float64) if keep else None
        V = StreamedEmbeddings(5, E, d, m, chunk_rows=ROW_BLOCK, out=out)
        products[keep] = (V.scores(theta), V.backproject(grad), V.scores(2 * theta))
        assert len(drawn) == (1 if keep else 3) * E * 3  # replicas x chunks, once or per pass
    for plain, kept in zip(products[False], products[True], strict=True):
        assert torch.equal(plain, kept)
    assert torch.equal(out, sphere_embeddings(5, E, d, m))  # the kept rows
    with pytest.raises(
        ValueError, match=r"out must be float64 on the CPU, of shape \(2, 8315, 8\)"
    ):
        StreamedEmbeddings(5, E, d, m, out=out[:, 1:])


def test_one_step_keeps_a_stream_that_fits(monkeypatch):
    """Over ``BATCH_ELEMENTS`` a replica is streamed; under ``KEPT_STREAM_ELEMENTS`` its chunks
    are kept, and the step's results are bitwise those of the plain stream."""
    config = one_step.OneStepConfig(d=3000, m=16, seeds=3, seed=1)
    monkeypatch.setattr(memory, "BATCH_ELEMENTS", 1000)
    kept, kept_bytes = one_step.run_one_step(config), memory.one_step_peak(config)
    assert memory.one_step_streamed(config) and memory.one_step_stream_kept(config)
    monkeypatch.setattr(memory, "KEPT_STREAM_ELEMENTS", 1000)
    assert not memory.one_step_stream_kept(config)
    plain = one_step.run_one_step(config)
    for name in one_step.REPLICA_FIELDS:
        np.testing.assert_array_equal(getattr(kept, name), getattr(plain, name))
    assert kept_bytes == memory.one_step_peak(config) + 8 * config.d * config.m  # the kept replica
