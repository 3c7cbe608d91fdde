"""Threshold search: the smallest size whose success rate reaches a target (SPEC A7.2, A7.5).

Probes double from ``start`` until the target is met, then bisect between the last failing
and the first passing size. Every probe is kept with its Wilson interval.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from .validate import int_at_least, require


def wilson_interval(successes: int, trials: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95% by default)."""
    require(trials >= 1 and 0 <= successes <= trials, "need 0 <= successes <= trials, trials >= 1")
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Probe:
    size: int
    successes: int
    trials: int

    @property
    def rate(self) -> float:
        return self.successes / self.trials

    def as_record(self) -> dict:
        low, high = wilson_interval(self.successes, self.trials)
        return {
            "size": self.size,
            "successes": self.successes,
            "trials": self.trials,
            "rate": self.rate,
            "low": low,
            "high": high,
        }


def smallest_passing(
    evaluate: Callable[[int], tuple[int, int]], target: float, start: int, limit: int
) -> tuple[int | None, list[Probe]]:
    """Smallest size in ``[start, limit]`` (doubling, then bisection) with a rate ``>= target``.

    ``evaluate(size)`` returns ``(successes, trials)``. Returns ``(None, probes)`` when even
    ``limit`` fails.
    """
    int_at_least("start", start, 1)
    require(limit >= start, f"limit must be >= start={start}, got {limit}")
    probes: dict[int, Probe] = {}

    def passes(size: int) -> bool:
        if size not in probes:
            probes[size] = Probe(size, *evaluate(size))
        return probes[size].rate >= target

    size, failing = start, start - 1
    while not passes(size):
        failing = size
        if size == limit:
            return None, sorted(probes.values(), key=lambda p: p.size)
        size = min(2 * size, limit)
    while size - failing > 1:
        middle = (size + failing) // 2
        if passes(middle):
            size = middle
        else:
            failing = middle
    return size, sorted(probes.values(), key=lambda p: p.size)


def loglog_slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of ``log y`` against ``log x``."""
    require(len(xs) >= 2, "a slope needs at least two points")
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    sxx = sum((a - mx) ** 2 for a in lx)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True)) / sxx
