"""The A7.5c finding's numbers (SPEC Part G, item 2b): ``n*`` per method and ``d`` with its
bootstrap, the exponents, Gaussian elimination against its exact law, and the MLP's shares, from
``run.run``'s records."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...exact import gf2
from ...metrics import stats
from ...metrics.laws import POWER, exponent_draws
from ..base import Record
from .config import METHODS

LABELS = {
    "elimination": "Gaussian elimination (GF(2))",
    "pairs": "pair search (uses sparsity)",
    "mlp": "two-layer ReLU, online SGD",
}
QUANTILE = 0.9
"""``n*``: the smallest ``n`` by which this share of the replicas are done."""
RESAMPLES_SEED = 0

RULE = (
    "A7.5c, a finding: per d and method (GF(2) elimination, pair search, online-SGD two-layer "
    "ReLU MLP) each replica's samples until it has the task (span of GF(2)^d; one consistent "
    "pair; held-out sign error <= 1%), n* = their 90% quantile (inf when > 10% do not get there "
    "within the budget) with a bootstrap 95% interval over replicas; exponent of n* = c d^alpha "
    "with its interval; elimination checked against prod_{i<d}(1 - 2^(i-n)) (largest CDF gap "
    "against the DKW 95% band); reported beside the lines d and d^4"
)


def counts(record: Record) -> np.ndarray:
    """A record's per-replica sample counts; ``inf`` for a replica not done."""
    return np.array([math.inf if n is None else n for n in record["samples"]], dtype=float)


def quantile_draws(values: np.ndarray, seed: int) -> tuple[float, np.ndarray]:
    """``n*`` (the ``ceil(0.9 N)``-th smallest count) and its bootstrap draws (replicas
    resampled, ``stats.resample_count`` draws)."""
    k = math.ceil(QUANTILE * len(values)) - 1
    rows = stats.resample_rows(len(values), np.random.default_rng(seed))
    draws = np.sort(values[rows], axis=1)[:, k]
    return float(np.sort(values)[k]), draws


def analyse(records: list[Record]) -> dict[str, dict[str, Any]]:
    """Per method: ``d``, ``n*`` with its interval and draws, and the exponent."""
    out: dict[str, dict[str, Any]] = {}
    for method in METHODS:
        rows = sorted((r for r in records if r["method"] == method), key=lambda r: r["d"])
        if not rows:
            continue
        points, draws = [], []
        for i, r in enumerate(rows):
            value, dr = quantile_draws(counts(r), RESAMPLES_SEED + i)
            low, high = stats.interval(dr)
            points.append((value, min(low, value), max(high, value)))
            draws.append(dr)
        ds = [float(r["d"]) for r in rows]
        exponent = (math.nan, math.nan, math.nan)
        if len(ds) >= 2:
            table = np.column_stack(draws)
            low, high = stats.interval(exponent_draws(POWER, ds, table))
            value = POWER.fit(ds, [p[0] for p in points])[1]
            exponent = (
                (value, low, high)
                if math.isnan(value)
                else (value, min(low, value), max(high, value))
            )
        out[method] = {"d": ds, "rows": rows, "points": points, "alpha": exponent}
    return out


def exactness(record: Record) -> dict[str, float]:
    """Elimination against its exact law at one ``d``: the largest gap between the simulated
    and exact distribution functions, the DKW 95% band, the exact ``n*``."""
    values = counts(record)
    d = record["d"]
    grid = np.arange(d, int(values.max()) + 2)
    exact = np.array([gf2.span_probability(d, int(n)) for n in grid])
    simulated = np.searchsorted(np.sort(values), grid, side="right") / len(values)
    band = math.sqrt(math.log(2 / 0.05) / (2 * len(values)))
    return {
        "gap": float(np.abs(simulated - exact).max()),
        "band": band,
        "exact_n": float(gf2.span_quantile(d, QUANTILE)),
    }


def _fmt(point: tuple[float, float, float]) -> str:
    return stats.fmt_interval(point[0], point[1], point[2], 4)


def _mlp_rates(rows: list[Record]) -> tuple[list[dict], list[str]]:
    """The MLP's share not done within the budget and, of those done, the share whose test
    error on fresh samples is also ``<= 1%``, per ``d`` (Wilson intervals)."""
    estimates, parts = [], []
    for r in rows:
        done = [n is not None for n in r["samples"]]
        confirmed = sum(1 for ok, e in zip(done, r["test_error"], strict=True) if ok and e <= 0.01)
        missed = len(done) - sum(done)
        estimates.append(stats.rate_estimate(f"mlp not done (d={r['d']})", missed, len(done)))
        if sum(done):
            estimates.append(
                stats.rate_estimate(f"mlp test <= 1% when done (d={r['d']})", confirmed, sum(done))
            )
        parts.append(
            f"d={r['d']}: {missed}/{len(done)} not done, {confirmed}/{sum(done)} confirmed"
        )
    return estimates, parts


def verdict(records: list[Record], config: Any) -> dict:
    """The A7.5c entry (``stats.FINDING``): ``n*`` per method and ``d``, the exponents, the
    elimination's exactness and the MLP's budget and confirmation shares."""
    a = analyse(records)
    estimates: list[dict] = []
    measured, said, alphas = [], [], []
    summary = ""
    for method, s in a.items():
        for d, p in zip(s["d"], s["points"], strict=True):
            estimates.append(stats.estimate(f"n* {method} (d={int(d)})", *p))
        estimates.append(stats.estimate(f"alpha {method} (n* = c d^alpha)", *s["alpha"]))
        table = ", ".join(f"{int(d)}: {_fmt(p)}" for d, p in zip(s["d"], s["points"], strict=True))
        measured.append(f"{LABELS[method]}: n* by d {table}; alpha = {_fmt(s['alpha'])}")
        alpha = stats.fmt_interval(s["alpha"][0], s["alpha"][1], s["alpha"][2], 2)
        said.append(f"{method} alpha = {alpha}")
        alphas.append(f"{method} {alpha.split(' ', 1)[0]}")
    if "elimination" in a:
        checks = [(r["d"], exactness(r)) for r in a["elimination"]["rows"]]
        for d, c in checks:
            estimates.append(stats.estimate(f"exact n* elimination (d={d})", *[c["exact_n"]] * 3))
        worst = max(c["gap"] / c["band"] for _, c in checks)
        measured.append(
            "elimination vs prod_{i<d}(1 - 2^(i-n)): "
            + ", ".join(
                f"d={d}: exact n*={c['exact_n']:g}, CDF gap {c['gap']:.3g} (DKW {c['band']:.3g})"
                for d, c in checks
            )
        )
        recovered = sum(r["recovered"] for r in a["elimination"]["rows"])
        total = sum(len(r["samples"]) for r in a["elimination"]["rows"])
        estimates.append(stats.rate_estimate("elimination recovers the support", recovered, total))
        said.append(
            "the simulated elimination "
            + ("agrees with" if worst <= 1 else "DEPARTS from")
            + f" its exact law (largest CDF gap {worst:.2f} x the DKW 95% band)"
        )
        if worst > 1:  # a simulation off its own exact law is the headline
            summary = f"elimination DEPARTS from its exact law ({worst:.2f} x DKW)"
    if "mlp" in a:
        rates, parts = _mlp_rates(a["mlp"]["rows"])
        estimates += rates
        measured.append("MLP within the budget: " + "; ".join(parts))
    reason = "n* grows like d^alpha with " + "; ".join(said) + margins(a) + " (lines d, d^4 drawn)"
    if not summary:
        shown = ", ".join(alphas)
        summary = (
            stats.fitting(f"n* ~ d^alpha: {shown}", f"alpha: {shown}")
            if alphas
            else "no method was run"
        )
    return stats.claim(stats.FINDING, reason, "; ".join(measured), RULE, estimates, summary=summary)


def margins(a: dict[str, dict[str, Any]]) -> str:
    """How far each method sits above its floor, over its ``d``'s: elimination ``n* - d``, pair
    search ``n* - log2 C(d, 2)``, the MLP ``n* / d``."""
    parts = []
    floors = {
        "elimination": ("n* - d", lambda d, n: n - d),
        "pairs": ("n* - log2 C(d,2)", lambda d, n: n - gf2.information_floor(int(d))),
        "mlp": ("n*/d", lambda d, n: n / d),
    }
    for method, (what, gap) in floors.items():
        if method in a:
            s = a[method]
            values = [gap(d, p[0]) for d, p in zip(s["d"], s["points"], strict=True)]
            shown = ", ".join("inf" if not math.isfinite(v) else f"{v:.3g}" for v in values)
            parts.append(
                f"{method} {what} = {shown} over d = {', '.join(f'{d:g}' for d in s['d'])}"
            )
    return "; " + "; ".join(parts) if parts else ""
