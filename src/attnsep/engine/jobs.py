"""Job specs and grid expansion.

A job is ``(experiment name, config dict)``; its hash names it in the store, so the same
job is never computed twice. Grids expand ``key=v1,v2`` into the cartesian product of
configs, each validated by the experiment's typed config; a single value of a list field
stands for the list of it (``d_values=64,128``: ``[64]``, then ``[128]``).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, get_origin

from ..core.io import named
from ..core.validate import one_of, require, shown
from ..experiments import base


@dataclass(frozen=True)
class Job:
    experiment: str
    config: dict[str, Any]

    @property
    def key(self) -> str:
        """Content hash of the experiment, its version and the full config."""
        return key_at(self.experiment, base.get(self.experiment).version, self.config)

    @property
    def seed(self) -> int:
        return int(self.config.get("seed", 0))


def key_at(experiment: str, version: int, config: dict[str, Any]) -> str:
    """The hash of a job of ``experiment`` at ``version`` with ``config`` (``Job.key``)."""
    blob = json.dumps([experiment, version, config], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def jobs_for(experiment: str, config: base.ExperimentConfig) -> list[Job]:
    """The experiment's jobs for ``config`` (its ``split``)."""
    exp = base.get(experiment)
    return [Job(experiment, part.model_dump(mode="json")) for part in exp.split(config)]


def parse_value(text: str) -> Any:
    """A command-line value: JSON when it parses (numbers, lists, booleans), else the string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parse_assignment(text: str, *, grid: bool) -> tuple[str, Any]:
    """``key=value`` (``--set``) or ``key=v1,v2,...`` (``--grid``: a list of values)."""
    key, sep, raw = text.partition("=")
    require(
        bool(sep) and key.strip() != "" and raw != "",
        f"expected key=value{',value...' if grid else ''}, got {text!r}",
    )
    if grid:
        values = (
            parse_value(raw) if raw.startswith("[") else [parse_value(v) for v in raw.split(",")]
        )
        require(
            isinstance(values, list) and len(values) > 0,
            f"--grid {key} needs a list of values, got {raw!r}",
        )
        return key.strip(), values
    return key.strip(), parse_value(raw)


def load_config_file(path: str) -> dict[str, Any]:
    """Read a TOML (``.toml``) or YAML (``.yaml``/``.yml``) file with ``set`` and ``grid`` tables
    (or plain top-level keys, taken as ``set``)."""
    file = named(path)
    require(file.is_file(), f"config file {path!r} does not exist")
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"config file {path!r} is not UTF-8 text (byte {err.start})") from None
    except OSError as err:
        raise ValueError(f"cannot read config file {path!r}: {err.strerror}") from None
    if file.suffix == ".toml":
        import tomllib

        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as err:
            raise ValueError(f"config file {path!r} is not valid TOML: {err}") from None
    elif file.suffix in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError:
            raise ValueError(
                "YAML config files need PyYAML (pip install pyyaml); use TOML instead"
            ) from None
        try:
            data = yaml.safe_load(text) or {}
        except yaml.YAMLError as err:
            raise ValueError(
                f"config file {path!r} is not valid YAML: {str(err).splitlines()[0]}"
            ) from None
    else:
        raise ValueError(f"config file must end in .toml, .yaml or .yml, got {path!r}")
    require(isinstance(data, dict), f"config file {path!r} must hold a table of keys")
    tables = {"set": data.get("set", {}), "grid": data.get("grid", {})}
    if not set(data) <= {"set", "grid"}:
        tables = {"set": data, "grid": {}}
    for name, table in tables.items():
        require(isinstance(table, dict), f"config file {path!r}: {name} must be a table of keys")
    require(
        any(tables.values()),  # a sweep of the preset alone needs no file: a mistake
        f"config file {path!r} is empty: give a set or a grid table with at least one field",
    )
    return {"set": dict(tables["set"]), "grid": dict(tables["grid"])}


def expand_grid(
    experiment: str, preset: str, fixed: dict[str, Any], grid: dict[str, list[Any]]
) -> list[base.ExperimentConfig]:
    """One validated config per point of the cartesian product of ``grid`` over ``fixed``."""
    exp = base.get(experiment)
    both = sorted(set(fixed) & set(grid))
    require(
        not both, f"{both[0]} is given both as a fixed value and as a grid axis" if both else ""
    )
    for key, values in grid.items():
        require(
            isinstance(values, list) and len(values) > 0,
            f"grid axis {key} needs a non-empty list of values, got {values!r}",
        )
    keys = sorted(grid)
    fixed = {key: as_field(exp.config_type, key, value) for key, value in fixed.items()}
    configs = []
    for point in itertools.product(*(grid[k] for k in keys)):
        at = {k: as_field(exp.config_type, k, v) for k, v in zip(keys, point, strict=True)}
        configs.append(exp.config(preset, **fixed, **at))
    return configs


def as_field(config_type: type[base.ExperimentConfig], key: str, value: Any) -> Any:
    """``value`` for field ``key``: a single value of a list field stands for the list of it, so
    ``--grid d_values=64,128`` sweeps ``[64]`` and ``[128]`` and ``--set m_values=8`` is ``[8]``."""
    info = config_type.model_fields.get(key)
    listed = info is not None and get_origin(info.annotation) is list
    return [value] if listed and not isinstance(value, list) else value


def sweep_fields(
    config_file: str | Path | None,
    fixed: dict[str, Any] | Sequence[str],
    grid: dict[str, list[Any]] | Sequence[str],
) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """``(fixed, grid)`` of a sweep: the ``set`` and ``grid`` tables of ``config_file`` (if
    any), overridden field by field by ``fixed`` and ``grid``, each a dict or command-line
    assignments (``key=value``, ``key=v1,v2,...``: :func:`parse_assignment`)."""
    for name, given in (("fixed", fixed), ("grid", grid)):
        lines = isinstance(given, list | tuple) and all(isinstance(t, str) for t in given)
        if not isinstance(given, dict) and not lines:
            allowed = "a dict or a list of 'key=value' texts"
            raise TypeError(f"{name} must be {allowed}, got {shown(given)}")
    typed = isinstance(fixed, dict) and isinstance(grid, dict)
    if not isinstance(fixed, dict):
        fixed = dict(parse_assignment(text, grid=False) for text in fixed)
    if not isinstance(grid, dict):
        grid = dict(parse_assignment(text, grid=True) for text in grid)
    both = sorted(set(fixed) & set(grid))
    how = "as a fixed value and as a grid axis" if typed else "with --set and with --grid"
    require(not both, f"{both[0] if both else ''} is given both {how}")
    path = None if config_file is None else str(named(config_file, "config file"))
    loaded = {"set": {}, "grid": {}} if path is None else load_config_file(path)
    out, axes = dict(loaded["set"]), dict(loaded["grid"])
    for key, value in fixed.items():
        axes.pop(key, None)
        out[key] = value
    for key, values in grid.items():
        out.pop(key, None)
        axes[key] = values
    return out, axes


def check_experiment(name: str) -> None:
    """``name`` is a registered experiment's (read from the sources: nothing is imported)."""
    from ..experiments import catalog

    one_of("experiment", name, sorted(item["name"] for item in catalog()))


def sweep_jobs(
    experiment: str,
    preset: str,
    fixed: dict[str, Any] | Sequence[str] | None,
    grid: dict[str, list[Any]] | Sequence[str] | None,
    config_file: str | Path | None = None,
) -> tuple[list[base.ExperimentConfig], list[Job]]:
    """A sweep's validated grid points (:func:`sweep_fields`, :func:`expand_grid`) and their
    jobs, in grid order (``None``: no fields fixed, no grid)."""
    one_of("preset", preset, base.PRESETS)
    check_experiment(experiment)
    fields = sweep_fields(config_file, {} if fixed is None else fixed, {} if grid is None else grid)
    configs = expand_grid(experiment, preset, *fields)
    return configs, [job for config in configs for job in jobs_for(experiment, config)]


@cache
def git_commit() -> str | None:
    """The commit of the source checkout this package runs from, if it is one."""
    root = Path(__file__).resolve().parents[3]
    try:
        proc = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() or None if proc.returncode == 0 else None


def environment() -> dict[str, Any]:
    """Package versions, git commit, device and host, stored with every job."""
    from importlib import metadata

    import numpy
    import torch

    return {
        "versions": {
            "attnsep": metadata.version("attnsep"),
            "torch": torch.__version__,
            "numpy": numpy.__version__,
        },
        "git_commit": git_commit(),
        "device": torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu",
        "host": os.uname().nodename,
    }


def unique(jobs: list[Job]) -> list[Job]:
    """``jobs`` without repeats (same hash), in their first order."""
    seen: dict[str, Job] = {}
    for job in jobs:
        seen.setdefault(job.key, job)
    return list(seen.values())
