"""Command-line text to values: each parser checks its text once and names the flag in its
one-line ``ValueError`` (``core.validate``'s convention, through ``configs``)."""

from __future__ import annotations

from typing import Any

from ..configs import require


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
