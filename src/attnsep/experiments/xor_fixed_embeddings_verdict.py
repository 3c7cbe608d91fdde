"""The verdict of the fixed-embeddings claim (SPEC Part G, item 1): ``N*(d, k)`` with its
bootstrap interval, the exponent ``alpha_k`` of ``N* = c d^alpha_k`` per ``k``, how it grows with
``k``, and the two laws the criterion decides between, able to simulate a run (SPEC Part E).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.rng import stream_seed
from ..exact.fixed_features import walsh_count
from ..metrics import calibration, stats
from ..metrics.stats import POWER
from .base import Record

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
        return stats.exponent_draws(POWER, self.d, self.draws)

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


def decide(
    series: dict[int, Series], span: dict | None, steps: list[float]
) -> tuple[str, str, str]:
    """The verdict, its reason and the reason in short (``CRITERION``)."""
    ks = list(series)
    if len(ks) < 2 or span is None:
        return (
            stats.INCONCLUSIVE,
            f"only k = {ks} ran: the growth of alpha with k needs two k's",
            f"only k = {ks} ran; alpha's growth with k needs two k's",
        )
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
    censored = [
        f"(d={int(d)}, k={k})"
        for k, s in series.items()
        for j, d in enumerate(s.d)
        if not math.isfinite(s.interval(j)[1])
    ]
    if censored or span["value"] is None:
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
    dk = ks[-1] - ks[0]
    alphas = ", ".join(f"alpha_{k} = {s.alpha:.3g}" for k, s in series.items())
    name = f"alpha_{ks[-1]} - alpha_{ks[0]}"
    span_text = stats.fmt_interval(span["value"], span["low"], span["high"])
    text = f"{alphas}; {name} = {span_text}"
    spanned = f"{name} = {span_text}"
    if span["low"] is not None and span["low"] >= REPRODUCE_RATE * dk and min(steps) > 0:
        return (
            stats.REPRODUCED,
            f"the d-exponent of N* grows with k ({text} >= {REPRODUCE_RATE * dk:g}): N* ~ "
            "(c d)^k, exponential in k",
            stats.fitting(
                f"{spanned} >= {REPRODUCE_RATE * dk:g}: exponential in k",
                f"{spanned} >= {REPRODUCE_RATE * dk:g}",
                f"{name} = {span['value']:.3g} >= {REPRODUCE_RATE * dk:g}",
            ),
        )
    if span["high"] is not None and span["high"] < REFUTE_RATE * dk:
        return (
            stats.NOT_REPRODUCED,
            f"one d-exponent fits every k ({text} < {REFUTE_RATE * dk:g}): N* is polynomial in "
            "k at these d's",
            stats.fitting(
                f"{spanned} < {REFUTE_RATE * dk:g}: polynomial in k",
                f"{spanned} < {REFUTE_RATE * dk:g}",
                f"{name} = {span['value']:.3g} < {REFUTE_RATE * dk:g}",
            ),
        )
    bounds = f"between {REFUTE_RATE * dk:g} and {REPRODUCE_RATE * dk:g}"
    if min(steps) <= 0:
        why = "the exponents do not increase with k"
        j = next(j for j, step in enumerate(steps) if step <= 0)
        (a, low), (b, high) = ((k, series[k].alpha) for k in ks[j : j + 2])
        summary = stats.fitting(
            f"alpha_{b} = {high:.3g} <= alpha_{a} = {low:.3g}: no increase with k", why
        )
    else:
        why = "the interval is wide"
        summary = stats.fitting(
            f"{spanned} lies {bounds}",
            f"{name} = {span['value']:.3g} lies {bounds}",
        )
    return (
        stats.INCONCLUSIVE,
        f"{text} lies {bounds} ({why}): more replicas (seeds) or a wider range of d (the full "
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


# --- the two laws, simulated (SPEC Part E) ---------------------------------------------------


def order_threshold(values: np.ndarray, rate: float) -> float:
    """The smallest ``N`` reached by ``>= rate`` of ``values`` (``N_r``; ``inf``: unreached)."""
    ordered = np.sort(values)
    return float(ordered[max(0, math.ceil(rate * len(values) - 1e-9) - 1)])


@dataclass(frozen=True)
class Laws:
    """Per ``k``: the paper's ``ln N* = a_k + alpha_k ln d``, the rival's ``a'_k + alpha ln d``
    (one ``alpha``), and the replicas' spread of ``ln N_r``."""

    ks: np.ndarray
    paper: np.ndarray  # k x (a_k, alpha_k)
    rival: np.ndarray  # k x (a'_k, alpha)
    spread: np.ndarray

    def at(self, side: str, k: int, d: int) -> tuple[float, float]:
        """``(N*, spread)`` of ``side`` at ``(d, k)``; a ``k`` not fitted takes the parameters
        linear in ``k`` through the fitted ones."""
        table = self.paper if side == "paper" else self.rival
        if len(self.ks) == 1:
            a, alpha = table[0]
        else:
            a = float(np.polyval(np.polyfit(self.ks, table[:, 0], 1), k))
            alpha = float(np.polyval(np.polyfit(self.ks, table[:, 1], 1), k))
        spread = self.spread[self.ks == k]
        return math.exp(a + alpha * math.log(d)), float(
            spread[0] if len(spread) else self.spread.mean()
        )


def fit_laws(records: list[Record], rate: float, rng: np.random.Generator | None = None) -> Laws:
    """Both laws fitted to ``N*`` per cell (replicas resampled with ``rng``: one redraw); an
    unreached ``N*`` counts as its cap (a lower bound)."""
    ks = sorted({r["k"] for r in records})
    paper, rival_rows, spreads = [], [], []
    for k in ks:
        rows = sorted((r for r in records if r["k"] == k), key=lambda r: r["d"])
        logd, logn, cell_spread = [], [], []
        for r in rows:
            values = thresholds(r)
            if rng is not None:
                values = values[rng.integers(0, len(values), len(values))]
            reached = np.log(values[np.isfinite(values)])
            n = order_threshold(values, rate)
            logd.append(math.log(r["d"]))
            logn.append(math.log(n if math.isfinite(n) else r["n_cap"]))
            cell_spread.append(float(np.std(reached, ddof=1)) if len(reached) >= 2 else 0.0)
        x, y = np.array(logd), np.array(logn)
        slope = float(np.polyfit(x, y, 1)[0]) if len(x) >= 2 else 0.0
        paper.append((float(y.mean() - slope * x.mean()), slope))
        rival_rows.append((x, y))
        spreads.append(max(0.01, float(np.median(cell_spread))))
    return Laws(np.array(ks, dtype=float), np.array(paper), _common(rival_rows), np.array(spreads))


def _common(rows: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """One exponent for every ``k`` with an intercept per ``k`` (least squares)."""
    num = sum(float((x - x.mean()) @ (y - y.mean())) for x, y in rows)
    den = sum(float(np.sum((x - x.mean()) ** 2)) for x, _ in rows)
    alpha = num / den if den > 0 else 0.0
    return np.array([(float(y.mean() - alpha * x.mean()), alpha) for x, y in rows])


def simulated_record(laws: Laws, side: str, d: int, k: int, config: Any, rng) -> Record:
    """One ``(d, k)`` job's record from ``side``'s law: ``N_r`` log-normal with the fitted
    spread and its ``target_rate`` quantile at the law, rounded up; beyond ``n_limit``
    unreached."""
    value, spread = laws.at(side, k, d)
    cap = config.n_limit
    draws = np.ceil(
        calibration.replica_thresholds(value, spread, config.seeds, config.target_rate, rng)
    )
    draws = np.maximum(draws, 1)
    out = [int(t) if t <= cap else None for t in draws]
    return {"d": d, "k": k, "seeds": config.seeds, "n_cap": cap, "thresholds": out}


def hypotheses(records: list[Record], config: Any) -> calibration.Hypotheses:
    """The paper's law (``N* = c_k d^alpha_k``, an exponent per ``k``) and the rival's (``c_k
    d^alpha``, one exponent), fitted to the run; every simulated run refits both to a bootstrap
    of the real replicas (``redraws_itself``) and draws its replicas with the spread of ``ln
    N_r`` of that bootstrap."""
    rate = config.target_rate
    fitted = fit_laws(records, rate)

    def draw(side: str) -> calibration.Simulate:
        def one(cfg: Any, rng: np.random.Generator) -> list[Record]:
            laws = fit_laws(records, rate, rng)
            return [
                simulated_record(laws, side, d, k, cfg, rng)
                for k in cfg.k_values
                for d in cfg.d_values
            ]

        return one

    def law_text(side: str) -> str:
        table = fitted.paper if side == "paper" else fitted.rival
        parts = ", ".join(
            f"k={int(k)}: {math.exp(a):.3g} d^{alpha:.3g}"
            for k, (a, alpha) in zip(fitted.ks, table, strict=True)
        )
        return f"N* = {'c_k d^alpha_k' if side == 'paper' else 'c_k d^alpha'} fitted: {parts}"

    spreads = ", ".join(
        f"k={int(k)}: {s:.3g}" for k, s in zip(fitted.ks, fitted.spread, strict=True)
    )
    return calibration.Hypotheses(
        paper=draw("paper"),
        rival=draw("rival"),
        paper_law=law_text("paper"),
        rival_law=law_text("rival"),
        noise=(
            "per replica N_r log-normal around the law (its target_rate quantile) with the "
            f"replicas' spread of ln N_r (median over d: {spreads}), rounded up; each simulated "
            "run refits the laws and spreads to a bootstrap of the real replicas"
        ),
        redraws_itself=True,
    )
