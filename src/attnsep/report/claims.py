"""Turn stored records into claims (figure, verdict, calibration) for a reproduction (SPEC A7,
B5, C, Part E).

Each claim is judged on the run of one master seed. Its criterion's error rates are read from
the pre-registered file (``experiments.preregistered``: measured by simulation once, on an
exploratory run, SPEC Part E), never fitted to the run judged; where the store also holds a complete
run on another seed the report knows of, that run's verdict is shown beside it: ``exploratory``
for a seed the criterion was tuned on, ``confirmatory`` for one it never saw.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from ..engine.jobs import Job, jobs_for
from ..engine.store import DEFAULT_PATH, Store
from ..experiments import base, preregistered
from . import judged

READ, FIT, NONE = "read", "fit", "none"
"""How a judged entry gets its error rates: read from the pre-registered file (a run judged
for a report), fitted to this run (pre-registering, on an exploratory seed), or none."""


def command_for(name: str, preset: str, seed: int | None = None) -> str:
    shift = f" --seed {seed}" if seed else ""
    return f"attnsep reproduce --{preset}{shift} --only {name}"


def store_flag(store: Store) -> str:
    """`` --store PATH`` for a store other than the default one ("" for the default)."""
    default = Path(DEFAULT_PATH).resolve()
    return "" if Path(store.path).resolve() == default else f" --store {store.path}"


def config_for(name: str, preset: str, seed: int | None = None) -> base.ExperimentConfig:
    """The preset's config of ``name``; ``seed`` replaces its master seed (``None`` keeps the
    preset's own, so the jobs and their hashes are those of a run without ``--seed``)."""
    exp = base.get(name)
    return exp.config(preset) if seed is None else exp.config(preset, seed=seed)


def planned_jobs(names: list[str], preset: str, seed: int | None = None) -> dict[str, list[Job]]:
    """Each experiment's jobs for ``preset`` (on master seed ``seed``)."""
    return {name: jobs_for(name, config_for(name, preset, seed)) for name in names}


def finished_records(store: Store, name: str, jobs: list[Job]) -> tuple[list[dict], list[str]]:
    """The stored rows of ``jobs`` that are done, and the first lines of the failed ones' errors."""
    rows = {row["config_hash"]: row for row in store.rows(name, [j.key for j in jobs])}
    done = [rows[j.key] for j in jobs if j.key in rows and rows[j.key]["status"] == "done"]
    errors = [
        rows[j.key]["error"].splitlines()[0]
        for j in jobs
        if j.key in rows and rows[j.key]["status"] == "failed"
    ]
    return done, errors


def other_runs(store: Store, name: str, preset: str, seed: int, seeds: Sequence[int]) -> list[dict]:
    """The verdicts of the complete runs on ``seeds`` (other than ``seed``) in the store."""
    exp = base.get(name)
    runs = []
    for other in sorted(set(seeds) - {seed}):
        config = config_for(name, preset, other)
        jobs = jobs_for(name, config)
        done, _ = finished_records(store, name, jobs)
        if len(done) == len(jobs):
            judged = exp.verdict([rec for row in done for rec in row["records"]], config)
            runs.append({"seed": other, "run": exp.run_kind(other), "verdict": judged["verdict"]})
    return runs


def build_claims(
    store: Store,
    names: list[str],
    preset: str,
    out: Path,
    seed: int | None = None,
    calibrate: str = READ,
    seeds_run: Sequence[int] = (),
    workers: int = 1,
) -> list[dict[str, Any]]:
    """One claim per experiment (plus its companions, e.g. A7.3b) from the jobs the store holds
    on master seed ``seed``; figures go to ``out``. ``calibrate`` (``READ``, ``FIT`` or
    ``NONE``) says where each entry's ``calibration``, its criterion's error rates, comes from.
    ``runs`` lists the verdicts of the complete runs on the criterion's exploratory seeds and on
    ``seeds_run`` (other master seeds reproduced into this store). With ``workers > 1`` the
    experiments are judged side by side in that many fresh processes (at most one per CPU: more
    would only start more interpreters, a few seconds each), each reading the store (the claims
    are the same, in the same order: each experiment's simulations draw from their own seeds)."""
    groups = list(planned_jobs(names, preset, seed).items())
    args = [(name, jobs, preset, out, seed, calibrate, tuple(seeds_run)) for name, jobs in groups]
    judges = min(workers, len(args), os.cpu_count() or 1)
    if judges <= 1:
        judged = [judge(store, *arg) for arg in args]
    else:
        from ..engine.executors import spawn_pool

        with spawn_pool(judges) as pool:
            judged = list(pool.map(_judge_from, [(store.path, *arg) for arg in args]))
    return [claim for claims in judged for claim in claims]


def _judge_from(args: tuple) -> list[dict[str, Any]]:
    """:func:`judge` in a worker process, on the store at ``args[0]`` opened read-only."""
    path, *rest = args
    store = Store.open_read(path)
    try:
        return judge(store, *rest)
    finally:
        store.close()


def judge(
    store: Store,
    name: str,
    jobs: list[Job],
    preset: str,
    out: Path,
    seed: int | None,
    calibrate: str,
    seeds_run: Sequence[int],
) -> list[dict[str, Any]]:
    """Experiment ``name``'s claim and its companions (:func:`build_claims`), reused from the
    report folder when nothing they depend on changed (``report.judged``)."""
    exp = base.get(name)
    config = config_for(name, preset, seed)
    others = sorted(set((*exp.tuned_on, *seeds_run)) - {config.seed})
    stamps = {
        str(each): store.stamps(name, [j.key for j in planned_jobs([name], preset, each)[name]])
        for each in others
    }
    wanted = judged.key(
        {
            "name": name,
            "preset": preset,
            "seed": config.seed,
            "calibrate": calibrate,
            "rows": store.stamps(name, [j.key for j in jobs]),
            "others": stamps,
        }
    )
    kept = judged.load(out, name, wanted) if calibrate != FIT else None
    if kept is not None:
        return kept
    claims = judge_anew(store, exp, config, jobs, preset, out, calibrate, seeds_run)
    if claims[0]["verdict"] != "incomplete" and calibrate != FIT:
        judged.save(out, name, wanted, claims)
    return claims


def judge_anew(
    store: Store,
    exp: base.Experiment,
    config: base.ExperimentConfig,
    jobs: list[Job],
    preset: str,
    out: Path,
    calibrate: str,
    seeds_run: Sequence[int],
) -> list[dict[str, Any]]:
    """:func:`judge` computing everything: the verdicts, the figures, the error rates."""
    from ..metrics import calibration  # numpy: not for the command line's start-up

    finished, errors = finished_records(store, exp.name, jobs)
    claim = heading(exp, config, preset, jobs, finished)
    if len(finished) < len(jobs):
        return [incomplete(claim, len(finished), errors, store)]
    records = [rec for row in finished for rec in row["records"]]
    companions = verdict_of(claim, exp, config, records, out, calibrate)
    seen = (*exp.tuned_on, *seeds_run)
    claim["runs"] = other_runs(store, exp.name, preset, config.seed, seen)
    claims = [claim, *(companion_entry(claim, exp, extra) for extra in companions)]
    if calibrate == READ:
        attach_preregistered(exp, preset, claim["config"], claims)
    for entry in claims:
        entry["reason"] = calibration.named_in(entry["reason"], entry.get("calibration"))
    return claims


def heading(
    exp: base.Experiment,
    config: base.ExperimentConfig,
    preset: str,
    jobs: list[Job],
    finished: list[dict[str, Any]],
) -> dict[str, Any]:
    """What an entry states before it is judged: the claim, its run and its jobs."""
    return {
        "claim": exp.claim,
        "name": exp.name,
        "title": exp.title,
        "kind": exp.kind,
        "paper": exp.paper,
        "section": exp.section,
        "command": command_for(exp.name, preset, config.seed),
        "preset": preset,
        "seed": config.seed,
        "run": exp.run_kind(config.seed),
        "criterion_version": exp.criterion_version,
        "config": config.model_dump(mode="json"),
        "jobs": len(jobs),
        "jobs_done": len(finished),
        "seconds": round(sum(r["seconds"] for r in finished), 3),
    }


def incomplete(claim: dict[str, Any], done: int, errors: list[str], store: Store) -> dict:
    """``claim`` with the verdict ``incomplete``: ``done`` of its jobs finished."""
    claim.update(
        measured=f"{done} of {claim['jobs']} jobs finished"
        + (f"; first error: {errors[0]}" if errors else ""),
        verdict="incomplete",
        summary=f"{done} of {claim['jobs']} jobs finished",
        reason="not every job of this claim has finished; "
        f"`{claim['command']}{store_flag(store)}` completes it (stored jobs are kept)",
        estimates=[],
        figures=[],
    )
    return claim


def verdict_of(
    claim: dict[str, Any],
    exp: base.Experiment,
    config: base.ExperimentConfig,
    records: list[dict[str, Any]],
    out: Path,
    calibrate: str,
) -> list[dict[str, Any]]:
    """Fill ``claim`` with the experiment's verdict on ``records``, its figures and (``FIT``)
    its error rates; the companion entries the verdict judged, checked against those the
    experiment declares (``Experiment.companions``)."""
    from ..metrics import calibration, stats

    with calibration.fitting() if calibrate == FIT else nullcontext():
        result = exp.verdict(records, config)
    companions = result.pop("companions", [])
    judged_ids = [extra["claim"] for extra in companions]
    if judged_ids != [c for c in exp.companions if c in judged_ids]:
        raise RuntimeError(
            f"experiment {exp.name!r} judged the companions {judged_ids}, not among those it "
            f"declares in order, {list(exp.companions)} (Experiment.companions)"
        )
    claim.update(result)
    claim["kind"] = stats.kind_of(claim["verdict"])
    claim.setdefault("reason", claim.get("criterion", ""))
    claim.setdefault("estimates", [])
    claim["figures"] = [
        str(p.relative_to(out)) for p in exp.figure(records, config, out / "figures")
    ]
    if calibrate == FIT:
        claim["calibration"] = exp.calibrate(records, config)
    return companions


def companion_entry(claim: dict[str, Any], exp: base.Experiment, extra: dict) -> dict[str, Any]:
    """A companion's entry (e.g. A7.3b beside A7.3): its verdict ``extra`` with the run of the
    experiment's ``claim``."""
    from ..metrics import stats

    shared = {k: claim[k] for k in ("command", "preset", "seed", "run", "jobs", "jobs_done")}
    entry = {"name": f"{exp.name}-{extra['claim'].lower().replace('.', '')}", **shared}
    entry.update(criterion_version=exp.criterion_version, seconds=0.0, figures=[])
    entry.update(extra)
    entry.setdefault("calibration", None)
    entry["kind"] = stats.kind_of(entry["verdict"])
    return entry


def attach_preregistered(
    exp: base.Experiment, preset: str, config: dict[str, Any], claims: list[dict[str, Any]]
) -> None:
    """Give each of ``claims`` (an experiment's entry and its companions) its pre-registered
    error rates (``experiments.preregistered``); a ``claim`` entry without them gets ``None``
    and a sentence in its ``reason`` saying why."""
    entries, missing = preregistered.lookup(exp.name, preset, exp.criterion_version, config)
    for entry in claims:
        rates = (entries or {}).get(entry["claim"])
        entry["calibration"] = rates
        if rates is None and entry["kind"] == "claim":
            why = missing or f"no error rates are pre-registered for {entry['claim']}"
            entry["reason"] = entry["reason"].rstrip(".") + f"; {why}"
