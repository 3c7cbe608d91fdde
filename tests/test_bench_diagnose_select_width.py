"""The guard of B5.2's diagnosis (bench/diagnose_select_width.py): a loose threshold gets probes
above it until one passes with every replica, which closes every bootstrap draw; a tight one
is left as searched."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from attnsep.metrics import stats
from attnsep.train.search import probe_matrix, smallest_passing

SCRIPT = Path(__file__).resolve().parent.parent / "bench" / "diagnose_select_width.py"
SPEC = importlib.util.spec_from_file_location("diagnose_select_width", SCRIPT)
assert SPEC is not None and SPEC.loader is not None
diagnosis = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(diagnosis)

TARGET = 0.9


def replicas(latent: list[int]):
    """``evaluate(size)``: replica ``i`` passes when ``latent[i] <= size``."""
    return lambda size: np.asarray(latent) <= size


def draws(probes) -> np.ndarray:
    sizes, outcomes = probe_matrix([p.as_record() for p in probes])
    return stats.threshold_draws(sizes, outcomes, TARGET, resamples=400, seed=1)[1]


def test_a_loose_threshold_is_guarded_until_every_replica_passes() -> None:
    evaluate = replicas([2000] * 15 + [2050])  # 15 of 16 pass from 2000, all from 2050
    plain_star, plain = smallest_passing(evaluate, TARGET, 2, 8192)
    star, guarded = diagnosis.guarded(evaluate, TARGET, 2, 8192)
    assert plain_star == star == 2000
    assert diagnosis.is_loose({"m_star": star, "probes": [p.as_record() for p in plain]})
    assert [p.size for p in guarded if p.size > 2048] == [2064]  # 2001, 2002, … 2032 fail
    assert guarded[-1].successes == guarded[-1].trials == 16
    # Two or more resampled copies of the slow replica (about 26% of draws) fail at 2048, the
    # largest size searched: unbounded as searched, at most 2064 with the guard.
    assert 0.15 < np.isinf(draws(plain)).mean() < 0.4
    assert np.isfinite(draws(guarded)).all() and draws(guarded).max() == 2064


def test_a_tight_threshold_is_left_as_searched() -> None:
    evaluate = replicas([300] * 16)
    star, plain = smallest_passing(evaluate, TARGET, 2, 8192)
    assert diagnosis.guarded(evaluate, TARGET, 2, 8192) == (star, plain)
    assert not diagnosis.is_loose({"m_star": star, "probes": [p.as_record() for p in plain]})
