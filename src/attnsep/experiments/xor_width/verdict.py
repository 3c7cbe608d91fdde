"""A7.2's verdict: ``m*(d)`` with its bootstrap, both exponents, the growth rules on the
interpolated crossings and the criterion (``config.Config``; SPEC A7.2, Parts D–F)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...metrics import stats
from ...metrics.laws import POLYLOG, POWER, exponent_draws, one_sided_exponent
from ...train.search import probe_matrix
from ..base import Record
from .config import Config

RIVAL_MIN_ALPHA = 0.25
"""The rival: a power law ``c d^alpha`` with ``alpha >= 0.25``."""
CONTRADICTING_ALPHA = 0.5
"""``not reproduced`` when the power exponent's bootstrap lower bound reaches this."""

CRITERION = (
    "m*(d): the smallest m whose certified success rate reaches 0.9 x the success plateau at "
    "that d (the rate at the search's largest probe, a doubling past the first width within 0.9 "
    "of it), bootstrap 95% intervals over replicas with the plateau resampled alike; m* made "
    "continuous by interpolating the crossing, at least 4 d's. (i) curvature: the local log-log "
    "exponent on the larger half of the d's interval-separated below the smaller half's, or its "
    f"upper end below {RIVAL_MIN_ALPHA}, sides with polylog; its lower end >= "
    f"{RIVAL_MIN_ALPHA} with no such fall sides with the power law; (ii) held-out: a(ln d)^p "
    f"and c d^alpha (alpha >= {RIVAL_MIN_ALPHA}) fitted on the smaller half, mean "
    "|ln(predicted/measured)| on the larger half: the rival's minus the paper's error with its "
    "95% interval above 0 sides with polylog, below 0 with the power law. Reproduced when both "
    "rules side with polylog and alpha (all d's) has a bootstrap lower bound < "
    f"{CONTRADICTING_ALPHA}; not reproduced when that lower bound >= {CONTRADICTING_ALPHA} and "
    "the rules do not both side with polylog; inconclusive otherwise (criterion version 3)"
)


def lowest_consistent(sizes: list[int], draws: np.ndarray) -> np.ndarray:
    """The smallest threshold consistent with each bootstrap draw: one above the largest probe
    below it (every probe below a draw failed), ``inf`` -> one above the largest probe."""
    grid = np.array(sorted(sizes), dtype=float)
    below = np.searchsorted(grid, draws, side="left")
    return np.where(below > 0, grid[np.maximum(below - 1, 0)] + 1, draws)


def _alpha_floor(ds: np.ndarray, draws: np.ndarray, sizes: list[list[int]]) -> float:
    """The conservative bootstrap lower bound of ``alpha`` (see ``Config``): at a ``d`` above
    the mean ``ln d`` each draw becomes its lowest consistent value; below it an infinite draw
    sends the row's exponent to ``-inf``."""
    above = np.log(ds) >= np.log(ds).mean()
    lowest = np.column_stack([lowest_consistent(s, draws[:, i]) for i, s in enumerate(sizes)])
    floor = np.where(above, lowest, draws)
    return one_sided_exponent(
        POWER, ds.tolist(), floor, np.isinf(floor), "low"
    )  # inf left only below the mean


def separating_d(
    ds: list[float], m: list[float], lows: list[float], highs: list[float]
) -> int | None:
    """The smallest ``d = 2^k`` beyond the largest of ``ds`` (ascending) at which the polylog law
    and the rival (``alpha >= 0.25``), both fitted on all sizes, differ by more than the relative
    interval width measured at the largest ``d``; ``None`` when undefined or beyond ``2^64``."""
    if len(ds) < 2 or not np.isfinite(m + highs).all():
        return None
    width = (highs[-1] - lows[-1]) / m[-1]
    paper, rival = POLYLOG.fit(ds, m), POWER.fit(ds, m, RIVAL_MIN_ALPHA)
    for k in range(int(math.log2(ds[-1])) + 1, 65):
        p, r = POLYLOG.predict(paper, [2.0**k])[0], POWER.predict(rival, [2.0**k])[0]
        if abs(p - r) > width * min(p, r):
            return 2**k
    return None


def analyse(records: list[Record], config: Config) -> dict[str, Any]:
    """Every number of the verdict and the figure: per ``d`` the plateau (successes, trials at
    the largest probe) and ``m*`` with its bootstrap interval, both exponents with intervals,
    the growth rules on the interpolated crossings (``xor_thresholds.growth_test``) and the
    separating ``d``."""
    from .. import xor_thresholds as xt

    rows = sorted(records, key=lambda r: r["d"])
    ds = np.array([float(r["d"]) for r in rows])
    m, lows, highs, draws, probed, plateaus, crossings = [], [], [], [], [], [], []
    for r in rows:
        sizes, outcomes = probe_matrix(r["probes"])
        reference = outcomes[:, int(np.argmax(sizes))]
        plateaus.append((max(sizes), int(reference.sum()), len(reference)))
        unreached = np.full(stats.resample_count(), math.inf)
        point, boot, crossing = math.inf, unreached, (math.inf, unreached)
        if r["m_star"] is not None:  # else no plateau up to m_limit: not reached in any resample
            # each d is its own replica set: its own bootstrap stream
            point, boot = stats.threshold_draws(
                sizes, outcomes, config.target, reference=reference, seed=r["d"]
            )
            crossing = xt.crossing_draws(sizes, outcomes, config.target, reference, seed=r["d"])
        low, high = stats.interval(boot)
        m.append(point)
        lows.append(low)
        highs.append(math.inf if math.isinf(point) else high)
        draws.append(boot)
        probed.append(sizes)
        crossings.append(crossing)
    matrix = np.column_stack(draws)
    out: dict[str, Any] = {"d": ds.tolist(), "m": m, "low": lows, "high": highs}
    out.update(draws=matrix, plateaus=plateaus, crossing=np.array([c[0] for c in crossings]))
    out["alpha"] = out["p"] = (math.nan, math.nan, math.nan)
    if len(ds) >= 2:
        for name, law in (("alpha", POWER), ("p", POLYLOG)):
            low, high = stats.interval(exponent_draws(law, ds.tolist(), matrix))
            out[name] = (law.fit(ds.tolist(), m)[1], low, high)
        alpha, _, high = out["alpha"]
        out["alpha"] = (alpha, _alpha_floor(ds, matrix, probed), high)
    moved = np.column_stack([c[1] for c in crossings])
    out["growth"] = xt.growth_test(ds.tolist(), out["crossing"], moved, RIVAL_MIN_ALPHA)
    out["separating_d"] = separating_d(ds.tolist(), m, lows, highs)
    return out


def _reason(a: dict[str, Any], verdict: str) -> str:
    """One sentence: why this verdict, and for ``inconclusive`` which sizes would decide."""
    from ..xor_growth_text import growth_reason

    g, alpha_low = a["growth"], a["alpha"][1]
    if verdict == stats.NOT_REPRODUCED:
        return f"m* grows like a power of d: alpha's lower bound {alpha_low:.3g} >= 0.5"
    said = growth_reason(g, len(a["d"]), RIVAL_MIN_ALPHA)
    if verdict == stats.REPRODUCED:
        return said
    unreached = [int(d) for d, v in zip(a["d"], a["m"], strict=True) if math.isinf(v)]
    if unreached:
        said = f"no success plateau (so no m*) up to m_limit at d = {unreached}"
    elif g["decided"] == "paper":
        said += f", but alpha's lower bound {alpha_low:.3g} >= 0.5"
    where = a["separating_d"]
    return said + (
        f"; the two laws fitted on all sizes first differ by more than the measured interval "
        f"width at d = 2^{int(math.log2(where))}"
        if where
        else "; no d up to 2^64 separates the fitted laws by that width"
    )


def growth_summary(g: dict[str, Any], sizes: int) -> str:
    """``xor_growth_text.growth_reason`` in short (a claim's ``summary``): the rules' deciding
    numbers, the local exponent's ends to two digits as the reason gives them."""
    from ...metrics import growth
    from ..xor_growth_text import SIDES

    if g["decided"] is None:
        return f"only {sizes} values of d; the growth rules need {growth.MIN_SIZES}"
    if g["decided"] == growth.UNREACHED:
        return "a threshold was not reached within the probes"
    c = g["curvature"]
    if g["decided"] == "paper":
        smaller, larger = (
            stats.fmt_number(c["smaller"]["value"], 2),
            stats.fmt_number(c["larger"]["value"], 2),
        )
        if c["change"]["high"] is not None and c["change"]["high"] < 0:
            return stats.fitting(
                f"local exponent falls {smaller} -> {larger}; polylog predicts better",
                f"exponent falls {smaller} -> {larger}; polylog predicts better",
            )
        high = stats.fmt_number(c["larger"]["high"], 2)
        return f"local exponent <= {high} < {RIVAL_MIN_ALPHA:g}; polylog predicts better"
    return f"curvature test: {SIDES[c['decided']]}; held-out test: {SIDES[g['side']]}"


def _summary(a: dict[str, Any], verdict: str) -> str:
    """``_reason`` in short (a claim's ``summary``)."""
    g, alpha_low = a["growth"], stats.fmt_number(a["alpha"][1])
    if verdict == stats.NOT_REPRODUCED:
        return (
            f"alpha's lower bound {alpha_low} >= {CONTRADICTING_ALPHA}: m* grows like a power of d"
        )
    unreached = [int(d) for d, v in zip(a["d"], a["m"], strict=True) if math.isinf(v)]
    if verdict == stats.INCONCLUSIVE and unreached:
        return stats.several(
            unreached,
            "no success plateau up to m_limit at d = {}",
            "no success plateau up to m_limit at {} d's",
        )
    if verdict == stats.INCONCLUSIVE and g["decided"] == "paper":
        return stats.fitting(
            f"polylog by both rules, but alpha's lower bound {alpha_low} >= {CONTRADICTING_ALPHA}",
            f"alpha's lower bound {alpha_low} >= {CONTRADICTING_ALPHA} despite the rules",
        )
    return growth_summary(g, len(a["d"]))


def verdict(records: list[Record], config: Config) -> dict:
    from ..xor_growth_text import growth_text

    a = analyse(records, config)
    decided = a["growth"]["decided"]
    contradicts = a["alpha"][1] >= CONTRADICTING_ALPHA
    if decided == "paper" and not contradicts:
        outcome = stats.REPRODUCED
    elif contradicts and decided != "paper":
        outcome = stats.NOT_REPRODUCED
    else:
        outcome = stats.INCONCLUSIVE
    ms = list(zip(a["d"], a["m"], a["low"], a["high"], a["plateaus"], strict=True))
    estimates = [stats.estimate(f"m*(d={int(d)})", v, lo, hi) for d, v, lo, hi, _ in ms]
    estimates += [
        stats.rate_estimate(f"success plateau (d={int(d)}, m={size})", k, n)
        for d, *_, (size, k, n) in ms
    ]
    estimates += [
        stats.estimate("power exponent alpha (m* = c d^alpha)", *a["alpha"]),
        stats.estimate("polylog exponent p (m* = a (ln d)^p)", *a["p"]),
    ]
    g = a["growth"]
    if "curvature" in g:
        estimates += [g["curvature"]["larger"], g["curvature"]["change"]]
        estimates.append(g["held_out"]["difference"])
    measured = "; ".join(
        [
            f"m*(d={int(d)}) = {stats.fmt_interval(v, lo, hi)} (crossing {c:.3g}; success "
            f"plateau {k}/{n} at m={size})"
            for (d, v, lo, hi, (size, k, n)), c in zip(ms, a["crossing"], strict=True)
        ]
        + [f"alpha = {stats.fmt_interval(*a['alpha'])}", f"p = {stats.fmt_interval(*a['p'])}"]
        + ([growth_text(g)] if "curvature" in g else [])
    )
    return stats.claim(
        outcome,
        _reason(a, outcome),
        measured,
        CRITERION + f" (target {config.target:g} x plateau, {config.seeds} seeds per probe)",
        estimates,
        summary=_summary(a, outcome),
        decided=decided,
        separating_d=a["separating_d"],
    )
