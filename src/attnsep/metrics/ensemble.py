"""Summaries of per-replica values: what every JSON report prints for a quantity."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any


def summary(values: Iterable[float]) -> dict[str, Any]:
    """``{mean, median, values}`` of finite per-replica numbers."""
    items = [float(v) for v in values]
    ordered = sorted(items)
    n = len(ordered)
    median = ordered[n // 2] if n % 2 else 0.5 * (ordered[n // 2 - 1] + ordered[n // 2])
    return {"mean": math.fsum(items) / n, "median": median, "values": items}
