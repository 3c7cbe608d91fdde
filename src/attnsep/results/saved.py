"""The file of a saved result: ``Result.save(path)`` writes it, ``attnsep.load(path)`` reads it.

One ``.npz`` (format version ``VERSION``): the result's arrays under their own names, and one
entry ``attnsep``, the UTF-8 bytes (``uint8``) of a JSON object ``{"type": <class name>,
"version": 1, ...}`` with the config (``model_dump(mode="json")``) and every scalar and
plain-data field; the entries the older files held stay beside it (``older_entries``).

Why ``.npz``: numpy is needed anyway; arrays keep their dtype and shape bit for bit; any numpy
reads the file without attnsep (``numpy.load(path)["W"]``); ``--save`` wrote ``.npz`` before
(those files still load: ``results.files``); and it is read with ``allow_pickle=False``, so
loading a file never runs code.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

import numpy as np

from ..core.io import atomic_write, load_npz, writable_target
from ..core.validate import require

HEADER = "attnsep"
"""The name of the JSON entry."""
VERSION = 1
"""The format written; files of a later version are refused."""


def write(
    path: str | os.PathLike[str], kind: str, meta: dict[str, Any], arrays: dict[str, Any]
) -> Path:
    """Write ``arrays`` and the header ``{"type": kind, "version": VERSION, **meta}``
    atomically (a temporary file beside ``path``, then renamed); the path written."""
    target = writable_target(path, ".npz")
    header = json.dumps({"type": kind, "version": VERSION, **meta})
    entries = {name: np.asarray(value) for name, value in arrays.items()}
    require(HEADER not in entries, f"an array may not be named {HEADER!r}")
    for name, value in entries.items():
        require(value.dtype != object, f"array {name!r} holds Python objects; not saved")
    entries[HEADER] = np.frombuffer(header.encode("utf-8"), dtype=np.uint8)

    def dump(handle: IO[bytes]) -> None:
        np.savez(handle, **entries)  # type: ignore[arg-type]  # numpy's stub: allow_pickle

    return atomic_write(target, dump)


def older_entries(**values: Any) -> dict[str, np.ndarray]:
    """The entries the files of ``--save`` held before this format (a scalar as a 0-d array,
    a dict as JSON text), kept beside the header so that code reading those files still
    works; ``load`` reads the header."""
    return {
        name: np.array(json.dumps(value) if isinstance(value, dict) else value)
        for name, value in values.items()
    }


def encode(data: Any) -> Any:
    """Plain data as JSON data that ``decode`` turns back into equal data: a tuple as
    ``{"__tuple__": [...]}``, a dict with a key other than text (a verdict's ``{4: ...}``) as
    ``{"__items__": [[key, value], ...]}``."""
    if isinstance(data, tuple):
        return {"__tuple__": [encode(item) for item in data]}
    if isinstance(data, list):
        return [encode(item) for item in data]
    if isinstance(data, dict):
        if all(isinstance(key, str) for key in data):
            return {key: encode(value) for key, value in data.items()}
        return {"__items__": [[encode(key), encode(value)] for key, value in data.items()]}
    return data


def decode(data: Any) -> Any:
    """The data ``encode`` wrote."""
    if isinstance(data, list):
        return [decode(item) for item in data]
    if isinstance(data, dict):
        if set(data) == {"__tuple__"}:
            return tuple(decode(item) for item in data["__tuple__"])
        if set(data) == {"__items__"}:
            return {_key(decode(key)): decode(value) for key, value in data["__items__"]}
        return {key: decode(value) for key, value in data.items()}
    return data


def _key(key: Any) -> Any:
    return tuple(key) if isinstance(key, list) else key


def text(entry: np.ndarray) -> str:
    """A text entry: UTF-8 bytes (``uint8``, this format) or a numpy string (older files)."""
    if entry.dtype == np.uint8:
        return entry.tobytes().decode("utf-8")
    require(entry.dtype.kind == "U" and entry.ndim == 0, "a text entry is not text")
    return str(entry[()])


def read(path: str | os.PathLike[str]) -> tuple[dict[str, Any] | None, dict[str, np.ndarray]]:
    """The header (``None`` for an ``.npz`` without one: an older file, or not attnsep's) and
    the arrays of the file at ``path``; anything else is a one-line ``ValueError``."""
    name = str(path)
    refused = f"{name!r} is not a saved attnsep result"
    require(Path(path).is_file(), f"no file {name!r}")
    try:
        arrays = load_npz(path)  # never unpickles: a file of Python objects is refused
    except ValueError as err:
        raise ValueError(f"{refused}: it {str(err).replace(repr(name) + ' ', '', 1)}") from None
    for key, value in arrays.items():
        require(isinstance(value, np.ndarray), f"{refused} (entry {key!r} is not an array)")
    if HEADER not in arrays:
        return None, arrays
    try:
        header = json.loads(text(arrays.pop(HEADER)))
    except (ValueError, UnicodeDecodeError) as err:
        raise ValueError(f"{refused} (its header is not JSON: {_first_line(err)})") from None
    kind = header.get("type") if isinstance(header, dict) else None
    version = header.get("version") if isinstance(header, dict) else None
    require(
        isinstance(kind, str) and isinstance(version, int),
        f"{refused} (its header names no type and version)",
    )
    assert isinstance(version, int)  # for the type checker: checked above
    require(
        version <= VERSION,
        f"{name!r} was saved by a newer attnsep (format {version}; this one reads {VERSION})",
    )
    return header, arrays


def _first_line(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    return lines[0] if lines else type(err).__name__
