"""A reproduction (``attnsep reproduce``): every claim's jobs run into the store, judged, and
written as the report (``index.html``, ``claims.json``); its plan; and ``attnsep report``,
which rebuilds the report of the last reproduction from the store, computing nothing.
Public through ``attnsep.api``."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..configs import CALIBRATION_BUDGET
from ..core.io import REPORT_FOLDER, make_folder, named, writable_folder
from ..core.validate import callback, int_at_least, one_of, shown
from ..engine.store import DEFAULT_PATH, Store
from ..engine.store_state import check_readable
from ..experiments import catalog, claim_ids

if TYPE_CHECKING:
    from ..engine.executors import Executor
    from ..engine.jobs import Job
    from ..engine.plan import Plan

FOLDER = REPORT_FOLDER


@dataclass(frozen=True)
class Reproduction:
    """The claims of a reproduction (one dict per claim: ``claim``, ``title``, ``verdict``,
    ``reason``, ``calibration``, ...), the report's index file, and what the engine did:
    jobs ``computed``, ``cached`` and ``failed``, and the ``seconds`` it all took (all 0 for a
    report rebuilt from the store)."""

    preset: str
    """``quick``, ``standard`` or ``full``."""
    names: tuple[str, ...]
    """The experiments reproduced."""
    seed: int | None
    """The master seed (``None``: each preset's own, 0)."""
    claims: tuple[dict[str, Any], ...]
    """One dict per claim: ``claim``, ``title``, ``verdict``, ``reason``, ``calibration``, ..."""
    index: Path
    """The report's ``index.html``."""
    computed: int = 0
    """Jobs computed."""
    cached: int = 0
    """Jobs read back from the store."""
    failed: int = 0
    """Jobs that failed."""
    seconds: float = 0.0
    """Wall seconds of the whole reproduction."""
    seeds: tuple[int, ...] | None = None
    """The master seeds of a replicated reproduction (``None``: one run)."""

    def summary(self) -> dict[str, Any]:
        """The preset, the seed, each claim's verdict, the engine's counts and the index file."""
        return {
            "preset": self.preset,
            "seed": self.seed,
            "seeds": list(self.seeds) if self.seeds else None,
            "verdicts": {claim["claim"]: claim["verdict"] for claim in self.claims},
            "computed": self.computed,
            "cached": self.cached,
            "failed": self.failed,
            "seconds": self.seconds,
            "index": str(self.index),
        }

    def to_frame(self):
        """One row per claim: ``claim``, ``name``, ``title``, ``verdict`` and ``reason``."""
        import pandas as pd

        columns = ("claim", "name", "title", "verdict", "reason")
        return pd.DataFrame([{c: claim.get(c) for c in columns} for claim in self.claims])


def write_claims(
    store: Store, last: dict[str, Any], out: Path, workers: int = 1
) -> tuple[list[dict[str, Any]], Path]:
    """Judge the claims of a reproduction (``last``: its preset, names and seed) from the
    store and write the report into ``out`` (made here, checked by ``writable_folder``
    before): the claims and the report's index file. ``workers``: processes judging the
    experiments side by side (``claims.build_claims``)."""
    from .claims import build_claims
    from .html import write_report  # jinja2 only when a report is written

    make_folder(out, default=out == FOLDER)
    preset, seed = last["preset"], last.get("seed")
    seeds_run = store.recall(f"seeds_run:{preset}") or []
    if last.get("seeds"):
        claims = replicated_claims(store, last, out, seeds_run, workers)
    else:
        claims = build_claims(
            store, last["names"], preset, out, seed, seeds_run=seeds_run, workers=workers
        )
    index, _ = write_report(claims, preset, out)
    return claims, index


def replicated_claims(
    store: Store, last: dict[str, Any], out: Path, seeds_run: Sequence[int], workers: int
) -> list[dict[str, Any]]:
    """Every entry judged on each of ``last["seeds"]`` (figures in ``out/seed-S``) and
    published once (``replication.combine``)."""
    from .claims import build_claims
    from .replication import combine

    runs = []
    for seed in last["seeds"]:
        folder = make_folder(out / f"seed-{seed}")
        claims = build_claims(
            store, last["names"], last["preset"], folder, seed, seeds_run=seeds_run, workers=workers
        )
        for claim in claims:
            claim["figures"] = [f"seed-{seed}/{figure}" for figure in claim["figures"]]
        runs.append((seed, claims))
    return combine(runs)


def planned(
    preset: str,
    names: Sequence[str] | None,
    seed: int | None,
    executor: str | Executor,
    seeds: Sequence[int] | None = None,
) -> tuple[list[str], dict[str, list[Job]], Executor]:
    """The experiments of a reproduction (all when ``names`` is ``None``), their jobs (on master
    seed ``seed``, or on each of ``seeds``) and the executor to run them on, every argument
    checked first."""
    from ..engine.jobs import check_experiment
    from ..engine.sweep import executor_for
    from ..experiments.base import PRESETS
    from .claims import planned_jobs

    one_of("preset", preset, PRESETS)
    listed = isinstance(names, list | tuple) and all(isinstance(n, str) for n in names)
    if names is not None and not listed:  # a str is a sequence too: of one-letter names
        raise TypeError(f"names must be a list of experiment names, got {shown(names)}")
    chosen = [item["name"] for item in catalog()] if names is None else list(names)
    for name in chosen:
        check_experiment(name)
    engine = executor_for(executor)
    if seed is not None:
        int_at_least("seed", seed, 0)
    groups: dict[str, list[Job]] = {name: [] for name in chosen}
    runs: Sequence[int | None] = seeds or [seed]
    for each in runs:
        for name, jobs in planned_jobs(chosen, preset, each).items():
            groups[name] += jobs
    return chosen, groups, engine


def reproduce(
    preset: str = "quick",
    names: Sequence[str] | None = None,
    *,
    seed: int | None = None,
    seeds: Sequence[int] | None = None,
    replicate: int | None = None,
    out: str | Path = FOLDER,
    store: str | Path = DEFAULT_PATH,
    executor: str | Executor = "process",
    on_start: Callable[[int, int], None] | None = None,
    on_done: Callable[[Job, dict[str, Any]], None] | None = None,
) -> Reproduction:
    """Rerun the claims of both papers, judge each from its records and write the report,
    ``index.html`` and ``claims.json`` (``attnsep reproduce``): the claims, the report and the
    jobs computed, cached and failed. A run whose largest jobs side by side need more memory
    than is available (each experiment's ``peak``) is refused first.

    Parameters
    ----------
    preset
        ``quick``, ``standard`` or ``full``.
    names
        The experiments to rerun (default: all; see [`experiments`][attnsep.api.experiments]).
    seed
        Master seed of every experiment (default: each preset's own, 0); a claim judged on a
        seed its criterion was not tuned on is confirmatory (SPEC Part E).
    seeds
        Judge every claim on each of these master seeds and publish, per claim, the verdict
        reached on at least 4 of 5 of them, else ``unstable`` (``report.replication``); each
        claim then carries ``replication``. Stored seeds are not run again.
    replicate
        As ``seeds``: that many consecutive master seeds from ``seed`` (default 4, the first
        seed no criterion was written or calibrated on).
    out
        The report folder.
    store
        The SQLite results database (created if missing); a stored job is not computed again.
    executor
        Where the jobs run, as for [`run_experiment`][attnsep.api.run_experiment].
    on_start
        Called as ``on_start(to_run, cached)`` once the jobs still to run are known.
    on_done
        Called as ``on_done(job, row)`` after each finished job, with its stored row.
    """
    from ..engine.sweep import run_sweep
    from .replication import seeds_for

    replicated = seeds_for(seed, seeds, replicate)
    chosen, groups, engine = planned(preset, names, seed, executor, replicated)
    jobs = ready_to_run(groups, store, engine, out, on_start, on_done)
    last = {"preset": preset, "names": chosen, "seed": seed, "seeds": replicated}
    started = time.time()
    with closing(Store(store)) as db:
        outcome = run_sweep(jobs, db, engine, on_start=on_start, on_done=on_done)
        claims, index = remember_and_judge(db, last, Path(out), engine)
    counts = (outcome.computed, outcome.cached, len(outcome.failed), time.time() - started)
    replication = tuple(replicated) if replicated else None
    return Reproduction(preset, tuple(chosen), seed, tuple(claims), index, *counts, replication)


def ready_to_run(
    groups: dict[str, list[Job]],
    store: str | Path,
    engine: Executor,
    out: str | Path,
    on_start: Callable[[int, int], None] | None,
    on_done: Callable[[Job, dict[str, Any]], None] | None,
) -> list[Job]:
    """The jobs of a reproduction, once the last checks before anything is written have passed:
    its callbacks, its report folder, and the memory its largest jobs still to run need side by
    side."""
    from ..engine.memory import check_memory
    from ..engine.sweep import not_stored

    jobs = [job for group in groups.values() for job in group]
    callback("on_start", on_start)
    callback("on_done", on_done)
    writable_folder(out, default=named(out, "out") == FOLDER)
    check_memory(not_stored(jobs, store), engine, "the preset or the workers (--workers)")
    return jobs


def remember_and_judge(
    db: Store, last: dict[str, Any], out: Path, engine: Executor
) -> tuple[list[dict[str, Any]], Path]:
    """Record the reproduction ``last`` in the store (what ``report`` rebuilds, and the master
    seeds run so far of its preset), then judge its claims and write the report into ``out``
    (on the process pool's workers when it ran on one)."""
    db.remember("last_reproduction", last)
    preset, ran = last["preset"], last["seeds"] or [last["seed"] or 0]
    seeds_run = sorted({*(db.recall(f"seeds_run:{preset}") or []), *ran})
    db.remember(f"seeds_run:{preset}", seeds_run)
    judges = engine.workers if engine.name == "process" else 1
    return write_claims(db, last, out, judges)


def reproduce_plan(
    preset: str = "quick",
    names: Sequence[str] | None = None,
    *,
    seed: int | None = None,
    seeds: Sequence[int] | None = None,
    replicate: int | None = None,
    store: str | Path = DEFAULT_PATH,
    executor: str | Executor = "process",
    calibration: float = CALIBRATION_BUDGET,
) -> Plan:
    """What [`reproduce`][attnsep.api.reproduce] would cost, nothing run or stored
    (``attnsep reproduce --plan``): per experiment the jobs, how many are stored, the
    estimated CPU and wall time.

    Parameters
    ----------
    preset
        ``quick``, ``standard`` or ``full``.
    names
        The experiments to plan (default: all; see [`experiments`][attnsep.api.experiments]).
    seed
        Master seed of every experiment (default: each preset's own, 0).
    seeds
        The master seeds of a replicated reproduction, as for
        [`reproduce`][attnsep.api.reproduce].
    replicate
        That many consecutive master seeds from ``seed`` (default 4), as for
        [`reproduce`][attnsep.api.reproduce].
    store
        The results database whose stored jobs need no running, as for
        [`plan`][attnsep.api.plan].
    executor
        The executor the wall time is estimated for, as for [`plan`][attnsep.api.plan].
    calibration
        Seconds per experiment spent timing jobs that have no stored timing (0: none, and
        the published timings taken as they are, not in this machine's seconds).

    Returns
    -------
    Plan
        As [`sweep_plan`][attnsep.api.sweep_plan]'s, for every experiment of the reproduction.
    """
    from ..core.validate import seconds
    from ..engine.planning import plan
    from .replication import seeds_for

    seconds("calibration", calibration)
    replicated = seeds_for(seed, seeds, replicate)
    _, groups, engine = planned(preset, names, seed, executor, replicated)
    return plan(groups, store, engine, budget=calibration)


def report(
    out: str | Path = FOLDER,
    store: str | Path = DEFAULT_PATH,
    workers: int | None = None,
    claim: str | None = None,
) -> Reproduction:
    """Rebuild the report of the last reproduction in ``store`` (every experiment at the quick
    preset if none is stored), computing nothing (``attnsep report``).

    Parameters
    ----------
    out
        The report folder.
    store
        The results database of the reproduction (it must exist; it is only read).
    workers
        Processes judging the experiments side by side (default and most: the number of
        CPUs; 1: in this process). The claims are the same whatever the number.
    claim
        One entry's id (e.g. ``A7.3b``): the result holds only that entry, with its full
        reason, measured values and criterion (none when the last reproduction did not judge
        it); the report is rebuilt whole. Checked before anything is written.

    Returns
    -------
    Reproduction
        The claims judged from the stored records and the report's ``index.html``; the
        engine's counts are 0.
    """
    if workers is not None:
        int_at_least("workers", workers, 1)
    if claim is not None:
        one_of("claim", claim, claim_ids())
    check_readable(store)
    writable_folder(out, default=named(out, "out") == FOLDER)
    db = Store.open_read(store)
    try:
        last = db.recall("last_reproduction") or {
            "preset": "quick",
            "names": [item["name"] for item in catalog()],
        }
        claims, index = write_claims(db, last, Path(out), workers or os.cpu_count() or 1)
    finally:
        db.close()
    seeds = tuple(last["seeds"]) if last.get("seeds") else None
    if claim is not None:
        claims = [entry for entry in claims if entry["claim"] == claim]
    return Reproduction(
        last["preset"], tuple(last["names"]), last.get("seed"), tuple(claims), index, seeds=seeds
    )
