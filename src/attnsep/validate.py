"""Argument checks shared by the library and the CLI.

Every check raises ``ValueError`` with one line naming the value and what is allowed; the
CLI turns that line into ``error: ...`` and exit code 2.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def require(condition: bool, message: str) -> None:
    """Raise ``ValueError(message)`` unless ``condition`` holds."""
    if not condition:
        raise ValueError(message)


def int_at_least(name: str, value: object, low: int) -> int:
    """``value`` as an int ``>= low`` (bools and non-integral floats are refused)."""
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= low
    require(ok, f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)  # type: ignore[arg-type]


def positive_finite(name: str, value: object) -> float:
    """``value`` as a finite float ``> 0``."""
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    ok = ok and math.isfinite(float(value)) and float(value) > 0  # type: ignore[arg-type]
    require(ok, f"{name} must be a finite number > 0, got {value!r}")
    return float(value)  # type: ignore[arg-type]


def probability(name: str, value: object, *, below_half: bool = False) -> float:
    """``value`` as a float in ``[0, 1]`` (``[0, 0.5)`` with ``below_half``)."""
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    high = 0.5 if below_half else 1.0
    ok = (
        ok and 0.0 <= float(value) and (float(value) < high if below_half else float(value) <= high)
    )  # type: ignore[arg-type]
    allowed = "[0, 0.5)" if below_half else "[0, 1]"
    require(ok, f"{name} must be in {allowed}, got {value!r}")
    return float(value)  # type: ignore[arg-type]


def one_of(name: str, value: object, allowed: Sequence[str]) -> str:
    """``value`` if it is one of ``allowed``."""
    require(value in allowed, f"{name} must be one of {', '.join(allowed)}; got {value!r}")
    return str(value)


def distinct_indices(name: str, values: Sequence[int], size: int, count: int) -> list[int]:
    """``count`` distinct integers in ``[0, size)``."""
    items = list(values) if isinstance(values, list | tuple) else [values]
    ok = len(items) == count and all(
        isinstance(v, int) and not isinstance(v, bool) and 0 <= v < size for v in items
    )
    ok = ok and len(set(items)) == count
    require(ok, f"{name} must be {count} distinct integers in [0, {size}), got {items!r}")
    return items
