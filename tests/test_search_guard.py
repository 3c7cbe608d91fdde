"""The guard of the threshold search (``search.smallest_passing(..., guard=True)``): a loose
answer gets probes above it until one passes with every replica, which keeps every bootstrap
draw within the probes; a tight answer, or a search without the guard, is left as searched."""

from __future__ import annotations

import numpy as np
import pytest

from attnsep.metrics import stats
from attnsep.train.search import loose, probe_matrix, smallest_passing

TARGET = 0.9


def replicas(latent: list[int]):
    """``evaluate(size)``: replica ``i`` passes when ``latent[i] <= size``."""
    return lambda size: np.asarray(latent) <= size


def draws(probes) -> np.ndarray:
    """400 bootstrap draws of the threshold over the replicas (``stats.threshold_draws``)."""
    sizes, outcomes = probe_matrix([p.as_record() for p in probes])
    return stats.threshold_draws(sizes, outcomes, TARGET, resamples=400, seed=1)[1]


def passed_by_all(probes) -> list[int]:
    return [p.size for p in probes if p.successes == p.trials]


def test_a_loose_answer_is_guarded_until_every_replica_passes() -> None:
    evaluate = replicas([2000] * 15 + [2050])  # 15 of 16 pass from 2000, all 16 from 2050
    star, plain = smallest_passing(evaluate, TARGET, 2, 8192)
    guarded_star, guarded = smallest_passing(evaluate, TARGET, 2, 8192, guard=True)
    assert star == guarded_star == 2000 and loose(star, passed_by_all(plain))
    added = sorted({p.size for p in guarded} - {p.size for p in plain})
    assert added == [2001, 2002, 2004, 2008, 2032, 2064]  # 2016 and 2048 were probed already
    assert passed_by_all(guarded) == [2064] and not loose(star, [star, *passed_by_all(guarded)])
    # A draw holding two or more copies of the slow replica (1 - P(0) - P(1) = 26% of them)
    # fails at 2048, the largest size searched: past every probe, unless the guard is there.
    share = np.isinf(draws(plain)).mean()
    assert abs(share - 0.264) < 4 * np.sqrt(0.264 * 0.736 / 400)
    assert np.isfinite(draws(guarded)).all() and draws(guarded).max() == 2064


@pytest.mark.parametrize("latent", [[300] * 16, [5] * 16, [2] * 16])
def test_a_tight_answer_is_left_as_searched(latent: list[int]) -> None:
    evaluate = replicas(latent)
    star, plain = smallest_passing(evaluate, TARGET, 2, 8192)
    assert not loose(star, passed_by_all(plain))
    assert smallest_passing(evaluate, TARGET, 2, 8192, guard=True) == (star, plain)


def test_the_guard_stops_at_the_limit() -> None:
    evaluate = replicas([100] * 15 + [10_000])  # the slow replica passes nowhere below 10_000
    star, probes = smallest_passing(evaluate, TARGET, 2, 200, guard=True)
    assert star == 100 and probes[-1].size == 200 and probes[-1].successes == 15
    assert smallest_passing(evaluate, TARGET, 2, 200, guard=True) == (star, probes)


def test_without_a_passing_size_the_guard_has_nothing_to_guard() -> None:
    evaluate = replicas([500] * 16)
    assert smallest_passing(evaluate, TARGET, 2, 256, guard=True) == smallest_passing(
        evaluate, TARGET, 2, 256
    )
    assert not loose(None, [])
