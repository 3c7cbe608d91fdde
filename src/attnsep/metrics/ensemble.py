"""Summaries of per-replica values: what every JSON report prints for a quantity."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from .stats import median


def summary(values: Iterable[float]) -> dict[str, Any]:
    """``{mean, median, values}`` of finite per-replica numbers."""
    items = [float(v) for v in values]
    return {"mean": math.fsum(items) / len(items), "median": median(items), "values": items}
