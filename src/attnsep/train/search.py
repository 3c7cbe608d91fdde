"""Threshold search: the smallest size whose success rate reaches a target (SPEC A7.2, A7.5,
Part D).

Probes double from ``start`` until the target is met, then bisect between the last failing
and the first passing size, down to a step of one on the integer knob (a caller searching a
half-octave grid passes the grid's index). Every probe keeps each replica's outcome, so the
bootstrap (``metrics.stats.threshold_draws``) re-runs the search on resampled replicas
without recomputing anything.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..core.validate import int_at_least, require
from ..metrics.stats import rate_record

Outcomes = Sequence[bool] | np.ndarray
"""Each replica's success: a sequence of bools or a boolean array."""


@dataclass(frozen=True)
class Probe:
    size: int
    outcomes: tuple[bool, ...]  # one per replica, the same replicas at every probe

    @property
    def successes(self) -> int:
        return self.outcomes.count(True)

    @property
    def trials(self) -> int:
        return len(self.outcomes)

    @property
    def rate(self) -> float:
        return self.successes / self.trials

    def as_record(self) -> dict:
        rate = rate_record(self.successes, self.trials)
        return {"size": self.size, **rate, "outcomes": list(map(int, self.outcomes))}


def probe_matrix(probes: Sequence[dict]) -> tuple[list[int], np.ndarray]:
    """Stored probe records -> ``(sizes, replicas x probes outcomes)`` for the bootstrap."""
    require(bool(probes), "no probes stored")
    sizes = [p["size"] for p in probes]
    return sizes, np.array([p["outcomes"] for p in probes], dtype=bool).T


def smallest_passing(
    evaluate: Callable[[int], Outcomes], target: float, start: int, limit: int
) -> tuple[int | None, list[Probe]]:
    """Smallest size in ``[start, limit]`` (doubling, then bisection) with a rate ``>= target``.

    ``evaluate(size)`` returns each replica's success. Returns ``(None, probes)`` when even
    ``limit`` fails.
    """
    int_at_least("start", start, 1)
    require(limit >= start, f"limit must be >= start={start}, got {limit}")
    probes: dict[int, Probe] = {}

    def passes(size: int) -> bool:
        if size not in probes:
            probes[size] = Probe(size, tuple(np.asarray(evaluate(size), dtype=bool).tolist()))
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
