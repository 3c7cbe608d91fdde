"""The results of the engine: one experiment (a claim) run and judged, a sweep over a grid of
an experiment's config, and the parameter frontiers (SPEC A7.6, Part C)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.validate import require
from ..engine.frame import records_frame
from ..engine.records import record_dicts, record_table
from ..experiments.base import ExperimentConfig, Record, get, parse_config
from . import saved
from .common import Scalar, flat, short

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from matplotlib.figure import Figure

    from ..report.text_table import TextTable


def _records(rows: tuple[dict[str, Any], ...]) -> list[Record]:
    return [record for row in rows if row["status"] == "done" for record in row["records"]]


def _engine_counts(result: ExperimentResult | SweepResult) -> dict[str, Any]:
    """What the engine did for a run: computed, from the store, failed, and where it stored."""
    return {
        "computed": result.computed,
        "cached": result.cached,
        "failed": sum(row["status"] != "done" for row in result.rows),
        "store": str(result.store),
    }


def _drawn(name: str, records: list[Record], config: ExperimentConfig) -> Figure:
    """The first figure experiment ``name`` draws of ``records`` (as in the report)."""
    from ..experiments import plotting

    require(bool(records), f"{name}: no finished job, nothing to draw")
    with tempfile.TemporaryDirectory() as folder, plotting.captured() as drawn:
        get(name).figure(records, config, Path(folder))
    require(bool(drawn), f"{name}: its figure drew nothing")
    return drawn[0]


@dataclass(frozen=True)
class ExperimentResult:
    """One registered experiment (one claim of SPEC A7, B5, C) run through the engine.

    ``rows`` are the stored rows of its jobs (job order); ``outcome`` is the experiment's
    verdict on their records (``verdict``, ``reason``, ``estimates``, ...), or
    ``incomplete`` when a job failed.
    """

    name: str
    claim: str
    preset: str
    config: ExperimentConfig
    rows: tuple[dict[str, Any], ...]
    outcome: dict[str, Any]
    computed: int
    cached: int
    store: Path

    @property
    def records(self) -> list[Record]:
        """The records of every finished job, in job order."""
        return _records(self.rows)

    @property
    def verdict(self) -> str:
        """``reproduced``, ``not reproduced``, ``inconclusive`` or ``incomplete``."""
        return self.outcome["verdict"]

    def summary(self) -> dict[str, Scalar]:
        """Experiment, claim, verdict and its reason, and what the engine computed."""
        return {
            "experiment": self.name,
            "claim": self.claim,
            "preset": self.preset,
            "verdict": self.verdict,
            "reason": self.outcome.get("reason", ""),
            "jobs": len(self.rows),
            "records": len(self.records),
            **_engine_counts(self),
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per record, config flattened: the table ``attnsep runs export`` writes."""
        return records_frame(self.rows)

    def figures(self, folder: str | Path) -> list[Path]:
        """Draw the experiment's figures (as in the report) into ``folder``; their paths."""
        require(bool(self.records), f"{self.name}: no finished job, nothing to draw")
        return get(self.name).figure(self.records, self.config, Path(folder))

    def plot(self) -> Figure:
        """The experiment's (first) figure, as the report draws it: its estimates with their
        intervals against the variable it sweeps."""
        return _drawn(self.name, self.records, self.config)

    def content(self) -> dict[str, Any]:
        """Every field as JSON data (the saved file's header)."""
        return {
            "name": self.name,
            "claim": self.claim,
            "preset": self.preset,
            "config": self.config.model_dump(mode="json"),
            "rows": saved.encode(list(self.rows)),
            "outcome": saved.encode(self.outcome),
            "computed": self.computed,
            "cached": self.cached,
            "store": str(self.store),
        }

    def save(self, path: str | Path) -> Path:
        """The config, the stored rows with their records, the verdict and the engine's counts
        in one ``.npz`` file (a JSON entry: no arrays); the path written."""
        return saved.write(path, type(self).__name__, self.content(), {})

    @classmethod
    def from_saved(
        cls, meta: dict[str, Any], arrays: dict[str, np.ndarray] | None = None
    ) -> ExperimentResult:
        """The result ``save`` wrote (its header ``meta``); the experiment must still be
        registered."""
        name = str(meta["name"])
        return cls(
            name=name,
            claim=str(meta["claim"]),
            preset=str(meta["preset"]),
            config=parse_config(get(name).config_type, meta["config"], name),
            rows=tuple(saved.decode(meta["rows"])),
            outcome=saved.decode(meta["outcome"]),
            computed=int(meta["computed"]),
            cached=int(meta["cached"]),
            store=Path(meta["store"]),
        )

    def __repr__(self) -> str:
        return short(
            type(self).__name__,
            name=self.name,
            verdict=self.verdict,
            records=len(self.records),
            computed=self.computed,
            cached=self.cached,
        )


@dataclass(frozen=True)
class SweepResult:
    """An experiment run over a grid of its config fields; ``rows`` are the stored rows of the
    sweep's jobs (job order), ``configs`` the validated grid points."""

    experiment: str
    preset: str
    configs: tuple[dict[str, Any], ...]
    rows: tuple[dict[str, Any], ...]
    computed: int
    cached: int
    store: Path
    job_hashes: tuple[str, ...] = field(repr=False, default=())

    @property
    def records(self) -> list[Record]:
        return _records(self.rows)

    def summary(self) -> dict[str, Scalar]:
        """The counts ``attnsep sweep --json`` prints (``jobs``: the distinct jobs)."""
        return {
            "experiment": self.experiment,
            "preset": self.preset,
            "configs": len(self.configs),
            "jobs": len(set(self.job_hashes)),
            "records": len(self.records),
            **_engine_counts(self),
        }

    def report(self) -> dict[str, Any]:
        """The JSON object of ``attnsep sweep --json``: the counts, every job's hash (grid
        order) and every record as a plain dict (missing values ``None``)."""
        counts = {k: v for k, v in self.summary().items() if k not in ("preset", "records")}
        return {
            **counts,
            "job_hashes": list(self.job_hashes),
            "records": record_dicts(self.to_frame()),
        }

    def table(self, limit: int = 40) -> TextTable:
        """The records as ``attnsep sweep`` prints them: the columns that differ between
        records (at most ``limit`` rows), the fields equal in all as the caption, and what the
        engine did as a note (``engine.records.record_table``)."""
        from ..report.text_table import TextTable

        frame = self.to_frame()
        header, rows, same = record_table(frame, limit)
        s = self.summary()
        note = (
            f"{self.experiment}: {s['configs']} configs, {s['jobs']} jobs: {s['computed']} "
            f"computed, {s['cached']} from the store, {s['failed']} failed -> {s['store']}"
        )
        title = f"{self.experiment}: {len(frame)} records"
        columns, justify = tuple(header), "l" * len(header)
        return TextTable(title, columns, tuple(map(tuple, rows)), (note,), justify, same)

    def to_frame(self) -> pd.DataFrame:
        """One row per record of the sweep's jobs, config flattened (as ``load_runs``)."""
        return records_frame(self.rows)

    def plot(self) -> Figure:
        """The experiment's (first) figure drawn over the records of every grid point: the
        estimates with their intervals against the variable it sweeps (titles and fixed
        settings from the first grid point's config)."""
        name = self.experiment
        require(bool(self.configs), f"{name}: the sweep has no grid point, nothing to draw")
        config = parse_config(get(name).config_type, self.configs[0], name)
        return _drawn(name, self.records, config)

    def save(self, path: str | Path) -> Path:
        """The grid points, the stored rows with their records, the job hashes and the
        engine's counts in one ``.npz`` file (a JSON entry: no arrays); the path written."""
        meta = {
            "experiment": self.experiment,
            "preset": self.preset,
            "configs": saved.encode(list(self.configs)),
            "rows": saved.encode(list(self.rows)),
            "computed": self.computed,
            "cached": self.cached,
            "store": str(self.store),
            "job_hashes": list(self.job_hashes),
        }
        return saved.write(path, type(self).__name__, meta, {})

    @classmethod
    def from_saved(cls, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> SweepResult:
        """The result ``save`` wrote (its header ``meta``)."""
        return cls(
            experiment=str(meta["experiment"]),
            preset=str(meta["preset"]),
            configs=tuple(saved.decode(meta["configs"])),
            rows=tuple(saved.decode(meta["rows"])),
            computed=int(meta["computed"]),
            cached=int(meta["cached"]),
            store=Path(meta["store"]),
            job_hashes=tuple(meta["job_hashes"]),
        )

    def __repr__(self) -> str:
        return short(
            type(self).__name__,
            experiment=self.experiment,
            configs=len(self.configs),
            records=len(self.records),
            computed=self.computed,
            cached=self.cached,
        )


FRONTIER_SIZES = {"xor": ("d",), "select": ("T", "q")}
"""What a frontier point's size is, per task."""
FRONTIER_VALUES = {"xor": "params", "select": "width"}
"""The quantity a frontier compares, per task: trainable parameters (XOR), first-layer width
(selection)."""


@dataclass(frozen=True)
class FrontierResult:
    """Trainable parameters needed against problem size, the transformer beside the FCN
    (``task``: ``xor``, SPEC A7.6; ``select``, SPEC Part C): ``data`` is the summary of the
    ``separation-xor`` or ``separation-select`` experiment's records, ``experiment`` its run
    through the engine."""

    task: str
    data: dict[str, Any]
    experiment: ExperimentResult = field(repr=False)

    def report(self) -> dict[str, Any]:
        """The JSON object of ``attnsep frontier xor|select``."""
        return self.data

    def summary(self) -> dict[str, Scalar]:
        """Flat: the verdict; per model and size the compared quantity with its interval
        (``transformer_params_d64``, ``_low``, ``_high``; ``fcn_width_T16_q2``), and the fitted
        laws (``transformer_exponent``; per ``q``: ``q2_transformer_exponent``, ...)."""
        data, value = self.data, FRONTIER_VALUES[self.task]
        out: dict[str, Scalar] = {"task": self.task, "verdict": self.experiment.verdict}
        out.update(flat({k: v for k, v in data.items() if k not in ("transformer", "fcn", "fit")}))
        for model in ("transformer", "fcn"):
            for point in data[model]:
                size = "_".join(f"{key}{point[key]}" for key in FRONTIER_SIZES[self.task])
                key = f"{model}_{value}_{size}"
                out[key] = point.get(value)
                for end in ("low", "high"):
                    if f"{value}_{end}" in point:
                        out[f"{key}_{end}"] = point[f"{value}_{end}"]
        fits = data["fit"]
        if isinstance(fits, dict):  # xor: per model
            out.update(flat(fits))
        else:  # select: per q
            for fit in fits:
                out.update(flat({k: v for k, v in fit.items() if k != "q"}, f"q{fit['q']}_"))
        return out

    def table(self) -> TextTable:
        """The table ``attnsep frontier`` prints: a title, columns, rows and notes."""
        from ..report.frontier_tables import select_table, xor_table

        return (xor_table if self.task == "xor" else select_table)(self.data)

    def to_frame(self) -> pd.DataFrame:
        """The printed table as a DataFrame (intervals as text)."""
        import pandas as pd

        text = self.table()
        return pd.DataFrame(list(text.rows), columns=list(text.columns))

    def plot(self) -> Figure:
        """The frontier as the experiment draws it: each model's size against the problem
        size, with intervals."""
        return self.experiment.plot()

    def save(self, path: str | Path) -> Path:
        """The frontier's data and its experiment's run in one ``.npz`` file (a JSON entry: no
        arrays); the path written."""
        meta = {"task": self.task, "data": saved.encode(self.data)}
        meta["experiment"] = self.experiment.content()
        return saved.write(path, type(self).__name__, meta, {})

    @classmethod
    def from_saved(cls, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> FrontierResult:
        """The result ``save`` wrote (its header ``meta``)."""
        experiment = ExperimentResult.from_saved(meta["experiment"])
        return cls(str(meta["task"]), saved.decode(meta["data"]), experiment)

    def __repr__(self) -> str:
        sizes = len(self.data.get("transformer", ()))
        return short(
            type(self).__name__, task=self.task, sizes=sizes, verdict=self.experiment.verdict
        )
