"""B5.2's verdict: the growth of ``m_p*(T)`` decided by SPEC Part F's rule, with the ``W = αI``
family's prediction reported beside it (SPEC B5.2, Parts E and F; criterion: ``CRITERION``).

Each threshold is made continuous: the search leaves the crossing in the integer cell
``(m_p* − 1, m_p*]``, so its value is the cell's middle ``m_p* − 0.5`` and each bootstrap draw
over replicas is moved uniformly within its cell (*choice*; SPEC Part E: "made continuous by
interpolating the crossing"). Without it the rounding alone bends a power law's local exponent
at small ``m_p*`` and bootstrap intervals of identical replicas have zero width.

The family's prediction (our analysis of ``W = αI`` at large ``T``, not the paper's sentence):
the subset's own logits ``α G_i``, ``G_i = 1 + Σ_{j≠i} p_i·p_j``, spread around their mean by
``Σ_i (G_i − Ḡ)² ≈ (q − 1)(q − 2) / m_p``, which costs ``α² (q − 1)(q − 2) / (q m_p)`` of the
uniform loss, while keeping the off-subset mass small needs ``α ≈ ln(T/q) + O(1)``: so
``m_p* ≈ (q − 1)(q − 2) ln²T / (q ε)`` for ``q >= 3`` (``p = 2``). At ``q = 2`` the two subset
logits are equal and only the off-subset mass counts: ``m_p* ≈ 2 q ln T`` (``p = 1``). At
``q = 1`` any ``m_p`` reaches the target as ``α`` grows without a bound.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...configs import SELECTION_RIVAL_MIN_ALPHA
from ...metrics import calibration, growth, stats
from ...metrics.growth import MIN_SIZES, UNREACHED
from ...metrics.laws import AFFINE_POLYLOG, POWER
from ...train.search import probe_matrix
from ..base import Record
from .config import Config

CRITERION = (
    "per (q, d) series, m_p* as the middle of its integer cell (m_p* - 0.5, bootstrap draws over "
    "replicas, on a search guarded so that none leaves the probes, moved uniformly within the "
    "cell), at least 4 T's; (i) curvature: the local "
    "log-log exponent on the larger half of the T's interval-separated below the smaller half's, "
    f"or its upper end below {SELECTION_RIVAL_MIN_ALPHA}, sides with the paper; its lower end at "
    f"least {SELECTION_RIVAL_MIN_ALPHA} with no such fall sides with the rival; (ii) held-out: "
    "a + b (ln T)^p (p free) and c T^alpha (alpha >= "
    f"{SELECTION_RIVAL_MIN_ALPHA}; free at q = 1) fitted on the smaller half, mean |ln(predicted "
    "/ measured)| on the larger half: the rival's minus the paper's error with its 95% interval "
    "above 0 sides with the paper, below 0 with the rival; a series is decided for a side when "
    "both rules side with it; a q = 1 series flat within ± 1 is not judged: reproduced when "
    "every judged series is decided for the paper, not reproduced when some series is decided "
    "for the rival, inconclusive otherwise; p per series and the W = alpha I family's "
    "q-scaling reported beside, not decided on (criterion version 4)"
)

FLAT = "flat"
"""The decision of a ``q = 1`` series with no growth to judge (``CRITERION``)."""
CELL_SEED = 5417
"""Seeds the draws' positions within their integer cells (with ``T``: reproducible)."""


def rival_min_alpha(q: int) -> float | None:
    """The rival's smallest exponent: ``alpha >= 0.3``, free at ``q = 1`` (SPEC Part E)."""
    return None if q == 1 else SELECTION_RIVAL_MIN_ALPHA


def cell_series(records: list[Record], offset: int = 0) -> tuple[list[float], np.ndarray, Any]:
    """``(T's, values, draws)`` of one series sorted by ``T``: ``m_p* − 0.5 + offset`` and its
    bootstrap draws over replicas (``resamples x T's``), each less a uniform position in its
    cell; ``inf`` where not reached."""
    from ...train.selection_threshold import RATE

    rows = sorted(records, key=lambda r: r["T"])
    values, columns = [], []
    for r in rows:
        sizes, outcomes = probe_matrix(r["probes"])
        point, boot = stats.threshold_draws(sizes, outcomes, RATE, seed=r["T"])
        cell = np.random.default_rng([CELL_SEED, r["T"]]).uniform(0.0, 1.0, len(boot))
        values.append(point - 0.5 + offset)
        columns.append(boot - cell + offset)
    return [float(r["T"]) for r in rows], np.array(values), np.column_stack(columns)


def growth_test(
    Ts: list[float], values: np.ndarray, draws: np.ndarray, rival_min: float | None
) -> dict[str, Any]:
    """Both rules on one series (``growth.both_rules``: ``a + b (ln T)^p`` against
    ``c T^alpha``)."""
    return growth.both_rules(AFFINE_POLYLOG, POWER, Ts, values, draws, rival_min)


def family_p(q: int) -> str:
    """The ``W = αI`` family's power of ``ln T`` (module docstring)."""
    if q == 1:
        return "bounded (q − 1 = 0)"
    return "p = 1" if q == 2 else "p = 2"


def family_p_value(q: int) -> float:
    """``family_p`` as a number (``nan`` at ``q = 1``)."""
    return math.nan if q == 1 else 1.0 if q == 2 else 2.0


def family_factor(q: int) -> float:
    """The family's ``q``-dependence of the ``ln²T`` coefficient, ``(q − 1)(q − 2) / q``."""
    return (q - 1) * (q - 2) / q


def family_fit(q: int, Ts: list[float], values: np.ndarray, draws: np.ndarray) -> dict | None:
    """For ``q >= 3``: ``b₂`` of ``a + b₂ (ln T)²`` over all ``T``'s with its bootstrap 95%
    interval, over ``(q − 1)(q − 2) / q`` (the family's factor) and over ``q − 1`` (SPEC Part F's
    ``(q − 1) ln²T``); ``None`` below 3 sizes, for ``q < 3`` or an unreached threshold."""
    if q < 3 or len(Ts) < 3 or not np.isfinite(values).all():
        return None
    v = np.log(np.asarray(Ts)) ** 2
    vc = v - v.mean()
    rows = np.vstack([values, draws])
    with np.errstate(invalid="ignore"):
        b = (rows - rows.mean(axis=1, keepdims=True)) @ vc / np.sum(vc**2)
    b = np.where(np.isfinite(b), b, math.nan)
    low, high = stats.interval(b[1:])
    return {
        "b2": (float(b[0]), low, high),
        "per_factor": tuple(x / family_factor(q) for x in (float(b[0]), low, high)),
        "per_q_minus_1": tuple(x / (q - 1) for x in (float(b[0]), low, high)),
    }


def analyse(records: list[Record]) -> dict[tuple[int, int], dict[str, Any]]:
    """Per ``(q, d)`` series: ``threshold_laws.law_series`` (the intervals, ``p``,
    ``alpha``, flatness, the separating ``T``) with ``growth`` (``growth_test``) and ``family``
    (``family_fit``; not in a simulation, where only the verdict counts)."""
    from ...train.threshold_laws import law_series

    out = {}
    for q, d in sorted({(r["q"], r["d"]) for r in records}):
        rows = [r for r in records if (r["q"], r["d"]) == (q, d)]
        s = law_series(rows, rival_min_alpha=rival_min_alpha(q))
        Ts, values, draws = cell_series(rows)
        s["growth"] = growth_test(Ts, values, draws, rival_min_alpha(q))
        simulated = calibration.in_simulation()
        s["family"] = None if simulated else family_fit(q, Ts, values, draws)
        out[(q, d)] = s
    return out


def decision(q: int, s: dict[str, Any]) -> str | None:
    """One series' decision: ``growth_test``'s, or ``FLAT`` for a flat ``q = 1`` series."""
    decided = s["growth"]["decided"]
    if decided is not None and q == 1 and s["flat"]:
        return FLAT
    return decided


def outcome(decisions: list[str | None]) -> str:
    """The verdict from the series' decisions (``CRITERION``; ``FLAT`` not judged)."""
    votes = [v for v in decisions if v != FLAT]
    if votes and all(v == "paper" for v in votes):
        return stats.REPRODUCED
    if "rival" in votes:
        return stats.NOT_REPRODUCED
    return stats.INCONCLUSIVE


def flat_note(series: dict[Any, dict[str, Any]], decided: dict[Any, str | None]) -> str:
    """The reason's note on the flat ``q = 1`` series left out of the decision."""
    flat = [k for k, v in decided.items() if v == FLAT]
    if not flat:
        return ""
    s = series[flat[0]]
    return (
        f"; q = 1 is flat (m_p* {min(s['m']):g} to {max(s['m']):g} over T = {int(min(s['T']))} "
        f"… {int(max(s['T']))}), so no growth law is judged on it"
    )


def reason(series: dict[Any, dict[str, Any]], decided: dict[Any, str | None], result: str) -> str:
    note = flat_note(series, decided)
    judged = {k: v for k, v in decided.items() if v != FLAT}
    if result == stats.REPRODUCED:
        return (
            "in every judged (q, d) series the local log-log exponent of m_p* falls on the larger "
            f"T's (or stays below {SELECTION_RIVAL_MIN_ALPHA}) and a + b (ln T)^p fitted on the "
            "smaller T's predicts the larger ones with a smaller relative error than c T^alpha "
            f"(alpha >= {SELECTION_RIVAL_MIN_ALPHA}), both interval-separated{note}"
        )
    if result == stats.NOT_REPRODUCED:
        rival = [f"q={q}, d={d}" for (q, d), v in judged.items() if v == "rival"]
        return (
            f"in {len(rival)} of {len(judged)} judged series ({'; '.join(rival)}) m_p* grows like "
            f"a power >= {SELECTION_RIVAL_MIN_ALPHA} on the larger T's without its exponent "
            f"falling, and c T^alpha predicts them better than a + b (ln T)^p{note}"
        )
    if not judged:
        return "every series is a flat q = 1 series: no growth law of m_p* can be judged"
    if None in judged.values():
        sizes = len(next(iter(series.values()))["T"])
        return f"the growth rules need at least {MIN_SIZES} values of T, got {sizes}{note}"
    where = [series[k]["separating_T"] for k in judged if series[k]["separating_T"]]
    beyond = (
        "; the two laws fitted on all T's separate by more than the intervals ± 1 from T = "
        f"{min(where)}"
        if where
        else "; no T up to 2^40 separates the fitted laws"
    )
    unreached = [k for k, v in judged.items() if v == UNREACHED]
    if unreached:
        return f"m_p* was not reached in series {unreached} (raise m_limit){beyond}{note}"
    counts = {x: list(judged.values()).count(x) for x in ("paper", "rival", "neither")}
    return f"decisions over the judged series: {counts}{beyond}{note}"


def summary(series: dict[Any, dict[str, Any]], decided: dict[Any, str | None], result: str) -> str:
    """:func:`reason` in at most ``stats.SUMMARY_CHARS`` characters, branch by branch."""
    judged = {k: v for k, v in decided.items() if v != FLAT}
    if result == stats.REPRODUCED:
        return stats.fitting(
            f"both rules side with (ln T)^p in all {len(judged)} judged series",
            "both rules side with (ln T)^p in every judged series",
        )
    if result == stats.NOT_REPRODUCED:
        rival = sum(v == "rival" for v in judged.values())
        return stats.fitting(
            f"m_p* grows like T^alpha (alpha >= {SELECTION_RIVAL_MIN_ALPHA}) in {rival} of "
            f"{len(judged)} series",
            f"m_p* grows like T^alpha in {rival} of {len(judged)} series",
        )
    if not judged:
        return "every series is a flat q = 1 series: nothing to judge"
    if None in judged.values():
        sizes = len(next(iter(series.values()))["T"])
        return f"only {sizes} values of T; the growth rules need {MIN_SIZES}"
    unreached = [k for k, v in judged.items() if v == UNREACHED]
    if unreached:
        q, d = unreached[0]
        if len(unreached) == 1:
            return f"m_p* not reached at q={q}, d={d} (raise m_limit)"
        return f"m_p* not reached in {len(unreached)} series, first q={q}, d={d}"
    counts = {x: list(judged.values()).count(x) for x in ("paper", "rival", "neither")}
    return "decided series: " + ", ".join(f"{k} {v}" for k, v in counts.items())


def _rules_text(g: dict[str, Any]) -> str:
    if "curvature" not in g:
        return f"growth rules: {g['decided'] or 'too few T'}"
    c, h = g["curvature"], g["held_out"]
    held = [h[k] for k in ("paper", "rival", "difference") if h[k] is not None]
    return (
        "curvature: "
        + ", ".join(stats.fmt_estimate(c[k]) for k in ("smaller", "larger", "change"))
        + f" -> {c['decided']}; held-out: "
        + ", ".join(stats.fmt_estimate(e) for e in held)
        + f" -> {g['side']}; decided {g['decided']}"
    )


def series_text(tag: str, q: int, s: dict[str, Any]) -> str:
    """One series' two rules, its fitted polylog (all ``T``'s) and the family's prediction."""
    a, b, p = s["polylog"]
    _, low, high = s["p"]
    inside = "inside" if low <= family_p_value(q) <= high else "outside"
    return (
        f"({tag}) {_rules_text(s['growth'])}; a + b (ln T)^p on all T's: a={a:.3g}, b={b:.3g}, "
        f"p={p:.3g} [{low:.3g}, {high:.3g}] (W = alpha I family: {family_p(q)}, {inside} the "
        "interval)"
    )


def family_text(series: dict[tuple[int, int], dict[str, Any]]) -> tuple[list[dict], str]:
    """The family's ``q``-scaling: per ``q >= 3`` series the estimates of ``b₂`` and its two
    ratios, and whether each ratio's intervals share a value across ``q`` (per ``d``)."""
    estimates, notes = [], []
    for d in sorted({d for _, d in series}):
        fits = {q: s["family"] for (q, dd), s in series.items() if dd == d and s["family"]}
        for q, f in fits.items():
            estimates += [
                stats.estimate(f"ln²T coefficient b₂ (q={q}, d={d})", *f["b2"]),
                stats.estimate(f"b₂ / ((q−1)(q−2)/q) (q={q}, d={d})", *f["per_factor"]),
                stats.estimate(f"b₂ / (q−1) (q={q}, d={d})", *f["per_q_minus_1"]),
            ]
        if len(fits) >= 2:
            shared = {
                key: max(f[key][1] for f in fits.values()) <= min(f[key][2] for f in fits.values())
                for key in ("per_factor", "per_q_minus_1")
            }
            notes.append(
                f"d={d}, q={sorted(fits)}: b₂ / ((q−1)(q−2)/q) one value within the intervals: "
                f"{shared['per_factor']}; b₂ / (q−1): {shared['per_q_minus_1']}"
            )
    return estimates, "; ".join(notes)


def estimates_of(q: int, d: int, s: dict[str, Any]) -> list[dict]:
    out = [
        stats.estimate(f"m_p*(T={int(T)}, q={q}, d={d})", v, lo, hi)
        for T, v, lo, hi in zip(s["T"], s["m"], s["low"], s["high"], strict=True)
    ]
    out += [
        stats.estimate(f"polylog exponent p (q={q}, d={d})", *s["p"]),
        stats.estimate(f"power exponent alpha (q={q}, d={d})", *s["alpha"]),
    ]
    g = s["growth"]
    if "curvature" in g:
        out += [{**g["curvature"][k], "name": f"{g['curvature'][k]['name']} (q={q}, d={d})"}
                for k in ("smaller", "larger", "change")]  # fmt: skip
        held = [g["held_out"][k] for k in ("paper", "rival", "difference")]
        out += [{**e, "name": f"{e['name']} (q={q}, d={d})"} for e in held if e is not None]
    return out


def verdict(records: list[Record], config: Config) -> dict:
    series = analyse(records)
    decided = {k: decision(k[0], s) for k, s in series.items()}
    result = outcome(list(decided.values()))
    if calibration.in_simulation():
        return stats.claim(result, "simulated", "", CRITERION, [], summary="simulated")
    estimates, parts = [], []
    for (q, d), s in series.items():
        estimates += estimates_of(q, d, s)
        parts.append(series_text(f"q={q}, d={d}", q, s))
    family, shared = family_text(series)
    estimates += family
    measured = "; ".join(stats.fmt_estimate(e) for e in estimates) + "; " + "; ".join(parts)
    if shared:
        measured += f"; W = alpha I family's q-scaling (reported, not decided on): {shared}"
    return stats.claim(
        result,
        reason(series, decided, result),
        measured + training_summary(records),
        CRITERION + f" (target {config.target:g}, {config.seeds} seeds per probe)",
        estimates,
        summary=summary(series, decided, result),
        decided={f"q={q}, d={d}": v for (q, d), v in decided.items()},
        family_p={f"q={q}": family_p(q) for q in sorted({q for q, _ in series})},
        separating_T={f"q={q}, d={d}": s["separating_T"] for (q, d), s in series.items()},
    )


def training_summary(records: list[Record]) -> str:
    """How the thresholds were trained: the solver, and for SGD the family's thresholds, the
    steps used and the stopping rules that fired."""
    if all(r.get("solver") == "population" for r in records):
        lean = (
            " (losses from the products' law)" if any(r.get("evaluator") for r in records) else ""
        )
        return f"; solver: population gradient descent (W = alpha I by symmetry){lean}"
    family = sorted({(r["T"], r["q"], r.get("family_m")) for r in records})
    steps = [s for r in records for p in r["probes"] for s in p.get("steps", [])]
    rules = [x for r in records for p in r["probes"] for x in p.get("rules", [])]
    return (
        "; solver: SGD to a stopping rule; family thresholds m_p^fam: "
        + ", ".join(f"(T={T}, q={q}) {m}" for T, q, m in family)
        + f"; training steps per replica: median {stats.median(steps):g}, max {max(steps)}"
        + "; stopping rules: "
        + ", ".join(f"{x} {rules.count(x)}" for x in ("reached", "near-best", "plateau", "cap"))
    )
