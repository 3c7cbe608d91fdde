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

__all__ = ["MODULES", "built_in", "catalog", "claim_ids", "declared", "load_all", "unregister"]

FIELDS = ("name", "claim", "title", "paper")


def declared(module: str) -> dict[str, Any] | None:
    """The name, claim, title, paper and companions that ``attnsep.experiments.<module>``
    registers, read from the source of its ``register(Experiment(...))`` without importing it;
    ``None`` unless the first four are plain strings there and the companions a literal."""
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
    keywords = {k.arg: k.value for k in calls[0].keywords} if calls else {}
    values = {k: getattr(v, "value", None) for k, v in keywords.items()}
    if not all(isinstance(values.get(f), str) for f in FIELDS):
        return None
    try:
        companions = ast.literal_eval(keywords["companions"]) if "companions" in keywords else ()
    except ValueError:
        return None
    return {**{f: values[f] for f in FIELDS}, "companions": list(companions)}


@cache
def built_in() -> tuple[dict[str, Any], ...] | None:
    """Name, claim, title, paper and companions of every module of ``MODULES``, read from the
    sources (:func:`declared`); ``None`` when a source does not write them out."""
    found = tuple(declared(module) for module in MODULES)
    known = tuple(entry for entry in found if entry)
    return known if len(known) == len(found) else None


def catalog() -> tuple[dict[str, Any], ...]:
    """Name, claim, title, paper and companions of every experiment, in registry order: the
    modules' (``MODULES``) read from the sources (:func:`built_in`), so that listing them loads
    neither numpy nor torch, then every experiment registered since (``base.register``, e.g.
    from a notebook); from the registry itself when a source does not write them out."""

    def entry(e: Any) -> dict[str, Any]:
        return {**{f: getattr(e, f) for f in FIELDS}, "companions": list(e.companions)}

    known = built_in()
    if known is None:
        load_all()
        return tuple(entry(e) for e in REGISTRY.values())
    names = {item["name"] for item in known}
    return known + tuple(entry(e) for e in REGISTRY.values() if e.name not in names)


def claim_ids() -> list[str]:
    """Every entry a reproduction judges, in the report's order: each experiment's claim, then
    its companions (SPEC A7, B5, C)."""
    return [ident for item in catalog() for ident in (item["claim"], *item["companions"])]


def unregister(name: str) -> None:
    """Remove the experiment registered as ``name`` from outside the built-in modules (e.g.
    one a notebook registered for a try); a built-in one (``MODULES``) cannot be removed."""

    require(
        name not in {entry["name"] for entry in built_in() or ()},
        f"experiment {name!r} is built in; only one registered from outside can be removed",
    )
    del REGISTRY[one_of("experiment", name, sorted(REGISTRY))]
