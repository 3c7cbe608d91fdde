"""Argument checks shared by the library and the CLI.

Every check raises ``ValueError`` with one line naming the value and what is allowed; the
CLI turns that line into ``error: ...`` and exit code 2. :func:`one_line` writes a pydantic
validation error (``configs``) in the same words, from the failing field's constraints.
"""

from __future__ import annotations

import math
import types
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeGuard, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

LARGEST = 2**63 - 1
"""The largest integer any value may be: what numpy, torch and SQLite hold (``int64``)."""


def shown(value: object, width: int = 80) -> str:
    """``repr(value)`` cut to about ``width`` characters for an error line (a huge integer by
    its size, which ``repr`` may refuse to write out)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**width:
        return f"{'-' if value < 0 else ''}an integer of about 2**{abs(value).bit_length() - 1}"
    try:
        text = repr(value)
    except ValueError:  # an integer inside with more digits than Python writes out
        text = f"<{type(value).__name__} holding a huge integer>"
    return text if len(text) <= width else f"{text[: width - 10]}...{text[-6:]} ({len(text)} chars)"


def oversized(value: object) -> int | None:
    """An integer in ``value`` (or in its lists, tuples and dicts) beyond ``±LARGEST``, if any."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if abs(value) > LARGEST else None
    items = list(value.values()) if isinstance(value, dict) else value
    if isinstance(items, list | tuple):
        return next((v for v in map(oversized, items) if v is not None), None)
    return None


def require(condition: bool, message: str) -> None:
    """Raise ``ValueError(message)`` unless ``condition`` holds."""
    if not condition:
        raise ValueError(message)


def _real(value: object) -> TypeGuard[int | float]:
    """Whether ``value`` is an int or a float (bools are refused)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def int_at_least(name: str, value: object, low: int) -> int:
    """``value`` as an int ``>= low`` and at most ``LARGEST`` (bools and non-integral floats
    are refused)."""
    if isinstance(value, int) and not isinstance(value, bool) and low <= value <= LARGEST:
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value > LARGEST:
        raise ValueError(f"{name} must be an integer in [{low}, 2**63), got {shown(value)}")
    raise ValueError(f"{name} must be an integer >= {low}, got {shown(value)}")


def finite_at_least(name: str, value: object, low: float, unit: str = "") -> float:
    """``value`` as a finite float ``>= low`` (``unit``: said after "number", e.g. "of
    seconds")."""
    if _real(value) and (isinstance(value, float) or abs(value) <= LARGEST):
        number = float(value)
        if math.isfinite(number) and number >= low:
            return number
    words = f"a finite number{' ' + unit if unit else ''} >= {low:g}"
    raise ValueError(f"{name} must be {words}, got {shown(value)}")


def int_values(name: str, values: object, low: int) -> list[int]:
    """``values`` (a list, tuple, range or other iterable, not a text or a mapping) as a list
    of integers ``>= low``."""
    if not isinstance(values, Iterable) or isinstance(values, str | bytes | Mapping):
        raise TypeError(f"{name} must be a list of integers >= {low}, got {shown(values)}")
    return [int_at_least(name, value, low) for value in values]


def callback(name: str, value: object) -> None:
    """``value`` is a function (or ``None``: no callback)."""
    if value is not None and not callable(value):
        raise TypeError(f"{name} must be a function or None, got {shown(value)}")


def positive_finite(name: str, value: object) -> float:
    """``value`` as a finite float ``> 0``."""
    if _real(value) and math.isfinite(float(value)) and float(value) > 0:
        return float(value)
    raise ValueError(f"{name} must be a finite number > 0, got {shown(value)}")


def probability(name: str, value: object, *, below_half: bool = False) -> float:
    """``value`` as a float in ``[0, 1]`` (``[0, 0.5)`` with ``below_half``)."""
    high = 0.5 if below_half else 1.0
    if _real(value):
        x = float(value)
        if 0.0 <= x and (x < high if below_half else x <= high):
            return x
    allowed = "[0, 0.5)" if below_half else "[0, 1]"
    raise ValueError(f"{name} must be in {allowed}, got {shown(value)}")


def one_of(name: str, value: object, allowed: Sequence[str]) -> str:
    """``value`` if it is one of ``allowed``."""
    require(value in allowed, f"{name} must be one of {', '.join(allowed)}; got {shown(value)}")
    return str(value)


@dataclass(frozen=True)
class Registered:
    """A field check: the value must be one of ``names``, a registry that may grow after the
    field is declared (e.g. an attention map a user registers); its error names the choices."""

    label: str
    names: list[str]

    def __call__(self, value: str) -> str:
        return one_of(self.label, value, sorted(self.names))

    def __deepcopy__(self, memo: dict[int, Any]) -> Registered:
        return self  # a copied field (``configs.inherit``) checks against the same registry


def registry(info: FieldInfo) -> Registered | None:
    """The :class:`Registered` check among a field's validators, if it has one."""
    checks = (getattr(item, "func", None) for item in info.metadata)
    return next((check for check in checks if isinstance(check, Registered)), None)


def distinct_indices(name: str, values: Sequence[int], size: int, count: int) -> list[int]:
    """``count`` distinct integers in ``[0, size)``."""
    items: list[Any] = list(values) if isinstance(values, list | tuple) else [values]
    ok = len(items) == count and all(
        isinstance(v, int) and not isinstance(v, bool) and 0 <= v < size for v in items
    )
    ok = ok and len(set(items)) == count
    require(ok, f"{name} must be {count} distinct integers in [0, {size}), got {shown(items)}")
    return items


# --- pydantic errors in the same words ----------------------------------------------------


def _bounds(info: FieldInfo) -> dict[str, Any]:
    return {
        key: getattr(item, key)
        for item in info.metadata
        for key in ("ge", "gt", "le", "lt")
        if getattr(item, key, None) is not None
    }


def _kind(annotation: Any) -> Any:
    """The annotation without ``None`` (``int | None`` -> ``int``)."""
    if get_origin(annotation) in (Union, types.UnionType):
        parts = [a for a in get_args(annotation) if a is not type(None)]
        return parts[0] if len(parts) == 1 else annotation
    return annotation


def _num(value: float) -> str:
    return f"{value:g}"


def allowed(info: FieldInfo) -> str:
    """What a field accepts, in words, from its type and constraints."""
    kind, b = _kind(info.annotation), _bounds(info)
    if (names := registry(info)) is not None:
        return "one of " + ", ".join(sorted(names.names))
    if get_origin(kind) is Literal:
        return "one of " + ", ".join(str(c) for c in get_args(kind))
    if kind is bool:
        return "true or false"
    if get_origin(kind) is tuple:
        return "a tuple of integers"
    if get_origin(kind) in (list, dict):  # a list's items, a dict's keys and values in words
        parts = [allowed(FieldInfo.from_annotation(arg)) for arg in get_args(kind)]
        if get_origin(kind) is dict:
            return f"a table from {parts[0]} to {parts[1]}"
        low = next((m.min_length for m in info.metadata if getattr(m, "min_length", 0)), 0)
        size = "a non-empty list" if low == 1 else f"a list of {low} or more" if low else "a list"
        return f"{size}, each {parts[0]}" if parts else size
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        return f"a table of {', '.join(kind.model_fields)}"
    if kind is str:
        return "a string"
    word = "an integer" if kind is int else "a finite number"
    low = next(((op, _num(b[key])) for key, op in (("ge", ">="), ("gt", ">")) if key in b), None)
    high = next(((op, _num(b[key])) for key, op in (("le", "<="), ("lt", "<")) if key in b), None)
    if low and high:
        left, right = "[" if low[0] == ">=" else "(", "]" if high[0] == "<=" else ")"
        interval = f"in {left}{low[1]}, {high[1]}{right}"
        return f"{word} {interval}" if kind is int else interval
    bound = low or high
    return word if bound is None else f"{word} {bound[0]} {bound[1]}"


def one_line(
    model: type[BaseModel],
    err: ValidationError,
    data: Mapping[str, Any],
    *,
    by_key: bool = False,
    where: str | None = None,
) -> str:
    """The first error of ``err`` as ``name must be <allowed>, got <value>``; a cross-field
    check's own message as it is; an unknown key as ``unknown field 'x'; allowed: <fields>``.
    ``name`` is the field's title, or with ``by_key`` its key as written in a config file or
    ``--set``. ``where`` (an experiment's name) starts the line, or names the config of an
    unknown field (``unknown field 'x' for one-step; allowed: ...``)."""
    first = err.errors()[0]
    fields = model.model_fields
    name = str(first["loc"][0]) if first["loc"] else ""
    if first["loc"] and name not in fields:
        owner = f" for {where}" if where else ""
        return f"unknown field {name!r}{owner}; allowed: {', '.join(fields)}"
    line = _field_line(model, first, data, by_key)
    return f"{where}: {line}" if where else line


def _field_line(model: type[BaseModel], first: Any, data: Mapping[str, Any], by_key: bool) -> str:
    """:func:`one_line` for an error of a known field, or of the whole model."""
    cause = (first.get("ctx") or {}).get("error")
    if isinstance(cause, ValueError):
        return str(cause)
    if not first["loc"]:
        return f"{model.__name__}: {first['msg']}"
    name = str(first["loc"][0])
    info = model.model_fields[name]
    label = name if by_key else info.title or name
    if first["type"] == "missing":
        return f"{label} is required ({allowed(info)})"
    value = data.get(name, first.get("input"))
    separator = ";" if "one of" in allowed(info) else ","
    return f"{label} must be {allowed(info)}{separator} got {shown(value)}"


def seconds(flag: str, value: float) -> float:
    """A number of seconds: finite and ``>= 0`` (a budget, e.g. ``--calibration``)."""
    return finite_at_least(flag, value, 0, "of seconds")
