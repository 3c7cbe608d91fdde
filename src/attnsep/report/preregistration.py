"""Pre-register every criterion's error rates on an exploratory run (SPEC Part E).

``preregister`` runs a preset on the exploratory master seed (``configs.PREREGISTRATION_SEED``;
stored jobs are reused), fits each claim's laws to that run, measures the criterion's power and
false-pass rate by simulation with the laws' parameters redrawn in every simulated run
(``metrics.calibration.redrawable``), and writes them into the package
(``experiments.preregistered``), where every later run reads them. Run it when a criterion
changes (a new ``criterion_version``), before any confirmatory run of that version.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..configs import PREREGISTRATION_SEED
from ..core.validate import require
from ..engine.store import DEFAULT_PATH, Store
from ..experiments import base, preregistered
from .claims import FIT, build_claims
from .reproduction import planned


def preregister(
    preset: str = "standard",
    names: Sequence[str] | None = None,
    *,
    seed: int = PREREGISTRATION_SEED,
    store: str | Path = DEFAULT_PATH,
    executor: str = "process",
    workers: int | None = None,
    folder: Path | None = None,
) -> dict[str, Path]:
    """Fit and store the error rates of ``names`` (default: all) at ``preset`` from the run on
    master seed ``seed``, its missing jobs computed into ``store``; the file written per
    experiment into ``folder`` (default the package's, ``preregistered.FOLDER``; one with no
    calibrated entry writes nothing). A seed that is confirmatory for one of them (not in its
    ``tuned_on``) is refused before anything runs: the rates of a criterion are never fitted
    to a run that it judges as a test of the paper."""
    from ..engine.sweep import executor_for, run_sweep

    engine = executor_for(executor, workers)
    chosen, groups, _ = planned(preset, names, seed, engine)
    confirmatory = [name for name in chosen if base.get(name).run_kind(seed) != "exploratory"]
    require(
        not confirmatory,
        f"seed {seed} is confirmatory for {', '.join(confirmatory)}; pre-register on a seed "
        "the criterion was written on (its tuned_on)",
    )
    db = Store(store)
    try:
        run_sweep([job for jobs in groups.values() for job in jobs], db, engine)
        with tempfile.TemporaryDirectory() as out:
            judged = build_claims(
                db, chosen, preset, Path(out), seed, calibrate=FIT, workers=engine.workers
            )
    finally:
        db.close()
    written = {}
    for name, claims in by_experiment(judged, chosen).items():
        registered = registration(base.get(name), preset, seed, claims)
        if registered["entries"]:
            written[name] = preregistered.write(name, preset, registered, folder)
    return written


def by_experiment(claims: list[dict[str, Any]], names: Sequence[str]) -> dict[str, list[dict]]:
    """``build_claims``' flat list split per experiment: each entry named after one of
    ``names`` opens its group, its companions follow it."""
    groups: dict[str, list[dict]] = {}
    for claim in claims:
        if claim["name"] in names:
            current = groups.setdefault(claim["name"], [])
        current.append(claim)
    return groups


def registration(
    exp: base.Experiment, preset: str, seed: int, claims: list[dict[str, Any]]
) -> dict[str, Any]:
    """What ``preregistered.write`` stores for one experiment: the source and each calibrated
    entry's rates, which name their source too."""
    source = {
        "preset": preset,
        "seed": seed,
        "run": exp.run_kind(seed),
        "criterion_version": exp.criterion_version,
    }
    incomplete = [c["claim"] for c in claims if c["verdict"] == "incomplete"]
    if incomplete:
        raise RuntimeError(f"{exp.name}: the run on seed {seed} is incomplete ({incomplete})")
    entries = {
        c["claim"]: {**c["calibration"], "source": source} for c in claims if c.get("calibration")
    }
    return {
        "criterion_version": exp.criterion_version,
        "source": source,
        "config": preregistered.sizes(claims[0]["config"]),
        "entries": entries,
    }
