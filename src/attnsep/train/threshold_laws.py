"""The growth law of ``m_p*(T)``: one series of thresholds, its bootstrap intervals, the
fitted exponents and the held-out comparison of ``a + b (ln T)^p`` with ``c T^alpha`` — the
analysis shared by B5.2 and C (SPEC Part D, E)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..configs import SELECTION_RIVAL_MIN_ALPHA as RIVAL_MIN_ALPHA
from ..metrics import stats
from ..metrics.laws import AFFINE_POLYLOG, LINEAR_LOG, P_GRID, POWER, AffinePolylog, Law, parameters
from ..metrics.two_laws import compare_laws, widen
from .search import probe_matrix
from .selection_threshold import RATE

GRID = "integer"
"""``m_p`` is an integer knob: a law's prediction is compared with the measured interval widened
by ``± 1`` (``two_laws.widen``, SPEC Part E)."""
MIN_SIZES = 4
"""The held-out test fits ``a + b (ln T)^p`` (3 parameters) on at least 3 sizes and predicts at
least one more."""


def _rows_exponents(law: Law | AffinePolylog, xs: list[float], rows: np.ndarray) -> np.ndarray:
    """``law.exponent(law.fit(xs, row))`` for every row of ``rows`` (``resamples x sizes``) at
    once: the least squares of ``laws.Law.fit`` / ``laws.AFFINE_POLYLOG.fit`` (unconstrained)
    vectorized over the distinct rows (tested equal); a row with a non-finite value gives
    ``nan``."""
    y, back = np.unique(np.asarray(rows, dtype=float), axis=0, return_inverse=True)
    finite = np.isfinite(y).all(axis=1)
    y = np.where(finite[:, None], y, 1.0)
    x = np.asarray(xs, dtype=float)
    if isinstance(law, AffinePolylog):
        v = np.log(x)[None, :] ** P_GRID[:, None]  # powers x sizes
        vc = v - v.mean(axis=1, keepdims=True)
        yc = y - y.mean(axis=1, keepdims=True)  # rows x sizes
        b = (yc @ vc.T) / np.sum(vc**2, axis=1)  # rows x powers
        sse = np.sum((yc[:, None, :] - b[:, :, None] * vc[None, :, :]) ** 2, axis=2)
        exponents = P_GRID[np.argmin(sse, axis=1)].astype(float)
    else:
        v, u = law.x_form(x), law.y_form(y)
        vc = v - v.mean()
        exponents = ((u - u.mean(axis=1, keepdims=True)) @ vc) / np.sum(vc**2)
    return np.where(finite, exponents, math.nan)[np.ravel(back)]


def _intervals(columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``stats.interval`` of every column of ``columns`` (``resamples x k``) at once."""
    v = np.where(np.isnan(columns), np.inf, columns)
    tail = (1 - stats.LEVEL) / 2
    low = np.quantile(v, tail, axis=0, method="lower")
    return low, np.quantile(v, 1 - tail, axis=0, method="higher")


def separating_T(
    Ts: list[float],
    m: list[float],
    lows: list[float],
    highs: list[float],
    rival_min_alpha: float | None = RIVAL_MIN_ALPHA,
) -> int | None:
    """The smallest ``T = 2^k`` beyond the largest measured one at which ``a + b (ln T)^p`` and
    the rival ``c T^alpha`` (``alpha >= rival_min_alpha``), both fitted on all sizes, differ by
    more than the interval measured at the largest ``T`` widened by the integer grid (relative
    to its value); ``None`` with fewer than 3 sizes, an unreached size, or beyond ``2^40``."""
    if len(Ts) < 3 or not np.isfinite(m + highs).all() or m[-1] <= 0:
        return None
    width = (highs[-1] - lows[-1] + 2.0) / m[-1]  # widened by ± 1 (GRID)
    paper = AFFINE_POLYLOG.fit(Ts, m)
    rival = POWER.fit(Ts, m, rival_min_alpha)
    for k in range(int(math.log2(max(Ts))) + 1, 41):
        p = AFFINE_POLYLOG.predict(paper, [2.0**k])[0]
        r = POWER.predict(rival, [2.0**k])[0]
        if abs(p - r) > width * max(min(abs(p), abs(r)), 1e-12):
            return 2**k
    return None


def law_series(
    records: list[dict], offset: int = 0, rival_min_alpha: float | None = RIVAL_MIN_ALPHA
) -> dict[str, Any]:
    """One series of thresholds (records of ``population_threshold`` or ``trained_threshold``
    at several ``T``) plus ``offset`` (C: the width ``d + m_p*``), SPEC Part E.

    Per ``T`` the point and its bootstrap 95% interval over replicas. Fitted on all sizes, each
    with a bootstrap interval: ``p`` of the paper's ``a + b (ln T)^p`` (``polylog``: its
    ``(a, b, p)``), the exponent ``alpha`` of ``c T^alpha`` (free) and the slope ``b`` of
    ``a + b ln T`` (a description). ``comparison``: ``two_laws.compare_laws`` of ``a + b (ln T)^p``
    against ``c T^alpha`` with ``alpha >= rival_min_alpha``, both fitted on the smaller half,
    each prediction with its band from the bootstrap ``draws`` refitted (``two_laws.held_out``),
    judged against the intervals widened by ``± 1`` (``GRID``); ``None`` with fewer than
    ``MIN_SIZES`` sizes. ``flat``: one constant lies inside every widened interval (no growth to
    judge). ``separating_T``: where the two laws fitted on all sizes part."""
    rows = sorted(records, key=lambda r: r["T"])
    Ts = [float(r["T"]) for r in rows]
    points, draws = [], []
    for r in rows:
        sizes, outcomes = probe_matrix(r["probes"])
        point, boot = stats.threshold_draws(sizes, outcomes, RATE, seed=r["T"])
        points.append(point)
        draws.append(boot + offset)
    matrix = np.column_stack(draws)
    lows, highs = (x.tolist() for x in _intervals(matrix))
    m = [p + offset for p in points]
    highs = [math.inf if math.isinf(p) else h for p, h in zip(points, highs, strict=True)]
    out: dict[str, Any] = {"T": Ts, "m": m, "low": lows, "high": highs}
    out["rival_min_alpha"] = rival_min_alpha
    nan3 = (math.nan, math.nan, math.nan)
    out["b"] = out["alpha"] = out["p"] = out["polylog"] = nan3
    laws: list[tuple[str, Law | AffinePolylog]] = [
        ("b", LINEAR_LOG),
        ("alpha", POWER),
        ("p", AFFINE_POLYLOG),
    ]
    laws = [(name, law) for name, law in laws if len(Ts) >= parameters(law)]
    if laws:
        fitted = np.column_stack([_rows_exponents(law, Ts, matrix) for _, law in laws])
        for (name, law), low, high in zip(laws, *_intervals(fitted), strict=True):
            params = law.fit(Ts, m)
            out[name] = (law.exponent(params), float(low), float(high))
            if name == "p":
                out["polylog"] = params
    out["comparison"] = (
        compare_laws(AFFINE_POLYLOG, POWER, Ts, m, lows, highs, rival_min_alpha, GRID, matrix)
        if len(Ts) >= MIN_SIZES
        else None
    )
    low, high = widen(lows, highs, GRID)
    out["flat"] = bool(np.isfinite(high).all() and low.max() <= high.min())
    out["separating_T"] = separating_T(Ts, m, lows, highs, rival_min_alpha)
    return out


def predictions(fit: dict[str, Any]) -> str:
    """``[p1 (band), ...] (meets|misses the intervals ± 1)`` of one law's held-out predictions,
    each with the 95% band of its refits (``two_laws.held_out``)."""

    def one(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.3g}"

    bands = fit.get("band") or [[p, p] for p in fit["predicted"]]
    shown = ", ".join(
        f"{one(p)} ({one(lo)}–{one(hi)})"
        for p, (lo, hi) in zip(fit["predicted"], bands, strict=True)
    )
    return f"[{shown}] ({'meets' if fit['inside'] else 'misses'} the intervals ± 1)"
