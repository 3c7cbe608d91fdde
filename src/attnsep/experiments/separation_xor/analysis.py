"""A7.6's numbers from the records: both frontiers, the transformer's exponents and growth rules
on the sizes the criterion judges, and their tables and estimates (SPEC A7.6, Parts D–F)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ...metrics import stats
from ...metrics.laws import POLYLOG, POWER, exponent_draws, one_sided_exponent
from ...train.search import probe_matrix
from ..base import Record
from ..xor_width.verdict import RIVAL_MIN_ALPHA, separating_d
from .config import TRANSFORMER_MIN_D

if TYPE_CHECKING:
    from ..xor_thresholds import XorFrontier


def _num(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _inf(x: float | None) -> float:
    """A stored bound; ``None`` stands for ``inf`` (not reached in some bootstrap draws)."""
    return math.inf if x is None else float(x)


def _estimates(f: XorFrontier) -> list[dict]:
    knob = f.knob
    out = []
    for p in f.points:
        at = f"{f.model} d={p['d']}"
        out.append(stats.estimate(f"{at} {knob}", p[knob], p[f"{knob}_low"], p[f"{knob}_high"]))
        out.append(stats.estimate(f"{at} params", p["params"], p["params_low"], p["params_high"]))
        if p["success_rate"] is not None:
            out.append(
                stats.estimate(
                    f"{at} success rate at {knob}",
                    p["success_rate"],
                    p["success_low"],
                    p["success_high"],
                )
            )
    return out


def _table(f: XorFrontier) -> str:
    knob = f.knob
    return "; ".join(
        f"d={p['d']}: {knob}={stats.fmt_interval(p[knob], p[f'{knob}_low'], _up(p, knob), 6)}, "
        f"params={stats.fmt_interval(p['params'], p['params_low'], _up(p, 'params'), 6)}"
        for p in f.points
    )


def _up(point: dict, key: str) -> float:
    """The upper bound; ``None`` stands for ``inf``: not reached in some bootstrap draws."""
    return _inf(point[f"{key}_high"])


def judged_records(records: list[Record]) -> list[Record]:
    """The records the criterion judges: the FCN's, and the transformer's at ``d >= 64``."""
    return [r for r in records if r["model"] != "transformer" or r["d"] >= TRANSFORMER_MIN_D]


def thresholds(f: XorFrontier) -> tuple[list[float], list[float], list[float], list[float]]:
    """``(d, knob*, low, high)`` per size of ``f``; an unreached threshold or bound is ``inf``."""
    knob = f.knob
    return (
        [float(p["d"]) for p in f.points],
        [_inf(p[knob]) for p in f.points],
        [_inf(p[f"{knob}_low"]) for p in f.points],
        [_inf(p[f"{knob}_high"]) for p in f.points],
    )


def analyse(records: list[Record]) -> dict[str, Any]:
    """Every number of the verdict: both frontiers, the FCN exponent, the transformer's exponent
    (conservative lower bound: a draw unreached below the mean ``ln d`` reads ``-inf``), its
    polylog exponent ``p``, the growth rules on its interpolated crossings (the resamples of
    ``frontier_of``, paired across sizes) and the ``d`` that would separate the laws."""
    from .. import xor_thresholds as xt

    judged = sorted(judged_records(records), key=lambda r: r["d"])
    t = xt.frontier_of(judged, "transformer")
    f = xt.frontier_of(records, "fcn")
    out: dict[str, Any] = {"t": t, "f": f, "fcn_alpha": f.exponent()}
    out["excluded"] = sorted(
        {r["d"] for r in records if r["model"] == "transformer" and r["d"] < TRANSFORMER_MIN_D}
    )
    out["alpha"] = out["p"] = (math.nan, math.nan, math.nan)
    out["separating_d"] = None
    ds, m, lows, highs = thresholds(t)
    if len(ds) >= 2:
        value, _, high = t.exponent()
        low = one_sided_exponent(POWER, ds, t.draws, np.isinf(t.draws), "low")
        out["alpha"] = (value, low, high)
        p_low, p_high = stats.interval(exponent_draws(POLYLOG, ds, t.draws))  # p of 2m = of m
        out["p"] = (POLYLOG.fit(ds, m)[1], p_low, p_high)
        out["separating_d"] = separating_d(ds, m, lows, highs)
    crossings = [
        xt.crossing_draws(*probe_matrix(r["probes"]), xt.TARGET, seed=xt.BOOTSTRAP_SEED)
        for r in judged
        if r["model"] == "transformer"
    ]
    out["crossing"] = np.array([c[0] for c in crossings])
    draws = np.column_stack([c[1] for c in crossings]) if crossings else np.empty((0, 0))
    out["growth"] = xt.growth_test(ds, out["crossing"], draws, RIVAL_MIN_ALPHA)
    return out
