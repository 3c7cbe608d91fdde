"""What an experiment's config accepts, as plain data (``attnsep show``): each field's type,
default, limits and help, read from its pydantic field; the preset's values; the claim."""

from __future__ import annotations

import inspect
import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import to_jsonable_python

from ..configs import PRESET_HELP
from ..core.validate import Registered
from .base import Experiment, preset_overrides

CONSTRAINTS = ("ge", "gt", "le", "lt", "min_length", "max_length", "multiple_of")
"""The pydantic constraints a field's ``limits`` report, by their keyword."""


def type_name(annotation: Any) -> str:
    """A field's type as written, without its constraints: ``int``, ``list[int]``, ``int |
    None``, ``str`` for a ``Literal`` of strings; a nested model as ``{name: type, ...}``."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return type_name(args[0])
    if origin is Literal:
        return "str" if all(isinstance(a, str) for a in args) else "literal"
    if origin in (Union, types.UnionType):
        return " | ".join(type_name(a) for a in args)
    if origin is not None:
        return f"{getattr(origin, '__name__', origin)}[{', '.join(type_name(a) for a in args)}]"
    if annotation is type(None):
        return "None"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        inner = (f"{k}: {type_name(f.annotation)}" for k, f in annotation.model_fields.items())
        return "{" + ", ".join(inner) + "}"
    return getattr(annotation, "__name__", str(annotation))


def limits(annotation: Any, metadata: list[Any]) -> dict[str, Any]:
    """A field's constraints (``ge``, ``min_length``, ...), its ``choices`` (a ``Literal``), and
    those of a list's ``items``, a dict's ``keys`` and ``values`` (only the non-empty ones)."""
    out: dict[str, Any] = {
        key: getattr(item, key)
        for item in metadata
        for key in CONSTRAINTS
        if getattr(item, key, None) is not None
    }
    for item in metadata:  # a registry that may grow (``configs.AttentionName``)
        if isinstance(registry := getattr(item, "func", None), Registered):
            out["choices"] = sorted(registry.names)
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (Union, types.UnionType):  # ``X | None``: X's limits
        kinds = [a for a in args if a is not type(None)]
        return {**out, **limits(kinds[0], [])} if len(kinds) == 1 else out
    if origin is Annotated:
        return {**out, **limits(args[0], list(args[1:]))}
    if origin is Literal:
        out["choices"] = list(args)
    parts = {list: ("items",), set: ("items",), dict: ("keys", "values")}.get(origin, ())
    for part, arg in zip(parts, args, strict=False):
        inner = FieldInfo.from_annotation(arg)
        if found := limits(inner.annotation, inner.metadata):
            out[part] = found
    return out


def field_schema(name: str, info: FieldInfo) -> dict[str, Any]:
    """One field: ``name``, ``type``, ``default`` (JSON; ``None`` when ``required``),
    ``limits`` (:func:`limits`) and ``help`` (its description)."""
    required = info.is_required()
    value = None if required else info.get_default(call_default_factory=True)
    return {
        "name": name,
        "type": type_name(info.annotation),
        "default": to_jsonable_python(value),
        "required": required,
        "limits": limits(info.annotation, info.metadata),
        "help": info.description or "",
    }


def describe(experiment: Experiment[Any]) -> dict[str, Any]:
    """An experiment as ``attnsep show`` prints it: the claim (name, claim, title, paper,
    report section), its versions and the master seeds its criterion was tuned on, the config's
    docstring (``description``: what is run and the criterion; a line per paragraph), every field
    (:func:`field_schema`) and per preset the values it sets (as its config holds them)."""
    config = experiment.config_type
    paragraphs = inspect.cleandoc(config.__doc__ or "").split("\n\n")
    presets = {}
    for preset in PRESET_HELP:
        typed = experiment.config(preset).model_dump(mode="json")
        presets[preset] = {key: typed[key] for key in preset_overrides(experiment, preset)}
    return {
        "name": experiment.name,
        "claim": experiment.claim,
        "title": experiment.title,
        "kind": experiment.kind,
        "paper": experiment.paper,
        "section": experiment.section,
        "version": experiment.version,
        "criterion_version": experiment.criterion_version,
        "tuned_on": list(experiment.tuned_on),
        "description": "\n\n".join(" ".join(p.split()) for p in paragraphs if p.strip()),
        "fields": [field_schema(name, info) for name, info in config.model_fields.items()],
        "presets": presets,
        "preset_help": dict(PRESET_HELP),
    }
