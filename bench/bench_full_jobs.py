"""Target 15: each experiment's largest ``full`` job, planned vs measured (SPEC Part E; the
plan's proof at paper scale).

The plan's estimate of a job is the cost model fitted on the published timings of the smaller
presets only (what the plan had before any full-size job was timed); the measured seconds are
the published timing of that same job (``bench/publish_timings.py`` after
``bench/run_full_job.py EXPERIMENT``, which runs it through a store). The benchmark runs no job
itself: a full job takes minutes to hours. An experiment whose largest job has not been timed
says so (no ratio). Target: measured within 0.5x-2x of planned.
"""

from __future__ import annotations

from common import row

from attnsep.engine import cost_model
from attnsep.engine.published import config_text, published_by_config, published_timings
from attnsep.experiments import catalog
from attnsep.report.claims import planned_jobs


def largest_full_job(name: str) -> tuple[dict, float | None, float | None]:
    """``name``'s full job the model prices highest, its planned seconds (model fitted on the
    timings of other presets) and its measured seconds (None: not timed)."""
    jobs = planned_jobs([name], "full")[name]
    full = {config_text(job.config) for job in jobs}
    published = [p for p in published_timings().values() if p["experiment"] == name]
    smaller = [(p["config"], p["seconds"]) for p in published]
    smaller = [(c, s) for c, s in smaller if config_text(c) not in full]
    model = cost_model.fit_configs(name, smaller)
    priced = [(cost_model.estimate(model, name, job.config), job.config) for job in jobs]
    known = [(s, c) for s, c in priced if s is not None]
    if not known:
        return jobs[0].config, None, None
    planned, config = max(known, key=lambda pair: pair[0])
    measured = published_by_config(published_timings()).get((name, config_text(config)))
    return config, planned, measured


def run() -> list[dict]:
    rows = []
    for entry in catalog():
        name = entry["name"]
        _, planned, measured = largest_full_job(name)
        plan = "no estimate" if planned is None else f"{planned:.0f} s planned"
        if measured is None or planned is None:
            note = "not timed yet: bench/run_full_job.py " + name
            rows.append(row(f"full {name}", "not timed", plan, None, "0.5x-2x", None, note))
            continue
        ratio = measured / planned
        ours = f"{measured:.0f} s measured"
        rows.append(row(f"full {name}", ours, plan, ratio, "0.5x-2x", 0.5 <= ratio <= 2))
    return rows
