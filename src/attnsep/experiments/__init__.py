"""One module per claim of SPEC A7 and B5; ``load_all`` fills the registry, ``catalog``
lists the claims without importing the modules (their configs take half a second to build)."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path
from typing import Any

from .modules import MODULES, load_all

__all__ = ["MODULES", "catalog", "declared", "load_all"]

FIELDS = ("name", "claim", "title", "paper")


def declared(module: str) -> dict[str, str] | None:
    """The name, claim, title and paper that ``attnsep.experiments.<module>`` registers, read
    from the source of its ``register(Experiment(...))`` without importing it; ``None`` unless
    each is a plain string there."""
    source = Path(__file__).with_name(f"{module}.py").read_text(encoding="utf-8")
    start = re.search(r"^(?:\w+ = )?register\(", source, re.MULTILINE)  # parse from there on
    try:
        statements = ast.parse(source[start.start() :] if start else source).body
    except SyntaxError:
        return None
    calls = [
        node
        for statement in statements
        if isinstance(statement, ast.Assign | ast.Expr)
        for node in ast.walk(statement.value)
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Experiment"
    ]
    values: dict[str | None, Any] = (
        {k.arg: getattr(k.value, "value", None) for k in calls[0].keywords} if calls else {}
    )
    return (
        {f: values[f] for f in FIELDS}
        if all(isinstance(values.get(f), str) for f in FIELDS)
        else None
    )


@cache
def catalog() -> tuple[dict[str, str], ...]:
    """Name, claim, title and paper of every experiment, in registry order: read from the
    sources (:func:`declared`), so that listing them loads neither numpy nor torch; from the
    registry itself when a source does not write them out."""
    found = tuple(declared(module) for module in MODULES)
    known = tuple(entry for entry in found if entry)
    if len(known) == len(found):
        return known
    from .base import REGISTRY

    load_all()
    return tuple({f: getattr(e, f) for f in FIELDS} for e in REGISTRY.values())
