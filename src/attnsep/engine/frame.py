"""The records frame: one pandas row per record of a store's finished jobs, each column of one
type so that it exports to CSV and Parquet alike (``Store.frame``, ``engine.records``)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any


def records_frame(rows: Iterable[dict[str, Any]]):
    """One pandas row per record of the ``done`` rows: the job's ``job_id``, ``experiment``,
    ``config_hash``, its config flattened to ``config.<field>`` columns, then the record's fields.

    A column holds one type, so that the table exports to CSV and Parquet alike: a column whose
    values are all numbers, all strings or all booleans keeps them (a missing value is empty);
    any other column (lists, dicts, or kinds mixed across experiments, e.g. ``config.seeds``
    an integer in one experiment and a list in another) holds each value as JSON text.
    """
    import pandas as pd

    flat = []
    for row in rows:
        if row["status"] != "done":
            continue
        for record in row["records"]:
            flat.append(
                {
                    "job_id": row["id"],
                    "experiment": row["experiment"],
                    "config_hash": row["config_hash"],
                    **{f"config.{k}": v for k, v in row["config"].items()},
                    **record,
                }
            )
    names = list(dict.fromkeys(name for item in flat for name in item))
    columns = {name: one_kind([item.get(name) for item in flat]) for name in names}
    return pd.DataFrame(columns, columns=names)


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return "str" if isinstance(value, str) else "json"


def one_kind(values: list[Any]) -> list[Any]:
    """``values`` as they are when the non-missing ones are all numbers, all strings or all
    booleans; else each non-missing value as JSON text (missing ones stay ``None``)."""
    kinds = {_kind(v) for v in values if v is not None}
    if len(kinds) <= 1 and "json" not in kinds:
        return values
    return [None if v is None else json.dumps(v) for v in values]
