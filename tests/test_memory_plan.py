"""Every experiment declares its jobs' peak memory; the plan says what the largest jobs need
side by side, and a reproduction that cannot fit is refused before its store exists."""

from __future__ import annotations

import pytest

from attnsep.core import resources
from attnsep.engine.jobs import jobs_for
from attnsep.experiments import base, catalog, load_all
from cli_support import attnsep


def test_every_experiment_declares_a_positive_peak_for_each_job() -> None:
    load_all()
    for item in catalog():
        exp = base.get(item["name"])
        assert exp.peak is not None, f"{exp.name} declares no peak"
        for preset in ("quick", "standard"):
            peaks = [exp.peak(job.config) for job in jobs_for(exp.name, exp.config(preset))]
            assert all(p > 0 for p in peaks), (exp.name, preset)


def test_the_plan_gives_the_memory_of_the_largest_jobs_side_by_side(tmp_path) -> None:
    args = ("--plan", "--json", "--calibration", "0", "--store", str(tmp_path / "s.sqlite"))
    plan = attnsep("reproduce", *args, "--workers", "2").json()
    load_all()
    jobs = {e["experiment"]: jobs_for(e["experiment"], base.get(e["experiment"]).config("quick"))
            for e in plan["experiments"]}  # fmt: skip
    peaks = {name: [base.get(name).peak(j.config) for j in each] for name, each in jobs.items()}
    for e in plan["experiments"]:
        assert e["peak_bytes"] == max(peaks[e["experiment"]])
    two = sorted(p for each in peaks.values() for p in each)[-2:]
    memory = plan["memory"]
    assert memory["running"] == 2 and memory["fits"]
    assert memory["bytes"] == pytest.approx(sum(two) + 2 * resources.BASELINE_BYTES)
    one = attnsep("reproduce", *args, "--executor", "inline").json()["memory"]
    assert one["running"] == 1 and one["bytes"] == pytest.approx(
        max(two) + resources.BASELINE_BYTES
    )
    assert not (tmp_path / "s.sqlite").exists()


def test_a_reproduction_that_cannot_fit_is_refused_before_its_store_exists(
    tmp_path, monkeypatch
) -> None:
    monkeypatch.setattr(resources, "available_memory", lambda: resources.BASELINE_BYTES)
    store, out = tmp_path / "s.sqlite", tmp_path / "report"
    args = ("--only", "one-step", "--store", str(store), "--out", str(out), "--quiet")
    refused = attnsep("reproduce", *args)
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.startswith("error: 2 jobs side by side (a one-step job the largest)")
    assert "lower the preset or the workers (--workers)" in refused.stderr
    assert refused.stderr.count("\n") == 1 and not store.exists() and not out.exists()
    plan = attnsep("reproduce", *args, "--plan", "--calibration", "0")
    assert plan.returncode == 0 and "the run would be refused" in plan.stdout
