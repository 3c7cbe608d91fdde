"""One module per claim of SPEC A7 and B5; ``load_all`` fills the registry, ``catalog``
lists the claims without importing the modules (their configs take half a second to build),
and the experiments registered from outside them (``base.register``; ``unregister``)."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path
from typing import Any

from ..core.validate import one_of, require
from .modules import MODULES, load_all
from .registry import REGISTRY

__all__ = ["MODULES", "built_in", "catalog", "declared", "load_all", "unregister"]

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
def built_in() -> tuple[dict[str, str], ...] | None:
    """Name, claim, title and paper of every module of ``MODULES``, read from the sources
    (:func:`declared`); ``None`` when a source does not write them out."""
    found = tuple(declared(module) for module in MODULES)
    known = tuple(entry for entry in found if entry)
    return known if len(known) == len(found) else None


def catalog() -> tuple[dict[str, str], ...]:
    """Name, claim, title and paper of every experiment, in registry order: the modules'
    (``MODULES``) read from the sources (:func:`built_in`), so that listing them loads neither
    numpy nor torch, then every experiment registered since (``base.register``, e.g. from a
    notebook); from the registry itself when a source does not write them out."""

    known = built_in()
    if known is None:
        load_all()
        return tuple({f: getattr(e, f) for f in FIELDS} for e in REGISTRY.values())
    names = {entry["name"] for entry in known}
    added = (e for e in REGISTRY.values() if e.name not in names)
    return known + tuple({f: getattr(e, f) for f in FIELDS} for e in added)


def unregister(name: str) -> None:
    """Remove the experiment registered as ``name`` from outside the built-in modules (e.g.
    one a notebook registered for a try); a built-in one (``MODULES``) cannot be removed."""

    require(
        name not in {entry["name"] for entry in built_in() or ()},
        f"experiment {name!r} is built in; only one registered from outside can be removed",
    )
    del REGISTRY[one_of("experiment", name, sorted(REGISTRY))]
