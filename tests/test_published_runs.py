"""The published stores (``docs/runs/``) hold every job the published pages judge, finished, at
the experiments' current versions: a version bump without a rerun fails here, not silently on
``make claims-page`` or ``make claims-full-page`` (which would compute the missing jobs)."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from attnsep.engine.store import Store
from attnsep.experiments import catalog
from attnsep.report.claims import finished_records, planned_jobs
from attnsep.report.replication import seeds_for

RUNS = Path(__file__).resolve().parents[1] / "docs" / "runs"
ALL = [item["name"] for item in catalog()]
PUBLISHED = [
    # store, preset, master seeds, experiments (as the Makefile's claims targets judge them)
    ("replication.sqlite.gz", "standard", seeds_for(None, None, 5), ALL),
    ("full.sqlite.gz", "full", [0], ALL),
    ("full-seed2.sqlite.gz", "full", [2], ALL),
    ("full-seed1-select-width.sqlite.gz", "full", [1], ["select-width"]),
]


@pytest.mark.parametrize(("name", "preset", "seeds", "experiments"), PUBLISHED)
def test_a_published_store_holds_every_job_it_is_judged_on(
    tmp_path: Path, name: str, preset: str, seeds: list[int], experiments: list[str]
) -> None:
    store = tmp_path / "store.sqlite"
    with gzip.open(RUNS / name) as packed, store.open("wb") as out:
        shutil.copyfileobj(packed, out)
    db = Store(store, write=False)
    try:
        missing = [
            (experiment, seed)
            for seed in seeds
            for experiment, jobs in planned_jobs(experiments, preset, seed).items()
            if len(finished_records(db, experiment, jobs)[0]) < len(jobs)
        ]
    finally:
        db.close()
    assert missing == [], f"{name} lacks jobs of (experiment, master seed) {missing}"
