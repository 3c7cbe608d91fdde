"""A griffe extension for the API reference: defaults shown as their values, not as the code.

``attnsep.api`` takes its defaults from the configs (``m: int = default(OneStepConfig, "m")``,
``store = DEFAULT_PATH``, ``eval_size = EVAL_SIZE``), so that each default is written once.
Read from the source, such a default is an expression a reader cannot evaluate; this extension
imports the function (or class) at build time and writes each such default as the value it
has: ``m: int = 32``, ``store: str | Path = Path('results/attnsep.sqlite')``. A literal default
(``0``, ``"quick"``, ``None``, ``()``) is left as written. It covers the parameters of every
function and method (a dataclass's ``__init__`` too) and the values of class attributes.

Configured in ``mkdocs.yml`` after griffe's ``dataclasses`` extension, which must make the
dataclasses' ``__init__`` first::

    extensions:
      - dataclasses
      - docs/griffe_defaults.py

A default whose value has no readable ``repr`` (``torch.float64``, a ``typer.Option``, a
``lambda``) keeps the text it has in the source, which is then the better one to show; so does
one whose module does not import. ``tests/test_api_reference.py`` checks that the rendered
reference shows no such expression where a value belongs.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import logging
from pathlib import PurePath
from typing import Any

import griffe

LOG = logging.getLogger("mkdocs.plugins.griffe_defaults")
MISSING = object()
KEEP = ("dataclasses.field", "pydantic.Field", "pydantic.fields.Field")
"""Calls whose text is their meaning (a dataclass's ``field(...)``): never replaced."""


def is_literal(text: str) -> bool:
    """Whether ``text`` is a Python literal (``0``, ``"quick"``, ``None``, ``(16, 32)``)."""
    try:
        ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


def value_text(value: Any) -> str | None:
    """``value`` as Python source a reader can read (its ``repr``, as griffe shows a literal
    default; a path as ``Path('...')``); ``None`` when the ``repr`` is not source
    (``<object at 0x...>``, ``torch.float64``)."""
    if isinstance(value, PurePath):
        return f"Path({value.as_posix()!r})"
    if isinstance(value, tuple | list):
        items = [value_text(item) for item in value]
        if any(item is None for item in items):
            return None
        inner = ", ".join(items)  # type: ignore[arg-type]
        if isinstance(value, list):
            return f"[{inner}]"
        return f"({inner},)" if len(items) == 1 else f"({inner})"
    text = repr(value)
    return text if is_literal(text) else None


def runtime(obj: griffe.Object) -> Any:
    """The live object of ``obj``: its module imported, then its path inside it followed."""
    module = obj.module
    found: Any = importlib.import_module(module.path)
    for part in obj.path[len(module.path) + 1 :].split("."):
        found = getattr(found, part)
    return found


def replaceable(value: Any) -> bool:
    """Whether a default or attribute value is an expression to evaluate."""
    if value is None:
        return False
    if isinstance(value, griffe.ExprCall) and value.canonical_path in KEEP:
        return False
    return not is_literal(str(value))


class RuntimeDefaults(griffe.Extension):
    """Replace each non-literal default (and class attribute value) by its value."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        self.walk(pkg, set())

    def walk(self, obj: griffe.Object, seen: set[str]) -> None:
        if obj.path in seen:
            return
        seen.add(obj.path)
        for member in list(obj.members.values()):
            if member.is_alias:
                continue
            if isinstance(member, griffe.Function):
                self.function(member)
            elif isinstance(member, griffe.Attribute) and isinstance(obj, griffe.Class):
                self.attribute(member, obj)
            elif isinstance(member, griffe.Class | griffe.Module):
                self.walk(member, seen)

    def function(self, func: griffe.Function) -> None:
        todo = [p for p in func.parameters if replaceable(p.default)]
        if not todo:
            return
        where = func.parent if func.name == "__init__" and func.parent else func
        try:
            signature = inspect.signature(runtime(where))
        except Exception as err:  # noqa: BLE001 (any failure: the defaults stay as written)
            LOG.debug("griffe_defaults: %s: %s", func.path, err)
            return
        for parameter in todo:
            found = signature.parameters.get(parameter.name)
            if found is not None and found.default is not inspect.Parameter.empty:
                parameter.default = value_text(found.default) or parameter.default

    def attribute(self, attr: griffe.Attribute, cls: griffe.Class) -> None:
        if not replaceable(attr.value) or attr.name.startswith("_"):
            return
        try:
            value = getattr(runtime(cls), attr.name, MISSING)
        except Exception as err:  # noqa: BLE001
            LOG.debug("griffe_defaults: %s: %s", attr.path, err)
            return
        if value is not MISSING:
            attr.value = value_text(value) or attr.value
