"""Command options whose default, help and type the library writes once: a config model's
fields or an API function's parameters (its signature and its docstring's ``Parameters``)."""

from __future__ import annotations

import functools
import inspect
import re
import sys
import types
from collections.abc import Callable, Sequence
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, Literal, Union, get_args, get_origin

import typer

from ..configs import allowed
from .parse import int_list

if TYPE_CHECKING:
    from pydantic import BaseModel


def plain(text: str) -> str:
    """Documentation text as ``--help`` prints it: ``[`f`][attnsep.api.f]`` as ``f``, an
    argument's ``None`` as the option not given, no double backticks, a literal bracket rather
    than rich markup."""
    text = re.sub(r"\[`([^`]+)`\]\[[^\]]+\]", r"\1", text).replace("``None``:", "not given:")
    return text.replace("``", "").replace("[", "\\[")


Spec = tuple[Any, str, Any, bool]
"""An option's ``(default, help, type, listed)``: a listed option's text is comma-separated
integers, parsed into the list the library takes (``parse.int_list``)."""


def field_spec(model: type[BaseModel], name: str) -> Spec:
    """``model``'s field ``name``: its default (else required), its description with a
    ``Literal``'s choices, the type the command line parses it as."""
    info = model.model_fields[name]
    default = ... if info.is_required() else info.get_default(call_default_factory=True)
    text = info.description or ""
    if (choices := allowed(info)).startswith("one of "):
        text = f"{text} Allowed: {choices.removeprefix('one of ')}."
    return default, text, option_type(info.annotation), False


def parameter_spec(function: Callable[..., Any], name: str) -> Spec:
    """A library function's parameter ``name``: its default, its description in the docstring's
    ``Parameters``, its type; a list of integers is comma-separated text (its default too), the
    command receiving the list (``parse.int_list``)."""
    parameter = inspect.signature(function).parameters[name]
    default = ... if parameter.default is parameter.empty else parameter.default
    text = parameter_docs(function)[name]
    kind: Any
    listed = False
    if isinstance(default, tuple):  # a list: comma-separated text
        listed, kind, text = True, str, f"{text} Comma-separated."
        default = ",".join(str(v) for v in default)
    elif default is None or default is ...:
        module = vars(sys.modules[function.__module__])
        annotation = parameter.annotation  # a string under postponed evaluation
        hint = eval(annotation, module) if isinstance(annotation, str) else annotation
        listed = any(get_origin(t) in (list, tuple, Sequence) for t in (hint, *get_args(hint)))
        kind = str | None if listed else option_type(hint)
        text = f"{text} Comma-separated." if listed else text
    else:
        kind = Path if isinstance(default, PurePath) else type(default)
    return default, text, kind, listed


def parameter_docs(function: Callable[..., Any]) -> dict[str, str]:
    """Each parameter's description in a (numpy-style) docstring's ``Parameters`` section."""
    section = (inspect.getdoc(function) or "").partition("Parameters\n----------\n")[2]
    found: dict[str, str] = {}
    name = ""
    for line in section.partition("\n\n")[0].splitlines():
        if line.startswith(" "):
            found[name] = f"{found[name]} {line.strip()}".strip()
        else:
            name = line.strip()
            found[name] = ""
    return found


def option_type(annotation: Any) -> Any:
    """The type the command line parses a field's value as: a ``Literal``'s choices as text (the
    config checks them), ``X | Y | None`` as ``X | None``, anything else as written."""
    if get_origin(annotation) is Literal:
        return str
    if get_origin(annotation) in (Union, types.UnionType):
        inner = [arg for arg in get_args(annotation) if arg is not type(None)][0]  # str | Path
        return option_type(inner) | None
    return annotation


def options_of(
    source: type[BaseModel] | Callable[..., Any], names: str, flags: dict[str, str] | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A command's options for ``source``'s ``names`` (space-separated): the fields of a config
    model or the parameters of a library function, each with its default, help and type as the
    library writes them (once); the flag is ``--name`` unless ``flags`` gives another. The
    command receives their values, a list's parsed, as one dict, its first argument (decorators
    of this kind stack: their values land in the one dict)."""
    spec = field_spec if isinstance(source, type) else parameter_spec
    specs = {name: spec(source, name) for name in names.split()}  # type: ignore[arg-type]
    flags = {name: (flags or {}).get(name, "--" + name.replace("_", "-")) for name in specs}

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        own = list(inspect.signature(command, eval_str=True).parameters.values())
        made = [
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=typer.Option(default, flags[name], help=plain(text)),
                annotation=kind,
            )
            for name, (default, text, kind, _) in specs.items()
        ]

        @functools.wraps(command)
        def run(config: dict[str, Any] | None = None, /, **given: Any) -> Any:
            picked = {name: given.pop(name) for name in specs}
            for name, (*_, listed) in specs.items():
                if listed and picked[name] is not None:
                    picked[name] = int_list(flags[name], picked[name])
            return command({**(config or {}), **picked}, **given)

        own = own if getattr(command, "stacked", False) else own[1:]  # not the dict
        kept = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own]
        signature = made + kept
        run.__signature__ = inspect.Signature(signature)  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in signature}
        run.stacked = True  # type: ignore[attr-defined]
        return run

    return decorate
