"""The sparse-parity task (SPEC A1): supports, labels, noise, sample streams."""

from __future__ import annotations

import itertools
import math

import pytest
import torch

from attnsep.tasks.parity import SAMPLE_ELEMENTS, SparseParity


def chi2_quantile(df: int, z: float) -> float:
    """Wilson-Hilferty approximation of the chi-square quantile at standard-normal ``z``."""
    c = 2 / (9 * df)
    return df * (1 - c + z * math.sqrt(c)) ** 3


@pytest.mark.parametrize(("d", "k"), [(2, 2), (7, 3), (50, 2), (12, 5)])
def test_supports_are_sorted_distinct_in_range(d: int, k: int) -> None:
    s = SparseParity(d, k).supports(seed=1, replicas=40)
    assert s.shape == (40, k)
    assert s.dtype == torch.int64
    assert (s >= 0).all() and (s < d).all()
    assert (s[:, 1:] > s[:, :-1]).all()  # strictly increasing: sorted and distinct


def test_supports_are_uniform_over_subsets() -> None:
    d, k, replicas = 6, 2, 3000
    s = SparseParity(d, k).supports(seed=0, replicas=replicas)
    pairs = list(itertools.combinations(range(d), k))
    index = {p: i for i, p in enumerate(pairs)}
    counts = torch.zeros(len(pairs))
    for row in s.tolist():
        counts[index[tuple(row)]] += 1
    expected = replicas / len(pairs)
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < chi2_quantile(len(pairs) - 1, z=4.75)  # p ~ 1e-6
    assert (counts > 0).all()


def test_support_positions_are_uniform_marginally() -> None:
    d, k, replicas = 40, 3, 2000
    s = SparseParity(d, k).supports(seed=2, replicas=replicas)
    counts = torch.bincount(s.flatten(), minlength=d).double()
    p = k / d
    se = math.sqrt(replicas * p * (1 - p))
    assert (counts - replicas * p).abs().max() < 5 * se


def test_supports_are_batch_independent() -> None:
    task = SparseParity(30, 3)
    all_ = task.supports(4, 6)
    for e in range(6):
        assert torch.equal(task.supports(4, 1, first_replica=e)[0], all_[e])
    assert torch.equal(task.supports(4, 6), all_)
    assert not torch.equal(task.supports(5, 6), all_)


def test_fixed_support_is_sorted_and_repeated() -> None:
    s = SparseParity(10, 3).fixed_support([7, 2, 5], replicas=4)
    assert s.tolist() == [[2, 5, 7]] * 4
    s[0, 0] = 9  # a real tensor, not a view shared between replicas
    assert s[1, 0] == 2


@pytest.mark.parametrize(
    ("support", "shown"),
    [
        ([1, 1], "[1, 1]"),
        ([0, 10], "[0, 10]"),
        ([-1, 3], "[-1, 3]"),
        ([1, 2, 3], "[1, 2, 3]"),
        ([4], "[4]"),
        ([1.0, 2], "[1.0, 2]"),
    ],
)
def test_fixed_support_rejects_bad_supports(support: list, shown: str) -> None:
    with pytest.raises(ValueError) as info:
        SparseParity(10, 2).fixed_support(support, replicas=2)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("support must be 2 distinct integers in [0, 10)")
    assert shown in message


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"d": 1}, "d must be an integer >= 2, got 1"),
        ({"d": 5, "k": 0}, "k must be an integer >= 1, got 0"),
        ({"d": 5, "k": 6}, "k must be <= d=5, got 6"),
        ({"d": 5, "sign": 0}, "sign must be +1 or -1, got 0"),
        ({"d": 5, "noise": 0.5}, "noise must be in [0, 0.5), got 0.5"),
        ({"d": 5, "noise": -0.1}, "noise must be in [0, 0.5), got -0.1"),
        ({"d": True}, "d must be an integer >= 2, got True"),
    ],
)
def test_task_validation(kwargs: dict, fragment: str) -> None:
    with pytest.raises(ValueError) as info:
        SparseParity(**kwargs)
    assert fragment in str(info.value)


@pytest.mark.parametrize(("k", "sign"), [(2, -1), (2, 1), (3, 1), (1, -1)])
def test_labels_are_sign_times_product(k: int, sign: int) -> None:
    d = 9
    task = SparseParity(d, k, sign)
    support = task.supports(0, 3)
    gen = torch.Generator().manual_seed(0)
    x = torch.randint(0, 2, (3, 17, d), generator=gen).double() * 2 - 1
    y = task.labels(x, support)
    for e in range(3):
        for i in range(17):
            assert y[e, i] == sign * math.prod(x[e, i, a].item() for a in support[e].tolist())
    flips = torch.rand(3, 17, generator=gen) < 0.5
    assert torch.equal(task.labels(x, support, flips), torch.where(flips, -y, y))


def test_clean_samples_are_balanced_signs_with_exact_labels() -> None:
    task = SparseParity(20, 2)
    support = task.supports(3, 2)
    (x, y), *rest = list(task.samples(3, support, 5000))
    assert not rest
    assert x.shape == (2, 5000, 20) and y.shape == (2, 5000)
    assert x.dtype == torch.float64
    assert set(x.unique().tolist()) == {-1.0, 1.0}
    # every coordinate is a fair sign: mean 0 with standard error 1/sqrt(n)
    assert x.mean(dim=1).abs().max() < 5 / math.sqrt(5000)
    assert torch.equal(y, task.labels(x, support))
    # a clean parity label is itself a fair sign, uncorrelated with each single bit
    assert y.mean(dim=1).abs().max() < 5 / math.sqrt(5000)
    assert (x * y[:, :, None]).mean(dim=1).abs().max() < 5 / math.sqrt(5000)


@pytest.mark.parametrize("noise", [0.1, 0.3])
def test_label_noise_rate(noise: float) -> None:
    task = SparseParity(10, 2, noise=noise)
    support = task.supports(0, 3)
    n = 20000
    x, y = next(task.samples(5, support, n))
    flipped = (y != task.labels(x, support)).double()
    se = math.sqrt(noise * (1 - noise) / n)
    assert (flipped.mean(dim=1) - noise).abs().max() < 5 * se


def test_samples_are_prefix_stable_across_blocks() -> None:
    d = 5000  # small blocks: SAMPLE_ELEMENTS // d rows each
    task = SparseParity(d, 2, noise=0.2)
    rows = task.block_rows()
    assert rows == SAMPLE_ELEMENTS // d
    support = task.supports(0, 2)
    n = 2 * rows + 7
    chunks = list(task.samples(0, support, n))
    assert [c[0].shape[1] for c in chunks] == [rows, rows, 7]
    x = torch.cat([c[0] for c in chunks], dim=1)
    y = torch.cat([c[1] for c in chunks], dim=1)
    # a shorter request is a prefix of a longer one
    short = list(task.samples(0, support, rows + 3))
    assert torch.equal(torch.cat([c[0] for c in short], dim=1), x[:, : rows + 3])
    assert torch.equal(torch.cat([c[1] for c in short], dim=1), y[:, : rows + 3])
    # replica e alone (first_replica=e) draws what it draws inside the batch
    for e in range(2):
        alone = list(task.samples(0, support[e : e + 1], n, first_replica=e))
        assert torch.equal(torch.cat([c[0] for c in alone], dim=1), x[e : e + 1])
        assert torch.equal(torch.cat([c[1] for c in alone], dim=1), y[e : e + 1])
    assert not torch.equal(x[0], x[1])
    again = list(task.samples(1, support, n))
    assert not torch.equal(again[0][0], chunks[0][0])
