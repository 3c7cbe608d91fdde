"""The published stores (``docs/runs/``) hold every job the published pages judge, finished, at
the experiments' current versions: a version bump without a rerun fails here, not silently on
``make claims-page`` or ``make claims-full-page`` (which would compute the missing jobs)."""

from __future__ import annotations

import gzip
import shutil
import sqlite3
from pathlib import Path

import pytest

from attnsep.experiments import catalog
from attnsep.report.claims import planned_jobs
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
    with sqlite3.connect(store) as db:
        done = {key for (key,) in db.execute("select config_hash from jobs where status = 'done'")}
    missing = [
        (experiment, seed)
        for seed in seeds
        for experiment, jobs in planned_jobs(experiments, preset, seed).items()
        if any(job.key not in done for job in jobs)
    ]
    assert missing == [], f"{name} lacks jobs of (experiment, master seed) {missing}"
