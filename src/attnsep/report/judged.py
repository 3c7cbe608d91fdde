"""Judged entries kept beside the report, so that a report rebuilt from an unchanged store
recomputes nothing (no verdict, no figure).

An experiment's entries are kept in ``OUT/.judged/NAME.json`` under a key that changes with
anything they depend on: the package's code and data files (criteria, pre-registered error
rates), the preset, the master seed, how the error rates are attached, and the identity of every
stored row judged (its job, row id, status and finish time), on this seed and on the other seeds
whose verdicts are listed beside it. Entries are reused only when the key matches and every
figure they name is still in ``OUT``.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..core.io import atomic_write

FOLDER = ".judged"
PACKAGE = Path(__file__).resolve().parent.parent


@lru_cache(maxsize=1)
def code_digest() -> str:
    """A digest of the package's source and data files (any edit changes every key)."""
    digest = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*")):
        if path.suffix in (".py", ".json", ".j2", ".css") and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(PACKAGE)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def key(parts: dict[str, Any]) -> str:
    """The key of one experiment's entries from what they depend on (module docstring)."""
    text = json.dumps({"code": code_digest(), **parts}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def load(out: Path, name: str, wanted: str) -> list[dict[str, Any]] | None:
    """The entries kept for ``name`` under key ``wanted``, or ``None`` (none kept, another key,
    a figure missing, a file that does not read)."""
    path = out / FOLDER / f"{name}.json"
    try:
        kept = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if kept.get("key") != wanted:
        return None
    claims = kept["claims"]
    figures = [figure for claim in claims for figure in claim.get("figures", [])]
    return claims if all((out / figure).is_file() for figure in figures) else None


def save(out: Path, name: str, wanted: str, claims: list[dict[str, Any]]) -> None:
    """Keep ``claims`` for ``name`` under key ``wanted`` (the file replaced whole)."""
    folder = out / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"key": wanted, "claims": claims})
    atomic_write(folder / f"{name}.json", lambda handle: handle.write(text.encode()))
