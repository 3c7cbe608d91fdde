"""Command-line text to values: each parser checks its text once and names the flag in its
one-line ``ValueError`` (``core.validate``'s convention, through ``configs``)."""

from __future__ import annotations

import math

from ..configs import require


def int_list(flag: str, text: str, low: int | None, *, increasing: bool = False) -> list[int]:
    """``16,32,64`` -> ``[16, 32, 64]``: integers ``>= low`` (any when ``low`` is ``None``),
    strictly increasing with ``increasing``; else one error line."""
    parts = [p.strip() for p in text.split(",")]
    signed = low is None or low < 0
    ok = all((p[1:] if signed and p.startswith("-") else p).isdecimal() for p in parts)
    ok = ok and (low is None or all(int(p) >= low for p in parts))
    bound = "" if low is None else f" >= {low}"
    require(ok, f"{flag} must be comma-separated integers{bound}, got {text!r}")
    values = [int(p) for p in parts]
    ordered = not increasing or values == sorted(set(values))
    require(ordered, f"{flag} must be increasing without repeats, got {text!r}")
    return values


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


def parse_lengths(flag: str, text: str | None, T: int, q: int) -> list[int]:
    """``20,40,80`` -> ``[20, 40, 80]`` (each an integer >= q); ``None`` -> ``[T, 2T, 4T, 8T]``."""
    if text is None:
        return [T, 2 * T, 4 * T, 8 * T]
    lengths = int_list(flag, text, 1)
    require(min(lengths) >= q, f"{flag} must be integers >= q={q}, got {text!r}")
    return lengths
