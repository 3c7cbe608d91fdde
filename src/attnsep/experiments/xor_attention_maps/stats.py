"""Each attention map's numbers with their 95% intervals (SPEC Part D: Wilson for rates, a
bootstrap over replicas for medians), and the sizes of A7.3's records (SPEC Parts E-F).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ...metrics import stats
from ..base import Record
from .config import Size


def size_of(record: Record) -> Size:
    return (record["d"], record["m"])


def size_text(size: Size) -> str:
    return f"d = {size[0]}, m = {size[1]}"


def judged(size: Size) -> bool:
    """A7.3 is judged where every map can put on one position all the weight its form allows:
    ``m >= d``, where the rows of ``V`` span ``R^d`` (SPEC Part F)."""
    return size[1] >= size[0]


def by_size(records: list[Record]) -> dict[Size, list[Record]]:
    """The records grouped by size, in the order the sizes first appear."""
    out: dict[Size, list[Record]] = {}
    for r in records:
        out.setdefault(size_of(r), []).append(r)
    return out


DESCRIBED = {
    "ceiling": "expressivity ceiling (largest weight on one position per unit of total weight)",
    "steps": "median steps to the target",
    "specialized": "specialization rate",
    "collapsed": "collapse rate",
    "final_loss": "median final loss",
    "one_step_losses": "median loss after one step",
    "one_step_specialized": "specialization rate after one step",
    "one_step_collapsed": "collapse rate after one step",
}
"""Each number of a map's summary and its label."""
TABLE = ("ceiling", "steps", "specialized", "collapsed")
"""The numbers of A7.3b's table per map."""


def replica_draws(n: int) -> np.ndarray:
    """``resamples x n`` replica indices for the bootstrap over replicas (the count of
    ``stats.bootstrap``, as ``stats.resampling`` sets it; seed 0), drawn at once and kept, so
    that every median of every map is resampled in one vectorized step."""
    return _draws(n, stats.resample_count())


@functools.lru_cache(maxsize=16)
def _draws(n: int, resamples: int) -> np.ndarray:
    return stats.resample_rows(n, np.random.default_rng(0), resamples)


def median_interval(
    values: stats.Floats, draws: np.ndarray | None = None
) -> tuple[float, float, float]:
    """``stats.median_interval`` on the kept replica draws (``replica_draws``)."""
    rows = replica_draws(len(values)) if draws is None else draws
    return stats.median_interval(values, rows=rows)


def summarize(record: Record, label: str | None = None) -> dict | None:
    """A map's numbers at its best eta with their 95% intervals (Wilson for rates, bootstrap
    over replicas for medians), with its expressivity ceiling (the record's per replica,
    ``ceiling``) when it has one; ``None`` when every eta diverged. ``label`` names the
    estimates (default: the map's name)."""
    best = record["best"]
    if best is None:
        return None
    n = len(best["steps"])
    rows = replica_draws(n)
    numbers = {
        "steps": median_interval([math.inf if s is None else s for s in best["steps"]], rows),
        "final_loss": median_interval(best["final_loss"], rows),
        "one_step_losses": median_interval(best["one_step_losses"], rows),
    }
    ceiling = record.get("ceiling")
    if ceiling:
        numbers["ceiling"] = median_interval(ceiling, rows if len(ceiling) == n else None)
    for key in ("specialized", "collapsed", "one_step_specialized", "one_step_collapsed"):
        numbers[key] = (sum(best[key]) / n, *stats.wilson(sum(best[key]), n))
    name = label or record["attention"]
    return {
        **numbers,
        "eta": best["eta"],
        "exponent": best["exponent"],
        "estimates": [
            stats.estimate(f"{name}: {text}", *numbers[key])
            for key, text in DESCRIBED.items()
            if key in numbers
        ],
    }


def describe(record: Record, summary: dict | None) -> str:
    name = record["attention"]
    diverged = [f"{p['exponent']:g}" for p in record["curve"] if p["diverged"]]
    tail = f" (diverged at eta = 10^{{{', '.join(diverged)}}})" if diverged else ""
    if summary is None:
        return f"{name}: diverged at every eta"
    numbers = ", ".join(
        f"{label} {stats.fmt_interval(*summary[key])}"
        for key, label in DESCRIBED.items()
        if key in summary
    )
    return f"{name} at eta = 10^{summary['exponent']:g}: {numbers}{tail}"
