"""What every result type shares: the flat ``summary()``, the one-line ``repr``, configs in
and out of the saved file's JSON, and a loss band for ``plot()``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from pydantic import BaseModel

Scalar = int | float | str | bool | None
"""A value of ``summary()``."""
M = TypeVar("M", bound=BaseModel)


def scalar(value: Any) -> Scalar:
    """``value`` as a plain Python scalar: numpy scalars unwrapped, a path or a list (a
    config's tuple, say) as text."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, list | tuple):
        return json.dumps(value)
    if value is None or isinstance(value, int | float | str | bool):
        return value
    return str(value)


def is_estimate(value: Any) -> bool:
    """An estimate with its interval: ``{name, value, low, high}`` (``metrics.stats``)."""
    return isinstance(value, Mapping) and {"value", "low", "high"} <= set(value)


def flat(data: Mapping[str, Any], prefix: str = "") -> dict[str, Scalar]:
    """``data`` as one level of scalars: a nested dict's keys joined by ``_`` (``loss_after:
    {mean, median}`` -> ``loss_after_mean``, ``loss_after_median``) without its per-replica
    ``values``; an estimate -> ``key``, ``key_low``, ``key_high``; a list as JSON text."""
    out: dict[str, Scalar] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if is_estimate(value):
            out[name] = scalar(value["value"])
            out[f"{name}_low"] = scalar(value["low"])
            out[f"{name}_high"] = scalar(value["high"])
        elif isinstance(value, Mapping):
            out.update(flat({k: v for k, v in value.items() if k != "values"}, f"{name}_"))
        else:
            out[name] = scalar(value)
    return out


def short(kind: str, **fields: Any) -> str:
    """``kind(field=value, ...)`` on one line: floats to 4 digits, long text cut."""
    parts = []
    for key, value in fields.items():
        if isinstance(value, float):
            text = f"{value:.4g}"
        elif isinstance(value, str):
            text = repr(value if len(value) <= 40 else value[:37] + "...")
        else:
            text = repr(value)
        parts.append(f"{key}={text}")
    return f"{kind}({', '.join(parts)})"


def dump(config: BaseModel) -> dict[str, Any]:
    """A config as JSON data (tuples as lists)."""
    return config.model_dump(mode="json")


def config_from(config_type: type[M], data: Any) -> M:
    """The config saved as ``dump(config)``, validated again (JSON lists stand for tuples)."""
    return config_type.model_validate_json(json.dumps(data))


def band(ax: Any, values: np.ndarray, label: str) -> None:
    """Median over replicas (rows of ``values``, ``E x steps``; ``NaN``: a replica that had
    stopped) and its 10-90% band, on a log axis."""
    steps = np.arange(values.shape[1])
    floor = np.where(np.isnan(values), np.nan, np.maximum(values, 1e-16))
    (line,) = ax.plot(steps, np.nanmedian(floor, axis=0), label=f"{label}: median")
    low, high = np.nanquantile(floor, 0.1, axis=0), np.nanquantile(floor, 0.9, axis=0)
    ax.fill_between(steps, low, high, color=line.get_color(), alpha=0.2, label="10-90% of replicas")
    ax.set_yscale("log")
