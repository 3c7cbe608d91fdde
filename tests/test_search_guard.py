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


def guarded(m_star: int | None, probes: list[dict], limit: int) -> bool:
    """The guard's contract on a search's probe records: ``m* + 1, + 2, + 4, …`` are probed up
    to the first size every replica passes (or ``limit``), unless ``m*`` itself is that size."""
    sizes = {p["size"]: all(p["outcomes"]) for p in probes}
    if m_star is None or sizes[m_star]:
        return True
    step = 1
    while (size := min(m_star + step, limit)) in sizes:
        if sizes[size] or size == limit:
            return True
        step *= 2
    return False


def test_the_width_search_of_b52_and_c_is_guarded(monkeypatch) -> None:
    """``population_threshold`` (B5.2 and Part C) probes above a loose ``m_p*``: replica 0
    reaches the target from width 40 and the 15 others from 24, so 24 passes with 15 of 16, and
    no size the unguarded search probes (up to 32) passes with all 16."""
    from attnsep.exact.family import FamilyBest
    from attnsep.train import selection_threshold as sel

    def loss(T, q, m_p, d, samples, stream, descent):
        slow = stream == sel.stream_seed(0, 0, "population-threshold")
        reached = m_p >= (40 if slow else 24)
        return FamilyBest(alpha=1.0, loss=0.1 if reached else 0.5, stderr=0.0, uniform=1.0)

    monkeypatch.setattr(sel, "best_law_loss", loss)
    record = sel.population_threshold(64, 2, 1, 16, seed=0, samples=8, m_limit=256, by_law=True)
    sizes = [p["size"] for p in record["probes"]]
    assert record["m_star"] == 24 and {25, 26, 28, 40} <= set(sizes) and max(sizes) == 40
    assert [p["size"] for p in record["probes"] if all(p["outcomes"])] == [40]
    assert guarded(24, record["probes"], 256)


def test_b52s_simulated_search_is_guarded_as_the_real_one() -> None:
    """Every one of 200 simulated searches (``select_width.calibration.simulated_search``) at a
    threshold near the doubling's 2048 keeps the guard's contract; the same latent thresholds
    searched without the guard break it in over a tenth of the searches (so the check can
    fail)."""
    from attnsep.experiments.select_width import calibration as b52

    rng = np.random.default_rng(7)
    found = [b52.simulated_search(2000.0, 0.05, 16, 8192, rng) for _ in range(200)]
    assert all(guarded(m, probes, 8192) for m, probes in found)
    rng = np.random.default_rng(7)
    plain = [b52.simulated_search(2000.0, 0.05, 16, 8192, rng, guard=False) for _ in range(200)]
    assert np.mean([not guarded(m, probes, 8192) for m, probes in plain]) > 0.1
