"""Pre-registered error rates: each criterion's calibration, fitted once on an exploratory run and
stored in the package (SPEC Part E).

A criterion's power and false-pass rate describe the criterion, not the run it judges, so they are
computed before any confirmatory run: from the laws fitted to the run of the exploratory master
seed ``configs.PREREGISTRATION_SEED``, with the laws' parameters redrawn in every simulated run
(``metrics.calibration.redrawable``). One JSON file per experiment (``calibrations/NAME.json``)
holds, per preset, the criterion version they belong to, the source seed, the config they were
simulated at (its master seed left out) and each entry's rates by claim id. A judged run reads
them (:func:`lookup`); when the criterion version or the config differs, it has none, and says so.
``report.preregistration`` writes them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..core.io import atomic_write

FOLDER = Path(__file__).parent / "calibrations"


def path_for(name: str, folder: Path | None = None) -> Path:
    """``name``'s file in ``folder`` (default :data:`FOLDER`, read when called)."""
    return (folder or FOLDER) / f"{name}.json"


def load(name: str, folder: Path | None = None) -> dict[str, Any]:
    """Every preset's pre-registered rates of experiment ``name`` (``{}`` when none)."""
    path = path_for(name, folder)
    return json.loads(path.read_text()) if path.exists() else {}


def sizes(config: dict[str, Any]) -> dict[str, Any]:
    """A config (``model_dump(mode="json")``) without its master seed: what a calibration is
    simulated at, the same for every seed of a preset."""
    return {k: v for k, v in config.items() if k != "seed"}


def lookup(
    name: str,
    preset: str,
    criterion_version: int,
    config: dict[str, Any],
    folder: Path | None = None,
) -> tuple[dict[str, Any] | None, str]:
    """The pre-registered rates of ``name`` at ``preset`` by claim id, or ``None`` and why there
    are none (no file entry, another criterion version, other sizes)."""
    stored = load(name, folder).get(preset)
    where = f"at the {preset} preset"
    if stored is None:
        return None, f"no error rates are pre-registered for {name} {where}"
    if stored["criterion_version"] != criterion_version:
        return None, (
            f"the error rates pre-registered {where} belong to criterion version "
            f"{stored['criterion_version']}, not {criterion_version}"
        )
    if stored["config"] != sizes(config):
        return None, f"the error rates pre-registered {where} were simulated at other sizes"
    return stored["entries"], ""


def write(name: str, preset: str, registered: dict[str, Any], folder: Path | None = None) -> Path:
    """Store ``registered`` (criterion_version, source, config, entries) as ``name``'s rates at
    ``preset``, keeping its other presets; the file is replaced whole (``atomic_write``)."""
    presets = {**load(name, folder), preset: registered}
    text = json.dumps(dict(sorted(presets.items())), indent=1, sort_keys=True) + "\n"
    return atomic_write(path_for(name, folder), lambda handle: handle.write(text.encode()))
