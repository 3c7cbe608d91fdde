"""This machine's speed against the published timings' (``engine.host_speed``) and the plan that
scales the published timings by it."""

from __future__ import annotations

import json
import math

import pytest

from attnsep.engine import calibration, host_speed
from attnsep.engine import plan as planning
from attnsep.engine import published as published_runs
from attnsep.engine.jobs import Job, jobs_for
from attnsep.experiments import base


def entry(experiment: str, seconds: float, **config) -> dict:
    return {"experiment": experiment, "config": config, "seconds": seconds}


def timing_at(
    factor: float,
    sources: dict[str, str] | None = None,
    calls: list | None = None,
    factors: dict[str, float] | None = None,
):
    """A calibration that times each job at ``factor`` (``factors``: another by experiment)
    times the published seconds of its experiment's reference job (``sources``: another
    outcome by experiment)."""

    def fake(groups, budget, workers):
        if calls is not None:
            calls.append((sorted(groups), budget, workers))
        costs = {}
        for name, [job] in groups.items():
            source = (sources or {}).get(name, calibration.TIMED)
            seconds = (factors or {}).get(name, factor) * job.config["published"]
            costs[job.key] = calibration.JobCost(job, source, seconds)
        return calibration.Calibration(costs, 1.0, {})

    return fake


def reference_set(factor_of_seconds: float = 1.0) -> dict[str, dict]:
    """Two published jobs per reference experiment, one nearer the target than the other; each
    config carries its published seconds so the fake calibration can scale them."""
    out = {}
    for i, name in enumerate(host_speed.REFERENCE):
        for seconds in (0.45 + 0.01 * i, 3.0):
            s = seconds * factor_of_seconds
            out[f"{name}-{seconds}"] = entry(name, s, published=s)
    return out


def test_each_reference_experiment_times_its_published_job_nearest_the_target():
    published = reference_set()
    published["other"] = entry("one-step", 0.5, published=0.5)  # not a reference experiment
    published["zero"] = entry("kparity-steps", 0.0, published=0.0)  # no timing to scale
    found = host_speed.reference_jobs(published)
    assert list(found) == list(host_speed.REFERENCE)
    for i, (name, (job, seconds)) in enumerate(found.items()):
        assert job == Job(name, {"published": 0.45 + 0.01 * i})
        assert seconds == pytest.approx(0.45 + 0.01 * i)
    # by the ratio, not the difference: 0.25 s is nearer 0.5 s than 1.1 s is
    pair = {"a": entry("select-width", 0.25, n=1), "b": entry("select-width", 1.1, n=2)}
    assert host_speed.reference_jobs(pair)["select-width"][0].config == {"n": 1}


def test_the_speed_is_the_median_of_the_timed_jobs_ratios():
    calls: list = []
    speed = host_speed.host_speed(reference_set(), timing_at(1.7, calls=calls))
    assert speed == host_speed.HostSpeed(pytest.approx(1.7), len(host_speed.REFERENCE), 1.0)
    assert calls == [(sorted(host_speed.REFERENCE), 0.0, 0)]  # warm seconds, no budget
    # jobs capped, failed or guessed say nothing of the speed; none timed: no speed
    odd = {"select-width": calibration.CAPPED, "kparity-steps": calibration.FAILED}
    speed = host_speed.host_speed(reference_set(), timing_at(2.0, odd))
    assert speed is not None and speed.jobs == len(host_speed.REFERENCE) - 2
    every = {name: calibration.CAPPED for name in host_speed.REFERENCE}
    assert host_speed.host_speed(reference_set(), timing_at(2.0, every)) is None
    assert host_speed.host_speed({}, timing_at(2.0)) is None


def test_the_median_is_not_moved_by_one_slow_job():
    slow = {host_speed.REFERENCE[0]: 50.0}  # one job beside a burst of other work
    speed = host_speed.host_speed(reference_set(), timing_at(1.2, factors=slow))
    assert speed.factor == pytest.approx(1.2)


def planned_jobs() -> list[Job]:
    """Select-convergence's quick jobs."""
    return jobs_for("select-convergence", base.get("select-convergence").config("quick"))


def published_file(tmp_path, seconds_each: float, jobs: list[Job]):
    """Published timings holding ``jobs`` at ``seconds_each`` and the reference set."""
    held = reference_set()
    held.update(
        {j.key: entry(j.experiment, seconds_each, **j.config) for j in jobs}  # the same configs
    )
    path = tmp_path / "published.json"
    path.write_text(json.dumps({"worker_startup_seconds": 2.0, "jobs": held}))
    return path


def test_a_plan_prices_the_published_timings_in_this_machines_seconds(tmp_path, monkeypatch):
    jobs = planned_jobs()
    each = 2 * host_speed.WORTH / len(jobs)  # over the threshold in all
    monkeypatch.setattr(published_runs, "PUBLISHED_TIMINGS", published_file(tmp_path, each, jobs))
    groups = {"select-convergence": jobs}
    plan = planning.make_plan(groups, None, "process", 2, timing=timing_at(1.5))
    assert plan.speed is not None and plan.speed.factor == pytest.approx(1.5)
    assert all(c.source == planning.PUBLISHED for c in plan.to_run)
    assert [c.seconds for c in plan.to_run] == pytest.approx([1.5 * each] * len(jobs))
    assert plan.as_dict()["host_speed"] == pytest.approx(1.5)
    assert plan.startup == 1.0  # measured here on the way, not the published 2.0
    line = next(x for x in planning.summary_lines(plan) if "machine's speed" in x)
    assert line.startswith("published timings scaled by this machine's speed: 1.50x their")
    # no calibration allowed: the published seconds as they are, nothing timed
    calls: list = []
    fake = timing_at(1.5, calls=calls)
    unscaled = planning.make_plan(groups, None, "process", 2, budget=0, timing=fake)
    assert unscaled.speed is None and calls == []
    assert [c.seconds for c in unscaled.to_run] == pytest.approx([each] * len(jobs))
    assert unscaled.as_dict()["host_speed"] is None and unscaled.startup == 2.0
    # a Ray cluster's nodes are not this machine: its plan keeps the published seconds
    on_ray = planning.make_plan(groups, None, "ray", 2, timing=fake)
    assert on_ray.speed is None and calls == []
    assert not any("machine's speed" in x for x in planning.summary_lines(unscaled))


def test_a_short_plan_is_not_worth_timing_the_reference_jobs(tmp_path, monkeypatch):
    jobs = planned_jobs()
    each = 0.9 * host_speed.WORTH / len(jobs)
    monkeypatch.setattr(published_runs, "PUBLISHED_TIMINGS", published_file(tmp_path, each, jobs))
    calls: list = []
    plan = planning.make_plan(
        {"select-convergence": jobs}, None, "process", 2, timing=timing_at(1.5, calls=calls)
    )
    assert plan.speed is None and calls == []
    assert math.fsum(c.seconds for c in plan.to_run) == pytest.approx(0.9 * host_speed.WORTH)


def test_the_reference_jobs_are_current_configs_of_their_experiments():
    """Each reference job runs as its experiment is today: its config is the experiment's
    (every field, valid), so timing it times that experiment's work."""
    found = host_speed.reference_jobs(published_runs.published_timings())
    assert list(found) == list(host_speed.REFERENCE)
    for name, (job, seconds) in found.items():
        config = base.parse_config(base.get(name).config_type, job.config, name)
        assert config.model_dump(mode="json") == job.config
        assert 0.1 < seconds < 2.5  # near the target: quick to time, long enough to measure


@pytest.mark.slow
def test_the_reference_jobs_time_here_as_a_plan_times_them():
    """The real calibration: each reference job runs and is timed (none fails or is capped)."""
    speed = host_speed.host_speed(published_runs.published_timings(), calibration.calibrate)
    assert speed is not None and speed.jobs == len(host_speed.REFERENCE)
    assert 0.05 < speed.factor < 20  # any machine from a fast desktop to a crowded laptop
