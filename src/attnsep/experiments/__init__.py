"""One package per claim of SPEC A7 and B5; ``load_all`` fills the registry, ``catalog`` lists
the claims from pure data without importing them (their configs take half a second to build),
and the experiments registered from outside them (``base.register``; ``unregister``)."""

from __future__ import annotations

from typing import Any

from ..core.validate import one_of, require
from .built_ins import BUILT_IN, FIELDS
from .modules import MODULES, load_all
from .registry import REGISTRY

__all__ = ["FIELDS", "MODULES", "built_in", "catalog", "claim_ids", "load_all", "unregister"]


def built_in() -> tuple[dict[str, Any], ...]:
    """Name, claim, title, paper and companions of every built-in experiment, in the report's
    order (``built_ins.BUILT_IN``)."""
    return tuple(
        {**{f: e[f] for f in FIELDS}, "companions": list(e["companions"])} for e in BUILT_IN
    )


def catalog() -> tuple[dict[str, Any], ...]:
    """Name, claim, title, paper and companions of every experiment, in registry order: the
    built-in ones (:func:`built_in`, pure data, so that listing them loads neither numpy nor
    torch), then every experiment registered since (``base.register``, e.g. from a notebook)."""

    def entry(e: Any) -> dict[str, Any]:
        return {**{f: getattr(e, f) for f in FIELDS}, "companions": list(e.companions)}

    known = built_in()
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
        name not in {entry["name"] for entry in BUILT_IN},
        f"experiment {name!r} is built in; only one registered from outside can be removed",
    )
    del REGISTRY[one_of("experiment", name, sorted(REGISTRY))]
