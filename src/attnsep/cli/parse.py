"""Command-line text to values: each parser checks its text once and names the flag in its
one-line ``ValueError`` (``core.validate``'s convention, through ``configs``)."""

from __future__ import annotations

import math

from ..configs import require


def int_list(flag: str, text: str) -> list[int]:
    """``16,32,64`` -> ``[16, 32, 64]``; else one error line. The values' bounds and order are
    the library's to check, with the other input."""
    parts = [p.strip() for p in text.split(",")]
    ok = all(p.removeprefix("-").isdecimal() for p in parts)
    require(ok, f"{flag} must be comma-separated integers, got {text!r}")
    return [int(p) for p in parts]


def auto_or_positive(flag: str, text: str) -> float | None:
    """``auto`` (``None``: the config's rule) or a finite number ``> 0``."""
    try:
        value = None if text == "auto" else float(text)
    except ValueError:
        value = math.nan
    ok = value is None or 0 < value < math.inf
    require(ok, f"{flag} must be 'auto' or a finite number > 0, got {text!r}")
    return value


def population_or_count(flag: str, text: str) -> int | None:
    """``population`` (``None``: the exact gradient) or a sample count ``>= 1``."""
    ok = text == "population" or (text.isdecimal() and int(text) >= 1)
    require(ok, f"{flag} must be 'population' or an integer >= 1, got {text!r}")
    return None if text == "population" else int(text)
