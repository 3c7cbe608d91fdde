"""The layering table of ``docs/layout.md`` is the package's import graph, folder by folder."""

from __future__ import annotations

import re
from pathlib import Path

from test_import_graph import graph

DOC = Path(__file__).resolve().parent.parent / "docs" / "layout.md"
MAPS = {"attention", "positional_encodings", "embeddings"}


def floor(module: str) -> str | None:
    """A module's floor: its folder under ``attnsep`` (the maps' three modules are one)."""
    parts = module.split(".")
    if len(parts) < 2:
        return None  # the package itself
    return "maps" if parts[1] in MAPS else "results" if parts[1] == "results" else parts[1]


def measured() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for module, imports in graph().items():
        if (mine := floor(module)) is None:
            continue
        out.setdefault(mine, set())
        out[mine] |= {f for m in imports if (f := floor(m)) not in (None, mine)}
    return out


def documented() -> dict[str, set[str]]:
    rows = re.findall(r"^\| (\w+) \|([\w, ]*)\|$", DOC.read_text(encoding="utf-8"), re.M)
    return {name: set(text.replace(",", " ").split()) for name, text in rows if name != "floor"}


def test_the_layering_table_is_the_import_graph() -> None:
    assert documented() == measured()
