"""``attnsep reproduce`` on every executor, its report, ``attnsep report`` and ``attnsep runs``."""

from __future__ import annotations

import dataclasses
import json
import re
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from attnsep.engine.jobs import jobs_for
from attnsep.engine.store import Store
from attnsep.engine.sweep import run_sweep
from attnsep.experiments import base
from attnsep.metrics.stats import OUTCOMES
from engine_support import attnsep, records_by_hash

ONLY = "one-step,head-specialization"
NAMES = ONLY.split(",")


def reproduce(folder: Path, executor: str) -> tuple[Path, Path]:
    """``attnsep reproduce --quick --only ONLY`` into ``folder``; returns (store, report folder)."""
    store, out = folder / "store.sqlite", folder / "report"
    result = attnsep(
        "reproduce",
        "--quick",
        "--only",
        ONLY,
        "--executor",
        executor,
        "--out",
        str(out),
        "--store",
        str(store),
        "--quiet",
    )
    assert result.returncode == 0, result.stderr
    return store, out


def stored(path: Path) -> dict:
    store = Store(path)
    try:
        return records_by_hash(store.rows())
    finally:
        store.close()


def claims_of(out: Path) -> dict:
    return json.loads((out / "claims.json").read_text())


def planned_keys() -> set[str]:
    return {job.key for name in NAMES for job in jobs_for(name, base.get(name).config("quick"))}


@pytest.fixture(scope="module")
def inline(tmp_path_factory):
    return reproduce(tmp_path_factory.mktemp("inline"), "inline")


# ---------------------------------------------------------------- executors agree


def test_reproduce_stores_every_planned_job_once(inline):
    store, _ = inline
    records = stored(store)
    assert set(records) == planned_keys() and len(records) == 6 + 8  # one-step, heads' jobs


@pytest.mark.slow
def test_process_executor_gives_the_same_records_and_claims(inline, tmp_path):
    store, out = reproduce(tmp_path, "process")
    assert stored(store) == stored(inline[0])
    assert claims_of(out) == claims_of(inline[1])


@pytest.mark.slow
def test_ray_executor_gives_the_same_records_and_claims(inline, tmp_path):
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        # run_sweep on Ray, then the whole command on the same (already started) Ray instance
        jobs = jobs_for(
            "one-step",
            base.get("one-step").config("quick", m_values=[8], seeds=8, series=["fixed"]),
        )
        ray_store = Store(tmp_path / "ray-jobs.sqlite")
        outcome = run_sweep(jobs, ray_store, "ray")
        assert (outcome.computed, outcome.failed) == (3, [])
        assert ray.is_initialized()  # an instance the executor did not start is left running
        inline_store = Store(tmp_path / "inline-jobs.sqlite")
        run_sweep(jobs, inline_store, "inline")
        assert records_by_hash(ray_store.rows()) == records_by_hash(inline_store.rows())
        ray_store.close()
        inline_store.close()

        store, out = reproduce(tmp_path, "ray")
    finally:
        ray.shutdown()
    assert stored(store) == stored(inline[0])
    assert claims_of(out) == claims_of(inline[1])


# ---------------------------------------------------------------- the report


def test_claims_json_has_one_claim_per_experiment(inline):
    _, out = inline
    claims = claims_of(out)
    assert claims["preset"] == "quick"
    assert [c["name"] for c in claims["claims"]] == NAMES
    for claim in claims["claims"]:
        exp = base.get(claim["name"])
        assert {
            "claim",
            "paper",
            "measured",
            "verdict",
            "command",
            "criterion",
            "figures",
            "config",
            "jobs",
            "jobs_done",
        } <= set(claim)
        assert "seconds" not in claim  # timings stay out of claims.json
        assert (claim["claim"], claim["paper"], claim["title"]) == (exp.claim, exp.paper, exp.title)
        assert claim["command"] == f"attnsep reproduce --quick --only {claim['name']}"
        assert claim["verdict"] in OUTCOMES and claim["reason"]
        assert claim["jobs"] == claim["jobs_done"] >= 1
        assert claim["config"] == exp.config("quick").model_dump(mode="json")
        assert claim["figures"] and all((out / f).is_file() for f in claim["figures"])


def test_index_html_has_a_section_per_claim_with_its_figures(inline):
    _, out = inline
    page = (out / "index.html").read_text()
    claims = claims_of(out)["claims"]
    sections = re.findall(r'<section id="([^"]+)">(.*?)</section>', page, flags=re.S)
    assert [name for name, _ in sections] == [c["name"] for c in claims]
    for (_, body), claim in zip(sections, claims, strict=True):
        images = re.findall(r'<img src="([^"]+)"', body)
        assert images == claim["figures"]
        for image in images:
            assert (out / image).is_file()
            assert (out / image).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert claim["claim"] in body and claim["verdict"] in body
        assert f"<code>{claim['command']}</code>" in body
    assert len(re.findall(r"<img ", page)) == sum(len(c["figures"]) for c in claims)


def test_report_rebuilds_the_same_claims_from_the_store_without_computing(
    inline, tmp_path, monkeypatch
):
    store, out = inline

    def boom(config):
        raise AssertionError("attnsep report recomputed a job")

    for name in NAMES:
        monkeypatch.setitem(base.REGISTRY, name, dataclasses.replace(base.get(name), run=boom))
    before = sqlite3.connect(store).execute("SELECT count(*), max(id) FROM jobs").fetchone()
    again = tmp_path / "again"
    result = attnsep("report", "--out", str(again), "--store", str(store))
    assert result.returncode == 0, result.stderr
    assert claims_of(again) == claims_of(out)
    assert sqlite3.connect(store).execute("SELECT count(*), max(id) FROM jobs").fetchone() == before
    for claim in claims_of(again)["claims"]:
        assert all((again / f).is_file() for f in claim["figures"])
    for workers in ("1", "2"):  # judged in this process, and in two side by side
        folder = tmp_path / f"workers-{workers}"
        args = ("--out", str(folder), "--store", str(store), "--workers", workers)
        assert attnsep("report", *args).returncode == 0
        assert claims_of(folder) == claims_of(out)


def test_report_judges_in_at_most_one_process_per_cpu(inline, tmp_path, monkeypatch):
    """A worker count past the CPUs (here one) starts no more judges than there are CPUs: more
    would only start interpreters; with one CPU the experiments are judged in this process."""
    import attnsep.engine.executors
    from attnsep import api

    store, out = inline

    def no_pool(size: int):
        raise AssertionError(f"a pool of {size} judges on one CPU")

    monkeypatch.setattr("attnsep.report.claims.os.cpu_count", lambda: 1)
    monkeypatch.setattr(attnsep.engine.executors, "spawn_pool", no_pool)
    api.report(out=tmp_path / "r", store=store, workers=2**62)
    assert claims_of(tmp_path / "r") == claims_of(out)


def test_report_with_no_workers_is_a_one_line_error(inline, tmp_path):
    store, _ = inline
    result = attnsep(
        "report", "--out", str(tmp_path / "r"), "--store", str(store), "--workers", "0"
    )
    assert (
        result.returncode == 2
        and result.stderr.startswith("error: ")
        and "workers" in result.stderr
    )
    assert not (tmp_path / "r").exists()


def test_report_without_a_store_is_a_one_line_error(tmp_path):
    result = attnsep(
        "report", "--out", str(tmp_path / "r"), "--store", str(tmp_path / "none.sqlite")
    )
    assert (
        result.returncode == 2
        and result.stderr.startswith("error: ")
        and "none.sqlite" in result.stderr
    )
    assert not (tmp_path / "none.sqlite").exists()


@pytest.mark.parametrize(
    ("args", "word"),
    [
        (["--quick", "--full"], "--quick"),
        (["--only", "one-step,nope"], "nope"),
        (["--executor", "bogus"], "executor"),
    ],
)
def test_reproduce_bad_options_are_one_line_errors(tmp_path, args, word):
    result = attnsep(
        "reproduce",
        *args,
        "--out",
        str(tmp_path / "r"),
        "--store",
        str(tmp_path / "s.sqlite"),
        "--quiet",
    )
    assert result.returncode == 2 and result.stderr.startswith("error: ")
    assert "\n" not in result.stderr.strip() and word in result.stderr
    assert not (tmp_path / "r").exists()


# ---------------------------------------------------------------- runs list | show | export


def test_runs_list_json(inline):
    store, _ = inline
    result = attnsep("runs", "list", "--json", "--store", str(store))
    assert result.returncode == 0, result.stderr
    runs = json.loads(result.stdout)["runs"]
    assert {r["config_hash"] for r in runs} == planned_keys()
    assert all(
        set(r) == {"id", "experiment", "config_hash", "seed", "status", "seconds"} for r in runs
    )
    assert all(r["status"] == "done" for r in runs)
    only = json.loads(
        attnsep(
            "runs", "list", "--json", "--experiment", "head-specialization", "--store", str(store)
        ).stdout
    )["runs"]
    assert {r["experiment"] for r in only} == {"head-specialization"}
    table = attnsep("runs", "list", "--store", str(store))
    assert table.returncode == 0 and "head-specialization" in table.stdout


def test_runs_show(inline):
    store, _ = inline
    runs = json.loads(attnsep("runs", "list", "--json", "--store", str(store)).stdout)["runs"]
    db = Store(store)
    for run in (runs[0], runs[-1]):
        result = attnsep("runs", "show", str(run["id"]), "--store", str(store))
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout) == db.row(run["id"])
    db.close()
    missing = attnsep("runs", "show", "99999", "--store", str(store))
    assert missing.returncode == 2 and "99999" in missing.stderr


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_runs_export(inline, tmp_path, fmt):
    store, _ = inline
    target = tmp_path / f"runs.{fmt}"
    result = attnsep(
        "runs", "export", "--format", fmt, "--output", str(target), "--store", str(store)
    )
    assert result.returncode == 0, result.stderr
    frame = pd.read_csv(target) if fmt == "csv" else pd.read_parquet(target)
    records = stored(store)
    assert len(frame) == sum(len(r) for r in records.values())
    assert set(frame["config_hash"]) == set(records)
    assert {"job_id", "experiment", "config.seed", "config.d_values", "d", "m", "rate"} <= set(
        frame.columns
    )
    one_step = frame[frame["experiment"] == "one-step"]
    fixed = one_step[one_step["series"] == "fixed"]
    assert sorted(zip(fixed["d"], fixed["m"], strict=True)) == [(64, 32), (256, 32), (1024, 32)]
    by_point = {
        (r[0]["d"], r[0]["m"]): r[0]["rate"] for r in records.values() if "kind" not in r[0]
    }
    for d, m, rate in zip(one_step["d"], one_step["m"], one_step["rate"], strict=True):
        assert rate == by_point[(int(d), int(m))]
    maps = frame[frame["kind"] == "map"]
    assert len(maps) > 0 and all(len(json.loads(b)) == 2 for b in maps["before"])
    bad = attnsep(
        "runs", "export", "--format", "xlsx", "--output", str(target), "--store", str(store)
    )
    assert bad.returncode == 2 and "format" in bad.stderr
