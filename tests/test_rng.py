"""Reproducible streams (core/rng.py) and row-block stable random rows (core/random_rows.py)."""

from __future__ import annotations

import zlib

import pytest
import torch

from attnsep.core.random_rows import ROW_BLOCK, gaussian_rows, sphere_rows
from attnsep.core.rng import generator, stream_seed
from attnsep.embeddings import sphere_embeddings


def test_stream_seed_is_deterministic_and_63_bit() -> None:
    for keys in [(), (0,), (3, "support"), (1, "samples", 7)]:
        a, b = stream_seed(11, *keys), stream_seed(11, *keys)
        assert a == b
        assert isinstance(a, int)
        assert 0 <= a < 2**63


def test_stream_seed_separates_names() -> None:
    names = [
        (0,),
        (1,),
        (0, 0),
        (0, 1),
        (1, 0),
        (0, "support"),
        (0, "samples"),
        (0, "samples", 0),
        (0, "samples", 1),
        (1, 2),
        (12,),
    ]
    seeds = {stream_seed(5, *k) for k in names}
    assert len(seeds) == len(names)
    assert stream_seed(5, 0) != stream_seed(6, 0)


def test_string_keys_hash_through_crc32() -> None:
    assert stream_seed(2, "queries") == stream_seed(2, zlib.crc32(b"queries"))


def test_generator_reproduces_the_same_draws() -> None:
    a = torch.randn(50, generator=generator(9, 4, "x"), dtype=torch.float64)
    b = torch.randn(50, generator=generator(9, 4, "x"), dtype=torch.float64)
    c = torch.randn(50, generator=generator(9, 5, "x"), dtype=torch.float64)
    assert torch.equal(a, b)
    assert not torch.equal(a, c)


@pytest.mark.parametrize(
    ("start", "stop"),
    [(3, 11), (0, 1), (ROW_BLOCK - 5, ROW_BLOCK + 7), (ROW_BLOCK, ROW_BLOCK + 2)],
)
def test_sphere_rows_do_not_depend_on_the_request(start: int, stop: int) -> None:
    width = 3
    big = sphere_rows(4, 2, "embeddings", 0, 2 * ROW_BLOCK + 10, width)
    small = sphere_rows(4, 2, "embeddings", start, stop, width)
    assert small.shape == (stop - start, width)
    assert torch.equal(small, big[start:stop])


def test_rows_across_the_block_boundary_come_from_different_streams() -> None:
    rows = gaussian_rows(0, 0, "embeddings", ROW_BLOCK - 1, ROW_BLOCK + 1, 4)
    # normals are drawn in float32, one stream per block, then widened
    first = torch.randn(ROW_BLOCK, 4, generator=generator(0, 0, "embeddings", 0)).double()
    second = torch.randn(ROW_BLOCK, 4, generator=generator(0, 0, "embeddings", 1)).double()
    assert torch.equal(rows[0], first[-1])
    assert torch.equal(rows[1], second[0])


def test_sphere_embeddings_replicas_are_their_own_streams() -> None:
    all_five = sphere_embeddings(7, 5, 20, 6)
    assert all_five.shape == (5, 20, 6)
    assert all_five.dtype == torch.float64
    for e in range(5):
        alone = sphere_embeddings(7, 1, 20, 6, first_replica=e)
        assert torch.equal(alone[0], all_five[e])
    tail = sphere_embeddings(7, 3, 20, 6, first_replica=2)
    assert torch.equal(tail, all_five[2:])
    assert not torch.equal(all_five[0], all_five[1])


def test_sphere_embeddings_name_selects_the_stream() -> None:
    a = sphere_embeddings(1, 1, 8, 4)
    b = sphere_embeddings(1, 1, 8, 4, name="other")
    assert not torch.equal(a, b)


def test_sphere_rows_are_unit_and_isotropic() -> None:
    m, n = 5, 4000
    rows = sphere_rows(3, 0, "embeddings", 0, n, m)
    torch.testing.assert_close(rows.norm(dim=1), torch.ones(n, dtype=torch.float64))
    # Uniform on the sphere: mean 0, second moment I/m. Coordinate j has variance 1/m.
    mean_se = (1 / m / n) ** 0.5
    assert rows.mean(dim=0).abs().max() < 5 * mean_se
    second = rows.T @ rows / n
    # Var(v_j^2) = 3/(m(m+2)) - 1/m^2, Var(v_i v_j) = 1/(m(m+2)) for uniform unit vectors.
    diag_se = ((3 / (m * (m + 2)) - 1 / m**2) / n) ** 0.5
    off_se = (1 / (m * (m + 2)) / n) ** 0.5
    diag_err = (second.diagonal() - 1 / m).abs().max()
    off_err = (second - torch.diag(second.diagonal())).abs().max()
    assert diag_err < 5 * diag_se
    assert off_err < 5 * off_se
