"""Command-line options read from the library's configs, and library calls loaded on use.

An option's default and help come from the config field it sets (``attnsep.configs``), so a
default is written once; the config then validates the value. Library calls that need torch
are imported when a command runs, so ``--help``, ``list`` and bad input answer at once.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import TYPE_CHECKING, Any, Literal, get_args, get_origin

import typer

from ..core.validate import require

if TYPE_CHECKING:
    from pydantic import BaseModel


def option(
    model: type[BaseModel], name: str, flag: str | None = None, help: str | None = None
) -> Any:
    """``typer.Option`` for ``model``'s field ``name``: its default (required if it has none),
    its description as help unless ``help`` is given (with the choices of a ``Literal``), and
    the flag ``--name`` unless ``flag`` is given."""
    info = model.model_fields[name]
    default = ... if info.is_required() else info.get_default(call_default_factory=True)
    text = help if help is not None else (info.description or "")
    if get_origin(info.annotation) is Literal:
        text = f"{text} Allowed: {', '.join(str(c) for c in get_args(info.annotation))}."
    text = text.replace("[", "\\[")  # a literal bracket, not rich markup, in --help
    return typer.Option(default, flag or "--" + name.replace("_", "-"), help=text)


def choices(**given: str) -> dict[str, Any]:
    """String options as given, for a config to check against its fields' allowed values."""
    return given


def lazy(module: str, name: str) -> Callable[..., Any]:
    """``module.name``, imported at its first call (``module`` is absolute)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(import_module(module), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"``{module}.{name}``, loaded when first called."
    return call


def int_list(flag: str, text: str, low: int | None, *, increasing: bool = False) -> list[int]:
    """``16,32,64`` -> ``[16, 32, 64]``: comma-separated integers ``>= low`` (any integers when
    ``low`` is ``None``, for a later check); with ``increasing``, strictly increasing. Else one
    error line."""
    parts = [p.strip() for p in text.split(",")]
    signed = low is None or low < 0
    ok = all((p[1:] if signed and p.startswith("-") else p).isdecimal() for p in parts)
    ok = ok and (low is None or all(int(p) >= low for p in parts))
    bound = "" if low is None else f" >= {low}"
    require(ok, f"{flag} must be comma-separated integers{bound}, got {text!r}")
    values = [int(p) for p in parts]
    if increasing:
        require(
            values == sorted(set(values)),
            f"{flag} must be increasing without repeats, got {text!r}",
        )
    return values
