"""Comparing results with values pinned on another machine: numpy's vectorized ``exp``/``log``
round the last bit differently across CPUs (seen between the machine that pinned them and an
AMD EPYC), so pinned floats match to a relative ``1e-12``, everything else exactly."""

from __future__ import annotations

import math
from typing import Any

REL = 1e-12


def matches(got: Any, pinned: Any, rel: float = REL) -> bool:
    """``got == pinned`` with floats (at any depth of lists, tuples and dicts) to ``rel``."""
    if isinstance(pinned, float) and isinstance(got, float):
        return math.isclose(got, pinned, rel_tol=rel, abs_tol=0.0)
    if isinstance(pinned, dict) and isinstance(got, dict):
        return got.keys() == pinned.keys() and all(matches(got[k], pinned[k], rel) for k in got)
    if isinstance(pinned, list | tuple) and isinstance(got, list | tuple):
        return len(got) == len(pinned) and all(
            matches(a, b, rel) for a, b in zip(got, pinned, strict=True)
        )
    return bool(got == pinned)
