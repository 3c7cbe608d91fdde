"""The verdict of the fixed-embeddings claim (SPEC Part G, item 1): ``N*(d, k)`` with its
bootstrap interval, the exponent ``alpha_k`` of ``N* = c d^alpha_k`` per ``k``, how it grows with
``k``, and the decision between the two laws.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...core.rng import stream_seed
from ...exact.fixed_features import walsh_count
from ...metrics import calibration, stats
from ...metrics.laws import POWER, exponent_draws
from ..base import Record

REPRODUCE_RATE = 0.5
"""Per unit of ``k``, the least growth of the ``d``-exponent the lower bound must show: half the
``d^k`` law's 1."""
REFUTE_RATE = 0.25
"""Per unit of ``k``, the growth the upper bound must stay under for ``not reproduced``: the
rival (one exponent for every ``k``) predicts 0."""
MIN_D = 3
"""Sizes ``d`` per ``k`` a fitted exponent needs."""
MIN_REPLICAS = 10
"""Replicas per ``(d, k)`` a decision needs: with fewer, the 90% quantile is their largest
``N_r``, whose bootstrap can never exceed it (the interval is too narrow)."""
CRITERION = (
    "per k, N*(d, k) = the smallest N at which >= 90% of replicas' exact least-squares readouts "
    "on the first N frozen random features have sign error <= 1% over the cube, with a bootstrap "
    "95% interval over replicas; alpha_k = the exponent of N* = c d^alpha_k (log-log least "
    "squares over the d's, >= 3 of them), its interval from the same resamples; reproduced when "
    "the lower bound of alpha_kmax - alpha_kmin is >= 0.5 (kmax - kmin) (the d-exponent grows "
    "like k, N* ~ (c d)^k: exponential in k) and the point estimates of alpha increase with k; "
    "not reproduced when its upper bound is < 0.25 (kmax - kmin) (one exponent for every k: "
    "N* = c d^alpha k^beta, polynomial in k); otherwise, or with fewer than 2 k's, fewer than 3 "
    "d's, fewer than 10 replicas per (d, k) or a threshold beyond the cap, inconclusive; "
    "reported: ln N* against k at the largest d and its slope per unit k beside ln d (criterion "
    "version 1)"
)


def thresholds(record: Record) -> np.ndarray:
    """Per replica ``N_r`` (``inf``: not reached up to the cap)."""
    return np.array([math.inf if t is None else float(t) for t in record["thresholds"]])


def cell_seed(seed: int, d: int, k: int) -> int:
    """The bootstrap's seed for one ``(d, k)``: the cells resample independently."""
    return stream_seed(seed, "fixed-embeddings-bootstrap", d, k) % (1 << 32)


def quantile_threshold(
    values: np.ndarray, rate: float, seed: int, resamples: int | None = None
) -> tuple[float, np.ndarray]:
    """``N*``, the smallest ``N`` reached by ``>= rate`` of the replicas (``values``: their
    ``N_r``), and its bootstrap draws (``stats.threshold_draws``, replicas resampled)."""
    sizes = np.unique(values[np.isfinite(values)])
    if not len(sizes):
        return math.inf, np.full(resamples or stats.resample_count(), math.inf)
    outcomes = values[:, None] <= sizes[None, :]
    return stats.threshold_draws(sizes, outcomes, rate, resamples=resamples, seed=seed)


@dataclass(frozen=True)
class Series:
    """One ``k``: ``N*`` per ``d`` with its draws (``resamples x d``), the exponent and its
    draws."""

    k: int
    d: np.ndarray
    n: np.ndarray
    draws: np.ndarray
    caps: np.ndarray
    replicas: int

    @property
    def alpha(self) -> float:
        if len(self.d) < 2 or not np.isfinite(self.n).all():
            return math.nan
        return POWER.fit(self.d, self.n)[1]

    @property
    def alpha_draws(self) -> np.ndarray:
        if len(self.d) < 2:
            return np.full(len(self.draws), math.nan)
        return exponent_draws(POWER, self.d, self.draws)

    def interval(self, j: int) -> tuple[float, float]:
        return stats.interval(self.draws[:, j])


def analyse(records: list[Record], config: Any) -> dict[int, Series]:
    """Per ``k`` (ascending) its ``Series`` over the ``d``'s of ``records``."""
    out = {}
    for k in sorted({r["k"] for r in records}):
        rows = sorted((r for r in records if r["k"] == k), key=lambda r: r["d"])
        fits = [
            quantile_threshold(thresholds(r), config.target_rate, cell_seed(config.seed, r["d"], k))
            for r in rows
        ]
        out[k] = Series(
            k=k,
            d=np.array([r["d"] for r in rows], dtype=float),
            n=np.array([f[0] for f in fits]),
            draws=np.column_stack([f[1] for f in fits]),
            caps=np.array([r["n_cap"] for r in rows], dtype=float),
            replicas=min(len(r["thresholds"]) for r in rows),
        )
    return out


def exponent_estimates(series: dict[int, Series]) -> tuple[list[dict], dict[str, Any]]:
    """``alpha_k`` per ``k``, the differences between consecutive ``k``'s and ``alpha_kmax -
    alpha_kmin``, each with its interval (one draw of every cell per resample)."""
    ks = list(series)
    estimates = []
    for k, s in series.items():
        estimates.append(bounded(f"alpha_{k}", s.alpha, *stats.interval(s.alpha_draws)))
    steps = [series[b].alpha - series[a].alpha for a, b in zip(ks, ks[1:], strict=False)]
    span = None
    if len(ks) >= 2:
        low, high = series[ks[0]], series[ks[-1]]
        draws = high.alpha_draws - low.alpha_draws
        value = high.alpha - low.alpha
        span = bounded(f"alpha_{ks[-1]} - alpha_{ks[0]}", value, *stats.interval(draws))
        estimates.append(span)
    return estimates, {"span": span, "steps": steps, "dk": ks[-1] - ks[0] if ks else 0}


def largest_d(series: dict[int, Series]) -> tuple[list[dict], dict | None]:
    """``ln N*`` per ``k`` at the largest ``d`` every ``k`` ran, and its least-squares slope in
    ``k`` with its interval (reported, not decided on)."""
    common = set.intersection(*(set(s.d.tolist()) for s in series.values())) if series else set()
    if not common:
        return [], None
    d = max(common)
    ks = np.array(list(series), dtype=float)
    cols = [int(np.nonzero(s.d == d)[0][0]) for s in series.values()]
    n = np.array([s.n[j] for s, j in zip(series.values(), cols, strict=True)])
    draws = np.column_stack([s.draws[:, j] for s, j in zip(series.values(), cols, strict=True)])
    estimates = [
        bounded(f"ln N*(k={int(k)}, d={int(d)})", math.log(v), *np.log(s.interval(j)))
        for k, v, s, j in zip(ks, n, series.values(), cols, strict=True)
    ]
    if len(ks) < 2 or not np.isfinite(n).all():
        return estimates, None
    slopes = _slopes(ks, draws)
    fit = bounded(
        f"slope of ln N* per unit k (d={int(d)})",
        float(_slopes(ks, n[None, :])[0]),
        *stats.interval(slopes),
    )
    return [*estimates, fit], {"d": d, "slope": fit}


def _slopes(ks: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The least-squares slope of ``ln N*`` in ``k`` per row of ``rows`` (``draws x k``); a row
    with a threshold not reached gives ``nan`` (``+inf`` to ``stats.interval``)."""
    finite = np.isfinite(rows).all(axis=1)
    logs = np.log(np.where(finite[:, None], rows, 1.0))
    kc = ks - ks.mean()
    return np.where(finite, (logs - logs.mean(axis=1, keepdims=True)) @ kc / np.sum(kc**2), np.nan)


def cell_estimates(series: dict[int, Series]) -> list[dict]:
    out = []
    for k, s in series.items():
        for j, d in enumerate(s.d):
            out.append(bounded(f"N*(d={int(d)}, k={k})", s.n[j], *s.interval(j)))
    return out


def bounded(name: str, value: float, low: float, high: float) -> dict:
    """An estimate whose interval is widened, where a percentile interval misses it, to hold the
    value (a quantile of few replicas can sit at the edge of its bootstrap range)."""
    return stats.estimate(name, *stats.holding(value, low, high))


Outcome = tuple[str, str, str]
"""A verdict, its reason and the reason in short."""


def decide(series: dict[int, Series], span: dict | None, steps: list[float]) -> Outcome:
    """The verdict, its reason and the reason in short (``CRITERION``)."""
    ks = list(series)
    if len(ks) < 2 or span is None:
        return (
            stats.INCONCLUSIVE,
            f"only k = {ks} ran: the growth of alpha with k needs two k's",
            f"only k = {ks} ran; alpha's growth with k needs two k's",
        )
    gap = _undecidable(series, span)
    if gap is not None:
        return gap
    texts = SpanText.of(series, span)
    if span["low"] is not None and span["low"] >= REPRODUCE_RATE * texts.dk and min(steps) > 0:
        return _reproduced(texts)
    if span["high"] is not None and span["high"] < REFUTE_RATE * texts.dk:
        return _not_reproduced(texts)
    return _in_between(series, steps, texts)


def _undecidable(series: dict[int, Series], span: dict) -> Outcome | None:
    """``INCONCLUSIVE`` with its reason where two ``k``'s cannot decide: a ``k`` at fewer than
    ``MIN_D`` ``d``'s, fewer than ``MIN_REPLICAS`` replicas, or a threshold beyond the cap;
    ``None`` where they can."""
    short = [k for k, s in series.items() if len(s.d) < MIN_D]
    if short:
        return (
            stats.INCONCLUSIVE,
            f"k = {short} ran at fewer than {MIN_D} d's: an exponent needs {MIN_D} or more",
            stats.fitting(
                f"k = {short} ran at fewer than {MIN_D} d's; an exponent needs {MIN_D}",
                f"{len(short)} k's ran at fewer than {MIN_D} d's",
            ),
        )
    few = min(s.replicas for s in series.values())
    if few < MIN_REPLICAS:
        return (
            stats.INCONCLUSIVE,
            f"only {few} replicas per (d, k): the 90% quantile of fewer than {MIN_REPLICAS} is "
            "their largest N_r, whose bootstrap interval is too narrow; more seeds would decide",
            f"only {few} replicas per (d, k); the criterion needs {MIN_REPLICAS}",
        )
    return _censored(series, span)


def _censored(series: dict[int, Series], span: dict) -> Outcome | None:
    """``INCONCLUSIVE`` where an ``N*`` or its upper bound lies beyond the cap (or the span
    has no value), else ``None``."""
    censored = [
        f"(d={int(d)}, k={k})"
        for k, s in series.items()
        for j, d in enumerate(s.d)
        if not math.isfinite(s.interval(j)[1])
    ]
    if not censored and span["value"] is not None:
        return None
    return (
        stats.INCONCLUSIVE,
        f"N* or its upper bound lies beyond the cap at {', '.join(censored)}: a larger "
        "n_limit would decide",
        stats.several(
            censored,
            "N* or its upper bound beyond the cap at {}",
            "N* or its upper bound beyond the cap in {} cells",
        )
        if censored
        else "N* or its upper bound lies beyond the cap",
    )


@dataclass(frozen=True)
class SpanText:
    """``alpha_kmax - alpha_kmin`` as the reasons write it."""

    name: str
    """``alpha_kmax - alpha_kmin``."""
    value: float
    spanned: str
    """The name with the value and its interval."""
    text: str
    """Every ``alpha_k``, then ``spanned``."""
    dk: int
    """``kmax - kmin``."""

    @classmethod
    def of(cls, series: dict[int, Series], span: dict) -> SpanText:
        ks = list(series)
        alphas = ", ".join(f"alpha_{k} = {s.alpha:.3g}" for k, s in series.items())
        name = f"alpha_{ks[-1]} - alpha_{ks[0]}"
        spanned = f"{name} = {stats.fmt_interval(span['value'], span['low'], span['high'])}"
        return cls(name, span["value"], spanned, f"{alphas}; {spanned}", ks[-1] - ks[0])


def _reproduced(t: SpanText) -> Outcome:
    """The lower bound clears ``REPRODUCE_RATE`` per unit ``k`` and the ``alpha``'s increase."""
    bound = f"{REPRODUCE_RATE * t.dk:g}"
    return (
        stats.REPRODUCED,
        f"the d-exponent of N* grows with k ({t.text} >= {bound}): N* ~ (c d)^k, exponential in k",
        stats.fitting(
            f"{t.spanned} >= {bound}: exponential in k",
            f"{t.spanned} >= {bound}",
            f"{t.name} = {t.value:.3g} >= {bound}",
        ),
    )


def _not_reproduced(t: SpanText) -> Outcome:
    """The upper bound stays under ``REFUTE_RATE`` per unit ``k``: one exponent fits."""
    bound = f"{REFUTE_RATE * t.dk:g}"
    return (
        stats.NOT_REPRODUCED,
        f"one d-exponent fits every k ({t.text} < {bound}): N* is polynomial in k at these d's",
        stats.fitting(
            f"{t.spanned} < {bound}: polynomial in k",
            f"{t.spanned} < {bound}",
            f"{t.name} = {t.value:.3g} < {bound}",
        ),
    )


def _in_between(series: dict[int, Series], steps: list[float], t: SpanText) -> Outcome:
    """``INCONCLUSIVE``: the span lies between the two bounds, or the ``alpha``'s do not
    increase with ``k`` (the summary names the first pair that does not)."""
    bounds = f"between {REFUTE_RATE * t.dk:g} and {REPRODUCE_RATE * t.dk:g}"
    if min(steps) <= 0:
        why = "the exponents do not increase with k"
        ks = list(series)
        j = next(j for j, step in enumerate(steps) if step <= 0)
        (a, low), (b, high) = ((k, series[k].alpha) for k in ks[j : j + 2])
        summary = stats.fitting(
            f"alpha_{b} = {high:.3g} <= alpha_{a} = {low:.3g}: no increase with k", why
        )
    else:
        why = "the interval is wide"
        summary = stats.fitting(
            f"{t.spanned} lies {bounds}", f"{t.name} = {t.value:.3g} lies {bounds}"
        )
    return (
        stats.INCONCLUSIVE,
        f"{t.text} lies {bounds} ({why}): more replicas (seeds) or a wider range of d (the full "
        "preset) would decide",
        summary,
    )


def verdict(records: list[Record], config: Any) -> dict:
    series = analyse(records, config)
    estimates = cell_estimates(series)
    exps, info = exponent_estimates(series)
    big, big_info = largest_d(series) if not calibration.in_simulation() else ([], None)
    estimates += exps + big
    outcome, reason, summary = decide(series, info["span"], info["steps"])
    if big_info is not None:
        s = big_info["slope"]
        reason += (
            f"; at d = {int(big_info['d'])} ln N* rises by "
            f"{stats.fmt_interval(s['value'], s['low'], s['high'])} per unit k "
            f"(ln d = {math.log(big_info['d']):.3g})"
        )
    measured = "; ".join(stats.fmt_estimate(e) for e in estimates)
    if not calibration.in_simulation():
        measured += "; N* / Walsh functions of degree <= k: " + walsh_ratios(series)
    criterion = CRITERION + (
        f" ({config.seeds} replicas per (d, k), {config.features} features, sign error <= "
        f"{config.target_error:g}, N* reached by >= {config.target_rate:g} of replicas)"
    )
    return stats.claim(outcome, reason + ".", measured, criterion, estimates, summary=summary)


def walsh_ratios(series: dict[int, Series]) -> str:
    """``N* / sum_{j <= k} C(d, j)`` per cell (the dimension that represents every degree-``k``
    parity)."""
    parts = []
    for k, s in series.items():
        for d, n in zip(s.d, s.n, strict=True):
            parts.append(f"(d={int(d)}, k={k}): {n / walsh_count(int(d), k):.3g}")
    return ", ".join(parts)
