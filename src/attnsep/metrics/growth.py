"""Growth laws decided by a rule robust to small misfit (SPEC Part F).

A power law ``c x^α`` has the same local log-log exponent at every size; a polylog law
``a (ln x)^p`` (or ``a + b (ln x)^p``) has a local exponent that falls like ``p / ln x``. So the
paper's polylog side is supported when the exponent fitted on the larger sizes lies
interval-separated below the one fitted on the smaller sizes (``curvature``), or when even the
larger sizes grow slower than any power the rival allows; the rival is supported when the larger
sizes grow at least like its least power and the exponent does not fall. Beside it, each law's
held-out relative error (fitted on the smaller half, judged on the larger) with a bootstrap
interval on their difference (``held_out_errors``). Neither rule asks a prediction to land inside
an interval ± 1, so a small misfit of the paper's law (a plateau, a rounding) does not decide.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.validate import require
from . import stats
from .laws import GrowthLaw, parameters


def _halves(n: int) -> tuple[slice, slice]:
    """The smaller and the larger half of ``n`` sorted sizes, each at least two sizes (they share
    the middle size when ``n`` is odd)."""
    require(n >= 4, f"a curvature test needs at least four sizes, got {n}")
    half = (n + 1) // 2
    return slice(0, half), slice(n - half, n)


def _slopes(xs: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The log-log least-squares slope of each row of ``rows`` (``draws x sizes``) against
    ``xs``; ``nan`` for a row with a value not finite and positive."""
    ok = np.isfinite(rows).all(axis=1) & (rows > 0).all(axis=1)
    v = np.log(xs)
    vc = v - v.mean()
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.log(np.where(ok[:, None], rows, 1.0))
    slopes = (u - u.mean(axis=1, keepdims=True)) @ vc / np.sum(vc**2)
    return np.where(ok, slopes, math.nan)


def _summary(name: str, point: float, draws: np.ndarray) -> dict[str, Any]:
    low, high = _two_sided(draws)
    return stats.estimate(name, point, low, high)


def _two_sided(draws: np.ndarray) -> tuple[float, float]:
    """A 95% percentile interval in which ``nan`` (a draw with a size never reached) widens
    both ends: it may lie on either side."""
    v = np.asarray(draws, dtype=float)
    if np.isnan(v).any():
        hi = stats.interval(v)[1]
        lo = -stats.interval(-v)[1]
        return lo, hi
    return stats.interval(v)


def curvature(
    xs: stats.Floats, values: stats.Floats, draws: np.ndarray, rival_min_exponent: float
) -> dict[str, Any]:
    """The local log-log exponent on the smaller and on the larger half of the sizes and its
    change (larger minus smaller), each with a 95% bootstrap interval from ``draws`` (bootstrap
    draws of the measured values, ``resamples x sizes`` in the order of ``xs``).

    ``decided`` is ``"paper"`` when the change's upper end is below 0 (the exponent falls, as a
    polylog law's does) or the larger half's upper end is below ``rival_min_exponent``;
    ``"rival"`` when the larger half's lower end is at least ``rival_min_exponent`` and the change
    is not interval-separated below 0 (a power law at least the rival's); ``"neither"``
    otherwise. The two cannot both hold."""
    order = np.argsort(xs)
    x = np.asarray(xs, dtype=float)[order]
    point = np.asarray(values, dtype=float)[order][None, :]
    rows = np.asarray(draws, dtype=float)[:, order]
    small, large = _halves(len(x))
    s_point, l_point = _slopes(x[small], point[:, small])[0], _slopes(x[large], point[:, large])[0]
    s_draws, l_draws = _slopes(x[small], rows[:, small]), _slopes(x[large], rows[:, large])
    out: dict[str, Any] = {
        "smaller": _summary(f"local exponent, {_span(x[small])}", s_point, s_draws),
        "larger": _summary(f"local exponent, {_span(x[large])}", l_point, l_draws),
        "change": _summary("change of the local exponent", l_point - s_point, l_draws - s_draws),
    }
    falls = _finite_high(out["change"]) < 0
    slow = _finite_high(out["larger"]) < rival_min_exponent
    steep = out["larger"]["low"] is not None and out["larger"]["low"] >= rival_min_exponent
    if falls or slow:
        out["decided"] = "paper"
    elif steep:
        out["decided"] = "rival"
    else:
        out["decided"] = "neither"
    out["rival_min_exponent"] = rival_min_exponent
    return out


def _finite_high(e: dict[str, Any]) -> float:
    return math.inf if e["high"] is None else float(e["high"])


def _span(x: np.ndarray) -> str:
    return f"{x[0]:g}..{x[-1]:g}"


def held_out_errors(
    paper: GrowthLaw,
    rival: GrowthLaw,
    xs: stats.Floats,
    values: stats.Floats,
    draws: np.ndarray,
    rival_min_exponent: float | None = None,
) -> dict[str, Any]:
    """Each law fitted on the smaller half of the sizes and its mean absolute log error on the
    larger half (the relative error of its prediction), on the measured values and on each
    bootstrap row of ``draws``; ``difference`` is the rival's error minus the paper's, with its
    95% interval (above 0: the paper's law predicts better). Rows with a value never reached
    are left out; ``used`` counts the rows kept; a measured value never reached leaves the point
    estimates out (``None``), its intervals from the draws."""
    order = np.argsort(xs)
    x = np.asarray(xs, dtype=float)[order]
    point = np.asarray(values, dtype=float)[order][None, :]
    rows = np.asarray(draws, dtype=float)[:, order]
    rows = rows[np.isfinite(rows).all(axis=1) & (rows > 0).all(axis=1)]
    half = max(parameters(paper), parameters(rival), len(x) // 2)
    require(len(x) > half, f"a held-out test needs at least {half + 1} sizes, got {len(x)}")
    out: dict[str, Any] = {"fitted_on": x[:half].tolist(), "judged_on": x[half:].tolist()}
    if len(rows) < 2:
        out.update(paper=None, rival=None, difference=None, used=0)
        return out
    measured = bool(np.isfinite(point).all() and (point > 0).all())
    draws_of: dict[str, np.ndarray] = {}
    point_of: dict[str, float] = {}
    for side, law, floor in (("paper", paper, None), ("rival", rival, rival_min_exponent)):
        draws_of[side] = _log_errors(law, x, rows, half, floor)
        point_of[side] = float(_log_errors(law, x, point, half, floor)[0]) if measured else math.nan
        name = f"{law.name} held-out relative error"
        out[side] = _summary(name, point_of[side], draws_of[side])
    diff = draws_of["rival"] - draws_of["paper"]
    diff = np.where(np.isfinite(diff), diff, math.nan)
    point_diff = point_of["rival"] - point_of["paper"]
    out["difference"] = _summary("rival's minus paper's held-out error", point_diff, diff)
    out["used"] = len(rows)
    return out
    errors = {}
    for side, law, floor in (("paper", paper, None), ("rival", rival, rival_min_exponent)):
        predicted = law.refit_predict(x[:half], rows[:, :half], x[half:], floor)
        with np.errstate(divide="ignore", invalid="ignore"):
            errors[side] = np.mean(np.abs(np.log(predicted / rows[:, half:])), axis=1)
        errors[side] = np.where(np.isfinite(errors[side]), errors[side], math.inf)
        name = f"{law.name} held-out relative error"
        out[side] = _summary(name, errors[side][0], errors[side][1:])
    diff = errors["rival"] - errors["paper"]
    diff = np.where(np.isfinite(diff), diff, math.nan)
    out["difference"] = _summary("rival's minus paper's held-out error", diff[0], diff[1:])
    out["used"] = len(rows) - 1
    return out


def _log_errors(
    law: GrowthLaw, x: np.ndarray, rows: np.ndarray, half: int, floor: float | None
) -> np.ndarray:
    """Per row: ``law`` fitted on the first ``half`` sizes, its mean absolute log error on the
    rest (``inf`` where a prediction is not finite and positive)."""
    predicted = law.refit_predict(x[:half], rows[:, :half], x[half:], floor)
    with np.errstate(divide="ignore", invalid="ignore"):
        errors = np.mean(np.abs(np.log(predicted / rows[:, half:])), axis=1)
    return np.where(np.isfinite(errors), errors, math.inf)


def held_out_side(difference: dict[str, Any] | None) -> str:
    """The held-out rule's side (SPEC Part F): ``paper`` when the rival's minus the paper's
    held-out error (``held_out_errors``' ``difference``) has its lower end above 0, ``rival``
    when its upper end is below 0, else ``neither``."""
    if difference is None:
        return "neither"
    if difference["low"] is not None and difference["low"] > 0:
        return "paper"
    if difference["high"] is not None and difference["high"] < 0:
        return "rival"
    return "neither"


MIN_SIZES = 4
"""The two rules need two sizes in each half (``curvature``)."""
UNREACHED = "unreached"
"""``both_rules``' decision when some threshold was not reached."""


def both_rules(
    paper: GrowthLaw,
    rival: GrowthLaw,
    xs: stats.Floats,
    values: np.ndarray,
    draws: np.ndarray,
    rival_min_exponent: float | None,
) -> dict[str, Any]:
    """SPEC Part F's two rules on one series of thresholds: ``curvature`` (its least power 0 when
    the rival's exponent is free) and ``held_out_errors`` with its ``side``. ``decided`` is
    ``paper`` or ``rival`` when both rules side with it, else ``neither``; ``None`` with fewer
    than ``MIN_SIZES`` sizes, ``UNREACHED`` with a threshold not reached (the rules not run)."""
    if len(xs) < MIN_SIZES:
        return {"decided": None}
    if not np.isfinite(values).all():
        return {"decided": UNREACHED}
    least = 0.0 if rival_min_exponent is None else rival_min_exponent
    curv = curvature(xs, values, draws, least)
    held = held_out_errors(paper, rival, xs, values, draws, rival_min_exponent)
    side = held_out_side(held["difference"])
    decided = curv["decided"] if curv["decided"] == side else "neither"
    return {"curvature": curv, "held_out": held, "side": side, "decided": decided}
