"""Stored records for people and scripts: a compact text table, plain JSON and CSV / Parquet
files of a records frame (``Store.frame`` / ``records_frame``), e.g. what a sweep computed."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ..core.validate import one_of

FIXED = ("experiment", "config_hash")
"""Columns left out of the table: the same for all of a sweep's records, or too long."""


def _varies(column) -> bool:
    return column.astype(str).nunique() > 1


def shown_columns(frame) -> tuple[list[str], list[str]]:
    """``(shown, same)``: ``job_id``, the record fields and then the config columns whose
    value differs between records (a narrow terminal keeps the left ones); and the record
    fields (set somewhere) equal in all of them (with a single record every field is shown)."""
    config = [c for c in frame.columns if c.startswith("config.")]
    fields = [
        c for c in frame.columns if c not in (*FIXED, "job_id", *config) and frame[c].notna().any()
    ]
    many = len(frame) > 1
    shown = [c for c in ("job_id",) if c in frame.columns]
    shown += [c for c in fields if not many or _varies(frame[c])]
    shown += [c for c in config if _varies(frame[c])]
    return shown, [c for c in fields if c not in shown]


CELL = 60
"""Characters of a value in the table: a longer one (a per-replica list, a nested record) is
cut with ``…``; JSON and the exported files hold it whole."""


def cell(value: Any) -> str:
    """A value as a short string: floats to 4 significant digits, missing as empty, at most
    ``CELL`` characters."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    text = f"{value:.4g}" if isinstance(value, float) else str(value)
    return text if len(text) <= CELL else text[: CELL - 1] + "…"


def record_table(frame, limit: int = 40) -> tuple[list[str], list[list[str]], str]:
    """``(header, rows, same)`` for at most ``limit`` records: the columns that differ
    (:func:`shown_columns`), a last row ``… N more records`` when some are left out, and
    ``same``: ``name=value, ...`` of the fields equal in every record."""
    header, same = shown_columns(frame)
    rows = [[cell(v) for v in values] for values in frame[header].head(limit).itertuples(False)]
    if len(frame) > limit and header:
        rows.append([f"… {len(frame) - limit} more records"] + [""] * (len(header) - 1))
    constant = ", ".join(f"{name}={cell(frame[name].iloc[0])}" for name in same)
    return header, rows, constant


def plain(value: Any) -> Any:
    """A frame's cell as a plain Python value; missing (``NaN``) as ``None``."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def record_dicts(frame) -> list[dict[str, Any]]:
    """Every record as a plain JSON-able dict (missing values as ``None``)."""
    return [{k: plain(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]


EXPORT_FORMATS = ("csv", "parquet")


def export(frame, target: Path, fmt: str) -> None:
    """Write the records table ``frame`` to ``target`` as CSV or Parquet, atomically (a failed
    write leaves nothing behind)."""
    from ..core.io import atomic_write

    one_of("format", fmt, EXPORT_FORMATS)
    write = frame.to_csv if fmt == "csv" else frame.to_parquet
    atomic_write(target, lambda handle: write(handle, index=False))
