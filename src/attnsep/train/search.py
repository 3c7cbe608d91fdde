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
    evaluate: Callable[[int], Outcomes],
    target: float,
    start: int,
    limit: int,
    guard: bool = False,
) -> tuple[int | None, list[Probe]]:
    """Smallest size in ``[start, limit]`` (doubling, then bisection) with a rate ``>= target``.

    ``evaluate(size)`` returns each replica's success. Returns ``(None, probes)`` when even
    ``limit`` fails. With ``guard``, a *loose* answer ``m*`` (``loose``) gets ``m* + 1, + 2,
    + 4, …`` probed, at most ``limit``, until one passes with every replica: a bootstrap draw
    that resamples the replicas failing at ``m*`` then moves to that probe, not to the next size
    the doubling left, nor past every probe (SPEC Part E; A7.5a's guard probe).
    """
    int_at_least("start", start, 1)
    require(limit >= start, f"limit must be >= start={start}, got {limit}")
    probes: dict[int, Probe] = {}

    def probe(size: int) -> Probe:
        if size not in probes:
            probes[size] = Probe(size, tuple(np.asarray(evaluate(size), dtype=bool).tolist()))
        return probes[size]

    def passes(size: int) -> bool:
        return probe(size).rate >= target

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
    if guard and loose(size, [p.size for p in probes.values() if p.successes == p.trials]):
        step = 1
        while (guarded := probe(min(size + step, limit))).successes < guarded.trials:
            if guarded.size == limit:
                break
            step *= 2
    return size, sorted(probes.values(), key=lambda p: p.size)


def loose(m_star: int | None, passed_by_all: Sequence[int]) -> bool:
    """Whether a threshold is loose: neither ``m*`` nor ``m* + 1`` is among the sizes
    ``passed_by_all`` (probed and passed by every replica), so a bootstrap draw that fails at
    ``m*`` moves further than one step, or past every probe."""
    return m_star is not None and not any(m_star <= s <= m_star + 1 for s in passed_by_all)
