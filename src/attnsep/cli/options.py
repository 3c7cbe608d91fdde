"""Command options whose default, help and type the library writes once: a config model's
fields or an API function's parameters (its signature and its docstring's ``Parameters``);
and their text parsed, each parser naming the flag in its one-line ``ValueError``."""

from __future__ import annotations

import functools
import inspect
import re
import sys
import types
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal, NamedTuple, Union, get_args, get_origin

import typer
from pydantic import BaseModel

from ..configs import Word, allowed, require


def plain(text: str) -> str:
    """Documentation text as ``--help`` prints it: ``[`f`][attnsep.api.f]`` as ``f``, an
    argument's ``None`` as the option not given, no double backticks, a literal bracket rather
    than rich markup."""
    text = re.sub(r"\[`([^`]+)`\]\[[^\]]+\]", r"\1", text).replace("``None``:", "not given:")
    return text.replace("``", "").replace("[", "\\[")


KEYWORD = inspect.Parameter.KEYWORD_ONLY


class Spec(NamedTuple):
    """An option: its default, help, the type the command line parses and ``parse(flag, text)``
    for text the library does not take as it is (``int_list``, ``word_or_number``)."""

    default: Any
    help: str
    kind: Any
    parse: Callable[[str, str], Any] | None = None

    def parameter(self, name: str, flag: str) -> inspect.Parameter:
        """The command's parameter ``name``: this option, given as ``flag``."""
        option = typer.Option(self.default, flag, help=plain(self.help))
        return inspect.Parameter(name, KEYWORD, default=option, annotation=self.kind)


def hinted(default: Any, text: str, hint: Any) -> Spec:
    """An option of type ``hint``: a list's (a tuple's, an iterable's, or one in its union) is
    comma-separated integers (``int_list``)."""
    if any(get_origin(t) in (list, tuple, Sequence, Iterable) for t in (hint, *get_args(hint))):
        return Spec(default, f"{text} Comma-separated.", str | None, int_list)
    return Spec(default, text, option_type(hint))


def field_spec(model: type[BaseModel], name: str) -> Spec:
    """``model``'s field ``name``: its default (else required), its description with a
    ``Literal``'s choices, the type the command line parses it as; ``None`` spelled as the
    field's ``configs.Word`` when it has one."""
    info = model.model_fields[name]
    default = ... if info.is_required() else info.get_default(call_default_factory=True)
    text = info.description or ""
    if (choices := allowed(info)).startswith("one of "):
        text = f"{text} Allowed: {choices.removeprefix('one of ')}."
    if word := next((item.word for item in info.metadata if isinstance(item, Word)), None):
        number = next(t for t in get_args(info.annotation) if t is not type(None))
        parse = functools.partial(word_or_number, word=word, number=number)
        text = text.replace("None:", f"{word}:")
        return Spec(word if default is None else default, text, str, parse)
    return hinted(default, text, info.annotation)


def parameter_spec(function: Callable[..., Any], name: str) -> Spec:
    """A library function's parameter ``name``: its default (a list's as comma-separated text),
    its description in the docstring's ``Parameters``, the type the command line parses."""
    parameter = inspect.signature(function).parameters[name]
    default = ... if parameter.default is parameter.empty else parameter.default
    hint = parameter.annotation  # a string under postponed evaluation
    hint = eval(hint, vars(sys.modules[function.__module__])) if isinstance(hint, str) else hint
    default = ",".join(map(str, default)) if isinstance(default, tuple) else default
    return hinted(default, parameter_docs(function)[name], hint)


PARAMETERS = "Parameters\n----------\n"
"""Where a (numpy-style) docstring's ``Parameters`` section starts."""


def description(function: Callable[..., Any]) -> str:
    """A library function's docstring before its ``Parameters``, as ``--help`` prints it: each
    paragraph on one line."""
    text = (inspect.getdoc(function) or "").partition(PARAMETERS)[0].strip()
    return plain("\n\n".join(" ".join(part.split()) for part in text.split("\n\n")))


def parameter_docs(function: Callable[..., Any]) -> dict[str, str]:
    """Each parameter's description in a (numpy-style) docstring's ``Parameters`` section: an
    entry is a line with the name, then the indented lines of its description."""
    section = (inspect.getdoc(function) or "").partition(PARAMETERS)[2].partition("\n\n")[0]
    entries = (entry.partition("\n") for entry in re.split(r"\n(?=\S)", section) if entry)
    return {name.strip(): " ".join(text.split()) for name, _, text in entries}


def option_type(annotation: Any) -> Any:
    """The type the command line parses a field's value as: a ``Literal``'s choices as text, or
    as integers when they are (the config checks them), ``X | Y | None`` as ``X | None``,
    anything else as written."""
    if get_origin(annotation) is Literal:
        return int if all(type(v) is int for v in get_args(annotation)) else str
    if get_origin(annotation) in (Union, types.UnionType):
        inner = [arg for arg in get_args(annotation) if arg is not type(None)][0]  # str | Path
        return option_type(inner) | None
    return annotation


def options_of(
    source: type[BaseModel] | Callable[..., Any],
    names: str | None = None,
    flags: dict[str, str] | None = None,
    skip: str = "",
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A command's options for ``source``'s ``names`` (space-separated): the parameters of a
    library function, or the fields of a config model (every field but ``skip``'s when
    ``names`` is not given), each with its default, help and type as the library writes them
    (once); the flag is ``--name`` (a switch on by default also ``--no-name``) unless ``flags``
    gives another. The command receives their values, a list's parsed, as one dict, its first
    argument (decorators of this kind stack: their values land in the one dict)."""
    if isinstance(source, type) and issubclass(source, BaseModel):
        fields = [name for name in source.model_fields if name not in skip.split()]
        specs = {name: field_spec(source, name) for name in (names.split() if names else fields)}
    else:
        specs = {name: parameter_spec(source, name) for name in (names or "").split()}
    flags = {name: (flags or {}).get(name, switch(name, spec)) for name, spec in specs.items()}

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(command)
        def run(config: dict[str, Any] | None = None, /, **given: Any) -> Any:
            picked = {name: given.pop(name) for name in specs}
            for name, spec in specs.items():
                if spec.parse is not None and picked[name] is not None:
                    picked[name] = spec.parse(flags[name], picked[name])
            return command({**(config or {}), **picked}, **given)

        own = list(inspect.signature(command, eval_str=True).parameters.values())
        own = own if getattr(command, "stacked", False) else own[1:]  # not the dict
        made = [spec.parameter(name, flags[name]) for name, spec in specs.items()]
        signature = made + [p.replace(kind=KEYWORD) for p in own]
        run.__signature__ = inspect.Signature(signature)  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in signature}
        run.stacked = True  # type: ignore[attr-defined]
        return run

    return decorate


def switch(name: str, spec: Spec) -> str:
    """An option's flag: ``--name``, and ``--name/--no-name`` for a switch on by default."""
    flag = "--" + name.replace("_", "-")
    return f"{flag}/--no-{flag[2:]}" if spec.default is True else flag


def int_list(flag: str, text: str) -> list[int]:
    """``16,32,64`` -> ``[16, 32, 64]``; else one error line. The values' bounds and order are
    the library's to check, with the other input."""
    parts = [p.strip() for p in text.split(",")]
    ok = all(p.removeprefix("-").isdecimal() for p in parts)
    require(ok, f"{flag} must be comma-separated integers, got {text!r}")
    return [int(p) for p in parts]


def word_or_number(flag: str, text: str, word: str, number: type) -> Any:
    """``word`` (``None``: the library's rule) or a number of type ``number`` (``int`` or
    ``float``); its bounds are the library's to check."""
    if text == word:
        return None
    try:
        return number(text)
    except ValueError:
        kind = "an integer" if number is int else "a number"
        raise ValueError(f"{flag} must be {word!r} or {kind}, got {text!r}") from None
