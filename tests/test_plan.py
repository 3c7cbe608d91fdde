"""``--plan``: job counts, stored jobs, estimates from the store or a calibration, nothing run."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import signal

import pytest

from attnsep.engine import calibration, cost_model
from attnsep.engine import plan as planning
from attnsep.engine import published as published_runs
from attnsep.engine.jobs import expand_grid, jobs_for, key_at
from attnsep.engine.store import Store
from attnsep.engine.sweep import run_sweep
from attnsep.experiments import base
from attnsep.report.claims import planned_jobs
from engine_support import TINY, attnsep, file_digest, one_line, raw_rows

TINY_SET = [a for k, v in TINY.items() for a in ("--set", f"{k}={json.dumps(v)}")]


def tiny_jobs():
    return [
        j for c in expand_grid("one-step", "quick", dict(TINY), {}) for j in jobs_for("one-step", c)
    ]


def old_version_row(job, seconds: float) -> dict:
    """A finished row of ``job``'s config from another version of its experiment (another
    hash): it prices the job without holding it."""
    return {
        "experiment": job.experiment,
        "config_hash": hashlib.sha256(f"{job.key}{seconds}".encode()).hexdigest()[:24],
        "config": job.config,
        "seed": job.seed,
        "status": "done",
        "started": 0.0,
        "finished": seconds,
        "seconds": seconds,
        "versions": {},
        "git_commit": None,
        "device": "cpu",
        "host": "elsewhere",
        "records": [],
        "error": None,
    }


def sweep_plan(store, *extra: str) -> dict:
    result = attnsep(
        "sweep", "one-step", *TINY_SET, "--store", str(store), "--plan", "--json", *extra
    )
    assert result.returncode == 0, result.stderr
    return result.json()


def no_computing(monkeypatch):
    """Make every experiment's ``run`` fail the test if it is called in this process."""

    def boom(config):
        raise AssertionError("--plan computed a job")

    for name, exp in list(base.REGISTRY.items()):
        monkeypatch.setitem(base.REGISTRY, name, dataclasses.replace(exp, run=boom))


def no_calibration(*args, **kwargs):
    raise AssertionError("calibrated although the store had the timings")


# ---------------------------------------------------------------- the schedule


@pytest.mark.parametrize(
    ("seconds", "workers", "wall"),
    [
        ([4, 1, 1, 1, 1], 2, 4),  # the long job on one worker, the four short on the other
        ([3, 3, 2, 2, 2], 2, 7),  # in order: 3|3, then 2 on each, then the last 2
        ([2, 2, 4], 2, 6),  # in order; the plan hands them over longest first (4)
        ([1, 2, 3], 1, 6),  # one worker: the sum
        ([5, 1], 8, 5),  # more workers than jobs: the longest job
        ([], 4, 0),
    ],
)
def test_wall_is_the_in_order_schedule_on_the_workers(seconds, workers, wall):
    assert planning.list_schedule(seconds, workers) == wall


def test_a_sweep_runs_its_jobs_longest_first_by_the_plan(tmp_path, monkeypatch):
    """The order follows the plan's estimates, not the sizes: the small job, priced longer by
    the store's rows of an older version, runs first; the wall estimate assumes that order."""
    path = tmp_path / "s.sqlite"
    small, large = tiny_jobs()
    store = Store(path)
    for job, seconds in ((small, 50.0), (large, 5.0)):
        assert store.put(old_version_row(job, seconds))
    exp, order = base.get("one-step"), []

    def recorded(config):
        order.append(config.d_values[0])
        return exp.run(config)

    monkeypatch.setitem(base.REGISTRY, "one-step", dataclasses.replace(exp, run=recorded))
    assert run_sweep([large, small], store, "inline").computed == 2
    store.close()
    assert order == [small.config["d_values"][0], large.config["d_values"][0]]
    assert planning.list_schedule(sorted([2.0, 2.0, 4.0], reverse=True), 2) == 4.0  # not 6


# ---------------------------------------------------------------- stored jobs and timings


def test_plan_of_a_stored_sweep_counts_it_and_computes_nothing(tmp_path, monkeypatch):
    path = tmp_path / "s.sqlite"
    store = Store(path)
    assert run_sweep(tiny_jobs(), store, "inline").computed == 2
    seconds = sorted(r["seconds"] for r in store.rows())
    store.close()
    before, rows = file_digest(path), raw_rows(path)
    no_computing(monkeypatch)
    monkeypatch.setattr(planning, "calibrate", no_calibration)

    found = sweep_plan(path, "--executor", "inline")
    assert (found["jobs"], found["stored"], found["to_run"]) == (2, 2, 0)
    assert found["cpu_seconds"] == 0 and found["wall_seconds"] == 0
    assert found["stored_cpu_seconds"] == pytest.approx(sum(seconds))
    assert found["workers"] == 1 and found["rough"] is False
    assert found["startup_seconds"] == published_runs.published_startup()  # no job to run: wall 0
    assert raw_rows(path) == rows and file_digest(path) == before


def test_estimate_uses_the_stored_seconds_of_the_same_config(tmp_path, monkeypatch):
    """A row of the same experiment and config from an older version of the experiment (another
    hash) gives its seconds; the job itself is still to run."""
    path = tmp_path / "s.sqlite"
    small, large = tiny_jobs()
    store = Store(path)
    for job, seconds in ((small, 7.0), (large, 30.0), (large, 50.0)):
        assert store.put(old_version_row(job, seconds))
    store.close()
    monkeypatch.setattr(planning, "calibrate", no_calibration)
    no_computing(monkeypatch)

    found = sweep_plan(path, "--executor", "process", "--workers", "2")
    (exp,) = found["experiments"]
    assert (exp["jobs"], exp["stored"], exp["to_run"], exp["sources"]) == (2, 0, 2, {"store": 2})
    assert found["cpu_seconds"] == pytest.approx(7.0 + 40.0)  # 40: the median of 30 and 50
    startup = published_runs.published_startup()  # each worker's, published beside the timings
    assert found["wall_seconds"] == pytest.approx(startup + 40.0)  # one job on each worker
    assert found["rough"] is False
    found = sweep_plan(path, "--executor", "inline")
    assert found["wall_seconds"] == pytest.approx(startup + 47.0)


def test_a_stored_row_from_before_the_cost_changed_prices_nothing(tmp_path, monkeypatch):
    """An experiment whose version 3 costs otherwise than version 1 (``priced_from=3``): its
    config's row at version 1 (e.g. fewer steps) no longer prices the job, its row at version
    3 does; the job (version 4) is still to run."""
    exp = dataclasses.replace(base.get("one-step"), version=4, priced_from=3)
    monkeypatch.setitem(base.REGISTRY, "one-step", exp)
    small, large = tiny_jobs()
    older, newer = old_version_row(small, 7.0), old_version_row(large, 30.0)
    older["config_hash"] = key_at("one-step", 1, small.config)
    newer["config_hash"] = key_at("one-step", 3, large.config)
    store = Store(tmp_path / "s.sqlite")
    assert store.put(older) and store.put(newer)
    timings = planning.stored_timings(store, ["one-step"])
    store.close()
    assert list(timings.values()) == [30.0]
    assert planning.config_text(large.config) in {text for _, text in timings}


def test_reproduce_plan_counts_jobs_per_experiment_for_each_preset(tmp_path, monkeypatch):
    """Two of head-specialization's quick jobs are stored: the table says so, per experiment."""
    path = tmp_path / "s.sqlite"
    heads = jobs_for("head-specialization", base.get("head-specialization").config("quick"))
    store = Store(path)
    run_sweep(heads[:2], store, "inline")
    store.close()
    before = file_digest(path)
    no_computing(monkeypatch)
    monkeypatch.setattr(published_runs, "PUBLISHED_TIMINGS", tmp_path / "none.json")
    names = ["one-step", "head-specialization"]
    for preset in base.PRESETS:
        result = attnsep(
            "reproduce", f"--{preset}", "--only", ",".join(names), "--store", str(path),
            "--plan", "--calibration", "0", "--executor", "inline",
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        counts = {n: len(jobs) for n, jobs in planned_jobs(names, preset).items()}
        stored = {"one-step": 0, "head-specialization": 2 if preset == "quick" else 0}
        for name in names:
            row = re.search(rf"│ {name}\s+│\s+(\d+) │\s+(\d+) │\s+(\d+) │", result.stdout)
            assert row is not None, result.stdout
            assert tuple(map(int, row.groups())) == (
                counts[name],
                stored[name],
                counts[name] - stored[name],
            )
        assert "unknown" in result.stdout  # no calibration and no timings for the rest
        assert "wall estimate on 1 inline worker: unknown" in result.stdout
        if preset == "quick":
            assert "the 2 stored jobs took" in result.stdout
    assert file_digest(path) == before


def test_published_timings_come_after_the_store_and_before_the_calibration(tmp_path, monkeypatch):
    """A job whose hash the published timings hold is estimated from them (no calibration);
    the store's own timing of the same job wins over them; another size of the experiment is
    scaled from them by the cost model."""
    small, large = tiny_jobs()
    published = tmp_path / "published.json"
    source = tmp_path / "source.sqlite"
    store = Store(source)
    run_sweep([small], store, "inline")
    assert published_runs.write_published_timings([store], published, only=["select-width"]) == 0
    assert published_runs.write_published_timings([store], published, only=["one-step"]) == 1
    store.close()
    jobs = json.loads(published.read_text())["jobs"]
    assert list(jobs) == [small.key] and jobs[small.key]["config"] == small.config
    seconds = jobs[small.key]["seconds"]
    assert jobs[small.key]["experiment"] == "one-step" and seconds >= 0
    monkeypatch.setattr(published_runs, "PUBLISHED_TIMINGS", published)
    monkeypatch.setattr(planning, "calibrate", no_calibration)
    plan = planning.make_plan({"one-step": [small, large]}, None, "inline", 1)
    first, second = plan.to_run
    assert (first.source, first.seconds) == (planning.PUBLISHED, seconds)
    ratio = (
        cost_model.work("one-step", large.config)[""]
        / cost_model.work("one-step", small.config)[""]
    )
    assert second.source == planning.MODEL  # one timed job: floor + proportional to the work
    assert second.seconds == pytest.approx(seconds * (1 + ratio))
    found = planning.make_plan({"one-step": [small]}, Store(source), "inline", 1)
    assert [c.source for c in found.experiments[0].costs] == [calibration.STORED]


def test_the_cost_model_replaces_the_calibrations_guesses(monkeypatch, tmp_path):
    """Jobs the calibration capped or guessed get the model fitted on the jobs it timed; a
    capped job at least its cap."""
    monkeypatch.setattr(published_runs, "PUBLISHED_TIMINGS", tmp_path / "none.json")
    jobs = d_jobs(64, 256, 1024, 4096)
    work = [cost_model.work("one-step", j.config)[""] for j in jobs]

    def fake(groups, budget, workers):
        (found,) = groups.values()
        sources = ["timed", "timed", "capped", "guessed"]
        seconds = [1.0, 2.0, 3.0, 2.0]
        costs = [
            calibration.JobCost(j, s, t) for j, s, t in zip(found, sources, seconds, strict=True)
        ]
        return calibration.Calibration({c.job.key: c for c in costs}, 0.5, {})

    plan = planning.make_plan({"one-step": jobs}, None, "inline", 1, timing=fake)
    costs = plan.experiments[0].costs
    rate = (2.0 - 1.0) / work[1]
    assert [c.source for c in costs] == ["timed", "timed", "model", "model"]
    assert costs[2].seconds == pytest.approx(max(3.0, 1.0 + rate * work[2]))
    assert costs[3].seconds == pytest.approx(1.0 + rate * work[3])
    assert [c.seconds for c in costs[:2]] == [1.0, 2.0]


# ---------------------------------------------------------------- calibration


def test_calibration_times_jobs_here_when_nothing_else_has(tmp_path, monkeypatch):
    monkeypatch.setattr(published_runs, "PUBLISHED_TIMINGS", tmp_path / "none.json")
    found = planning.make_plan({"one-step": tiny_jobs()}, None, "inline", 1, budget=30).as_dict()
    (exp,) = found["experiments"]
    assert (exp["jobs"], exp["stored"], exp["to_run"]) == (2, 0, 2)
    assert exp["sources"] == {"timed": 2} and found["rough"] is False
    assert 0 < found["cpu_seconds"] < 60 and 0 < found["startup_seconds"] < 300
    assert found["wall_seconds"] == pytest.approx(found["startup_seconds"] + found["cpu_seconds"])


def test_the_published_runs_scale_to_new_sizes_and_no_store_is_created(tmp_path):
    """The tiny sizes are not in the published runs; other sizes of one-step are."""
    path = tmp_path / "none" / "s.sqlite"
    found = sweep_plan(path, "--executor", "inline")
    (exp,) = found["experiments"]
    assert exp["sources"] == {"model": 2}
    assert found["startup_seconds"] == published_runs.published_startup() > 0
    assert 0 < found["cpu_seconds"] < 60
    assert not path.parent.exists()


def test_the_timer_stops_a_job_past_its_cap_and_reports_a_dead_child():
    small, large = d_jobs(16, 16384)
    timer = calibration.Timer()
    try:
        assert 0 < timer.seconds(small, 120) < 60 and timer.startup > 0
        os.kill(timer.child.pid, signal.SIGKILL)  # as the out-of-memory killer would
        timer.child.join()
        with pytest.raises(calibration.CalibrationFailed, match="running a job of one-step"):
            timer.seconds(small, 120)
        assert timer.child is None
        assert timer.seconds(large, 0.05) is None and timer.child is None  # a new child, stopped
    finally:
        timer.close()


class FakeTimer:
    """Stands in for the child process: each job's times, run after run (None: past the cap;
    a string: the job failed after that many seconds)."""

    def __init__(self, seconds: dict[int, list[float | str | None]]) -> None:
        self.by_d, self.asked, self.failed = seconds, [], False

    def seconds(self, job, cap):
        d = job.config["d_values"][0]
        self.asked.append((d, cap))
        answer = self.by_d[d].pop(0)
        self.failed = isinstance(answer, str)
        return float(answer) if self.failed else answer


def d_jobs(*ds: int):
    config = base.get("one-step").config("quick", d_values=list(ds), series=["fixed"])
    return jobs_for("one-step", config)


def by_d(costs) -> dict:
    return {c.job.config["d_values"][0]: (c.source, c.seconds) for c in costs}


def test_calibration_times_smallest_first_until_the_budget_then_guesses():
    jobs = d_jobs(4096, 64, 1024, 256)  # submitted out of order: timed by size
    timer = FakeTimer({64: [1.2, 0.1], 256: [0.3], 1024: [0.9], 4096: [5.0]})
    costs = calibration.calibrate_experiment(jobs, timer, budget=1.0, cap=3.0, workers=1)
    # the first job cold (cap doubled), then warm; 0.1 + 0.3 + 0.9 spend the budget
    assert timer.asked == [(64, 6.0), (64, 3.0), (256, 3.0), (1024, 3.0)]
    assert [c.job for c in costs] == jobs  # in submission order
    assert by_d(costs) == {
        4096: ("guessed", 0.9 + 1.1),  # the largest timed job, + the one-off 1.1 s: first job
        64: ("timed", 0.1),
        1024: ("timed", 0.9),
        256: ("timed", 0.3),
    }
    two = calibration.calibrate_experiment(
        jobs, FakeTimer({64: [1.2, 0.1], 256: [0.3], 1024: [0.9]}), 1.0, 3.0, workers=2
    )
    assert by_d(two)[64] == ("timed", pytest.approx(1.2))  # each worker's first job pays it
    assert by_d(two)[256] == ("timed", 0.3)


def test_a_job_past_the_cap_is_counted_at_the_cap_and_bounds_the_larger_ones():
    jobs = d_jobs(64, 256, 1024)
    timer = FakeTimer({64: [4.0], 256: [None], 1024: [1.0]})
    costs = calibration.calibrate_experiment(jobs, timer, budget=10.0, cap=3.0, workers=1)
    assert timer.asked == [(64, 6.0), (256, 3.0)]  # 4.0 > cap: the cold run is not repeated
    assert [(c.source, c.seconds) for c in costs] == [
        ("timed", 4.0),
        ("capped", 3.0),
        ("guessed", 4.0),  # the largest timed job
    ]
    timer = FakeTimer({64: [None], 256: [1.0]})
    costs = calibration.calibrate_experiment(jobs[:2], timer, budget=10.0, cap=3.0, workers=1)
    assert [(c.source, c.seconds) for c in costs] == [("capped", 6.0), ("guessed", 6.0)]


def test_after_a_failed_job_the_rest_of_its_experiment_is_unknown():
    jobs = d_jobs(64, 256, 1024)
    timer = FakeTimer({64: [0.5, 0.4], 256: ["0.01"]})
    costs = calibration.calibrate_experiment(jobs, timer, budget=10.0, cap=3.0, workers=1)
    assert [(c.source, c.seconds) for c in costs] == [
        ("timed", pytest.approx(0.5)),  # 0.4 warm + 0.1 one-off (its first job)
        ("failed", 0.01),
        ("unknown", None),
    ]
    plan = planning.Plan(
        [planning.ExperimentPlan("one-step", costs)], "inline", 1, 1.0, {"one-step": "boom"}
    )
    assert plan.cpu is None and planning.table_rows(plan)[0][4:] == (
        "unknown",
        "timed 1, failed 1, unknown 1",
    )
    assert "one-step: a job failed in the calibration (boom)" in planning.summary_lines(plan)[1]


def test_size_orders_configs_by_the_product_of_their_numbers():
    small, large = (base.get("one-step").config("quick", d_values=[d]) for d in (64, 4096))
    assert calibration.size(small.model_dump()) < calibration.size(large.model_dump())
    assert calibration.size({"a": True, "b": "x", "c": None}) == 0


def test_the_table_marks_rough_and_unknown_estimates():
    jobs = d_jobs(64, 256)
    cost = calibration.JobCost
    plan = planning.Plan(
        [
            planning.ExperimentPlan(
                "one-step", [cost(jobs[0], "timed", 2.0), cost(jobs[1], "guessed", 70)]
            ),
            planning.ExperimentPlan("other", [cost(jobs[0], "stored", 5.0)]),
        ],
        "process",
        2,
        startup=3.0,
    )
    rows = planning.table_rows(plan)
    assert rows[0] == ("one-step", "2", "0", "2", "≳ 1 min 12 s", "timed 1, guessed 1")
    assert rows[1] == ("other", "1", "1", "0", "0.0 s", "-")
    assert rows[-1][:5] == ("total", "3", "1", "2", "≳ 1 min 12 s")
    assert plan.wall == 73 and plan.rough and plan.stored_cpu == 5
    lines = planning.summary_lines(plan)
    assert "≳ 1 min 13 s" in lines[0] and "the 1 stored jobs took 5.0 s" in lines[1]
    assert not any("far too low" in line for line in lines)  # 1 of 2 jobs guessed: not most
    plan.experiments[0].costs[0] = cost(jobs[0], "capped", 2.0)
    assert "2 of the 2 jobs to run are capped or guessed" in planning.summary_lines(plan)[-2]
    unknown = planning.Plan(
        [planning.ExperimentPlan("one-step", [cost(jobs[0], "unknown", None)])], "inline", 1
    )
    assert unknown.cpu is None and unknown.wall is None
    assert planning.table_rows(unknown)[0][4] == "unknown"


def test_negative_calibration_is_a_one_line_error(tmp_path):
    code, out, err = attnsep(
        "sweep", "one-step", "--store", str(tmp_path / "s.sqlite"), "--plan", "--calibration", "-1"
    )
    assert code == 2 and out == "" and one_line(err) and "calibration must be" in err
    assert not (tmp_path / "s.sqlite").exists()


def test_a_plan_adds_the_published_start_up_of_a_worker(monkeypatch, tmp_path):
    """A small run is mostly fixed cost: the plan adds each worker's published start-up (the
    process, torch and the experiments loaded), which a job's own seconds leave out."""
    published, source = tmp_path / "published.json", tmp_path / "source.sqlite"
    (small,) = d_jobs(64)
    store = Store(source)
    run_sweep([small], store, "inline")
    published_runs.write_published_timings([store], published, startup=4.25)
    published_runs.write_published_timings([store], published)  # keeps the start-up it holds
    store.close()
    held = json.loads(published.read_text())
    assert held["worker_startup_seconds"] == 4.25 and list(held["jobs"]) == [small.key]
    monkeypatch.setattr(published_runs, "PUBLISHED_TIMINGS", published)
    plan = planning.make_plan({"one-step": [small]}, None, "process", 2, budget=0)
    assert plan.startup == 4.25
    assert plan.wall == pytest.approx(4.25 + held["jobs"][small.key]["seconds"], abs=1e-3)
    assert plan.as_dict()["startup_seconds"] == 4.25


def test_a_jobs_seconds_leave_out_the_workers_loading(monkeypatch):
    """``execute`` loads the experiment (torch, the modules) before its clock starts."""
    import time

    from attnsep.engine import executors

    loaded = executors.load
    slow = {"first": True}

    def slow_first_load(name):
        if slow.pop("first", False):
            time.sleep(1.0)
        return loaded(name)

    monkeypatch.setattr(executors, "load", slow_first_load)
    (job,) = tiny_jobs()[:1]
    row = executors.execute(job)
    assert row["status"] == "done" and row["seconds"] < 1.0


def test_publishing_with_replace_retires_an_experiments_old_timings(tmp_path):
    published, source = tmp_path / "published.json", tmp_path / "source.sqlite"
    (small,) = d_jobs(64)
    store = Store(source)
    run_sweep([small], store, "inline")
    stale = {"experiment": "one-step", "config": {"old": 1}, "seconds": 99.0}
    other = {"experiment": "select-width", "config": {"old": 2}, "seconds": 5.0}
    published.write_text(json.dumps({"jobs": {"stale": stale, "other": other}}))
    published_runs.write_published_timings([store], published, only=["one-step"])
    assert set(json.loads(published.read_text())["jobs"]) == {"stale", "other", small.key}
    published_runs.write_published_timings([store], published, only=["one-step"], replace=True)
    store.close()
    assert set(json.loads(published.read_text())["jobs"]) == {"other", small.key}


def test_a_job_timed_again_in_a_new_version_replaces_the_old_versions_timing(tmp_path):
    published, source = tmp_path / "published.json", tmp_path / "source.sqlite"
    (small,) = d_jobs(64)
    store = Store(source)
    run_sweep([small], store, "inline")
    store.close()
    old = {"experiment": "one-step", "config": small.config, "seconds": 99.0}
    published.write_text(json.dumps({"jobs": {"an-older-version": old}}))
    published_runs.write_published_timings([Store.open_read(source)], published)
    (entry,) = json.loads(published.read_text())["jobs"].items()
    assert entry[0] == small.key and entry[1]["seconds"] < 99.0


def test_reproduce_plan_prints_one_json_object(tmp_path):
    result = attnsep(
        "reproduce", "--quick", "--only", "one-step,select-width", "--plan", "--calibration", "0",
        "--json", "--store", str(tmp_path / "none.sqlite"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    plan = result.json()
    assert [e["experiment"] for e in plan["experiments"]] == ["one-step", "select-width"]
    assert plan["wall_seconds"] > 0 and plan["cpu_seconds"] > 0
    assert plan["startup_seconds"] is not None  # a worker's published start-up
    assert not (tmp_path / "none.sqlite").exists()


def test_pricing_every_preset_loads_no_torch() -> None:
    """The plan prices jobs from their work counts, which need no numerics: planning the three
    presets leaves torch unloaded (its import cost 1.3 s before the first job could start)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from attnsep.engine.plan import make_plan\n"
        "from attnsep.report.reproduction import planned\n"
        "for preset in ('quick', 'standard', 'full'):\n"
        "    _, groups, _ = planned(preset, None, None, 'inline', [])\n"
        "    assert make_plan(groups, None, 'inline', 1, budget=0).cpu > 0\n"
        "print('torch' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False"]
