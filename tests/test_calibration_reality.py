"""SPEC Part E: a criterion's simulated error rates agree with how often real runs reach each
verdict (``Experiment.calibrate`` checked against reality; ``bench/bench_calibration_reality.py``
does the same at the quick preset for several claims, with the pre-registered rates).

A7.4 (head-specialization) at the quick preset's sizes with half its replicas (32 per ``d`` and
series): calibrated on the exploratory master seed 3, as a pre-registration is, then judged on
24 fresh master seeds. The size was chosen as the quick preset's halved because the calibration
alone (before any fresh seed was judged) put its power in between, 0.33 at 100 simulations per
law, so that the comparison could fail either way; the test asserts that it still is. The
simulated rates' intervals include the spread over the laws' redrawn parameters
(``calibration.parameter_spread``), so they are wider than the simulations' Wilson intervals.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from attnsep.engine.jobs import jobs_for
from attnsep.engine.sweep import executor_for, run_into
from attnsep.experiments import base
from attnsep.metrics import stats

NAME = "head-specialization"
SIZES = {"seeds": 32, "seeds_schedule": 32}
EXPLORATORY = 3
SEEDS = range(100, 124)
SIMULATIONS = 100


def run_records(configs: list[base.ExperimentConfig], folder: Path) -> list[list[dict]]:
    """Every job of each of ``configs`` run on two process workers (a CI machine's cores) into
    a store in ``folder``; each config's records together, in order."""
    groups = [jobs_for(NAME, config) for config in configs]
    jobs = [job for group in groups for job in group]
    _, rows, _ = run_into(jobs, folder / "runs.sqlite", executor_for("process", workers=2))
    found = {row["config_hash"]: row for row in rows}
    assert all(found[job.key]["status"] == "done" for job in jobs), [r["error"] for r in rows]
    return [[record for job in group for record in found[job.key]["records"]] for group in groups]


def overlap(a: tuple[float, float] | list[float], b: tuple[float, float] | list[float]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


@pytest.fixture(scope="module")
def outcome(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, list[str]]:
    """The calibration fitted on seed 3, and the verdicts of the fresh seeds."""
    exp = base.get(NAME)
    explored, *fresh = [exp.config("quick", seed=s, **SIZES) for s in (EXPLORATORY, *SEEDS)]
    first, *others = run_records([explored, *fresh], tmp_path_factory.mktemp("runs"))
    rates = exp.calibrate(first, explored, SIMULATIONS)
    verdicts = [
        exp.verdict(records, c)["verdict"] for records, c in zip(others, fresh, strict=True)
    ]
    return rates, verdicts


def test_the_size_is_informative(outcome):
    """The power lies in between, and its interval (Wilson, widened by the spread over the
    redrawn parameters: fitted to one seed of 32 replicas, that spread is wide) excludes at
    least a tenth of [0, 1]."""
    rates, _ = outcome
    low, high = rates["intervals"]["power"]
    assert 0.1 < rates["power"] < 0.9 and high - low < 0.9, rates


@pytest.mark.parametrize(
    ("rate", "verdicts"), [("power", stats.PASSES), ("false_fail", stats.FAILS)]
)
def test_simulated_rate_agrees_with_real_seeds(outcome, rate, verdicts):
    """The share of fresh seeds reaching the verdict, Wilson 95%, overlaps the simulated rate's
    interval (each is about +-0.2 and +-0.1 wide: a gap means the simulator is wrong)."""
    rates, seen = outcome
    k = sum(v in verdicts for v in seen)
    observed = stats.wilson(k, len(seen))
    simulated = rates["intervals"][rate]
    assert overlap(observed, simulated), (rate, f"{k}/{len(seen)}", observed, simulated, seen)
