"""The one statistics module: medians, standard errors, Wilson intervals, the bootstrap over
replicas, thresholds, growth laws and the two-law comparison of SPEC Part D.

Every number a verdict uses comes from here, so one run never reports two different medians.
Outcomes of a verdict: ``REPRODUCED``, ``NOT_REPRODUCED``, ``INCONCLUSIVE`` (SPEC Part D).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..validate import require

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
INCONCLUSIVE = "inconclusive"
OUTCOMES = (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE)

LEVEL = 0.95
RESAMPLES = 1000
"""Bootstrap resamples: the 2.5% quantile of 1000 draws moves by well under its own spread."""


# --- point summaries ---------------------------------------------------------------------


def median(values: Iterable[float]) -> float:
    """The true median (the mean of the two middle values for an even count)."""
    items = sorted(float(v) for v in values)
    require(bool(items), "a median needs at least one value")
    n = len(items)
    return items[n // 2] if n % 2 else 0.5 * (items[n // 2 - 1] + items[n // 2])


def mean_se(values: Iterable[float]) -> tuple[float, float]:
    """Mean and its standard error ``s / sqrt(n)`` (0 for one value)."""
    items = [float(v) for v in values]
    require(bool(items), "a mean needs at least one value")
    n = len(items)
    mean = math.fsum(items) / n
    if n == 1:
        return mean, 0.0
    var = math.fsum((v - mean) ** 2 for v in items) / (n - 1)
    return mean, math.sqrt(var / n)


def wilson(successes: int, trials: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (95% by default)."""
    require(trials >= 1 and 0 <= successes <= trials, "need 0 <= successes <= trials, trials >= 1")
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def finite_or_none(x: float | None) -> float | None:
    """``x`` as a plain float, or ``None`` when missing or not finite (JSON-safe)."""
    return None if x is None or not math.isfinite(x) else float(x)


def estimate(name: str, value: float | None, low: float | None, high: float | None) -> dict:
    """One entry of a claim's ``estimates``: ``{"name", "value", "low", "high"}`` (JSON-safe:
    an infinite bound, e.g. a threshold beyond the search limit, is ``None``)."""
    return {
        "name": name,
        "value": finite_or_none(value),
        "low": finite_or_none(low),
        "high": finite_or_none(high),
    }


def rate_estimate(name: str, successes: int, trials: int) -> dict:
    """A success rate with its Wilson interval, as an ``estimate``."""
    return estimate(name, successes / trials, *wilson(successes, trials))


def fmt_interval(
    value: float | None, low: float | None, high: float | None, digits: int = 3
) -> str:
    """``value [low, high]`` with ``digits`` significant digits; a missing or ``nan`` value reads
    ``n/a``, an infinity ``inf`` or ``-inf``."""

    def one(x: float | None) -> str:
        if x is None or math.isnan(x):
            return "n/a"
        return f"{x:.{digits}g}"

    return f"{one(value)} [{one(low)}, {one(high)}]"


def fmt_estimate(e: dict, digits: int = 3) -> str:
    """``name = value [low, high]`` of an ``estimate`` (a missing bound reads ``inf``)."""
    high = math.inf if e["high"] is None and e["value"] is not None else e["high"]
    return f"{e['name']} = {fmt_interval(e['value'], e['low'], high, digits)}"


# --- the bootstrap over replicas -----------------------------------------------------------


def bootstrap(
    samples: Sequence[np.ndarray],
    statistic: Callable[[list[np.ndarray]], float],
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> np.ndarray:
    """``statistic`` on ``resamples`` bootstrap draws: each array of ``samples`` (replicas on its
    first axis, independent of the other arrays) is resampled with replacement on its own."""
    rng = np.random.default_rng(seed)
    values = np.empty(resamples)
    for b in range(resamples):
        draw = [s[rng.integers(0, len(s), len(s))] for s in samples]
        values[b] = statistic(draw)
    return values


def interval(values: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """Percentile interval of bootstrap values; ``nan`` counts as ``+inf`` (not reached)."""
    v = np.where(np.isnan(values), np.inf, np.asarray(values, dtype=float))
    tail = (1 - level) / 2
    return float(np.quantile(v, tail, method="lower")), float(
        np.quantile(v, 1 - tail, method="higher")
    )


# --- thresholds over stored probes ---------------------------------------------------------


def first_passing(sizes: Sequence[float], rates: np.ndarray, target: float) -> float:
    """The smallest size whose rate reaches ``target`` (``inf`` when none does).

    On the probes of a bisection (``search.smallest_passing``) this is exactly the search's
    result: every probe below the threshold failed. On resampled replicas it re-runs the search
    over the stored probes, so nothing is recomputed."""
    order = np.argsort(sizes)
    for i in order:
        if rates[i] >= target - 1e-12:
            return float(sizes[i])
    return math.inf


def threshold_draws(
    sizes: Sequence[float],
    outcomes: np.ndarray,
    target: float,
    reference: np.ndarray | None = None,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> tuple[float, np.ndarray]:
    """The threshold on all replicas and its bootstrap draws.

    ``outcomes`` is ``replicas x probes`` (bool), the probes at ``sizes`` evaluated on the same
    replicas. With ``reference`` (per-replica bool), the target is ``target x`` the reference
    rate on the same (resampled) replicas (SPEC A7.5: relative to the population step)."""
    outcomes = np.asarray(outcomes, dtype=float)
    ref = None if reference is None else np.asarray(reference, dtype=float)

    def threshold(rows: np.ndarray, ref_rows: np.ndarray | None) -> float:
        goal = target if ref_rows is None else target * ref_rows.mean()
        return first_passing(sizes, rows.mean(axis=0), goal)

    point = threshold(outcomes, ref)
    joined = outcomes if ref is None else np.column_stack([outcomes, ref])

    def stat(draw: list[np.ndarray]) -> float:
        rows = draw[0]
        return threshold(rows, None) if ref is None else threshold(rows[:, :-1], rows[:, -1])

    return point, bootstrap([joined], stat, resamples, seed)


# --- growth laws ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Law:
    """A two-parameter growth law ``y = law(x; a, b)``, fitted by least squares in a linear
    form: ``u(y) = a + b v(x)`` (``b`` is the exponent of a power or polylog law)."""

    name: str
    formula: str
    x_form: Callable[[np.ndarray], np.ndarray]
    y_form: Callable[[np.ndarray], np.ndarray]
    y_back: Callable[[np.ndarray], np.ndarray]

    def fit(
        self, xs: Sequence[float], ys: Sequence[float], min_exponent: float | None = None
    ) -> tuple[float, float]:
        """``(a, b)`` by least squares; ``(nan, nan)`` when a ``y`` is infinite. With
        ``min_exponent``, ``b`` is held at least that (the best fit of the constrained law)."""
        x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
        require(len(x) >= 2, f"fitting {self.name} needs at least two points, got {len(x)}")
        if not np.isfinite(y).all():
            return math.nan, math.nan
        v, u = self.x_form(x), self.y_form(y)
        b = float(np.sum((v - v.mean()) * (u - u.mean())) / np.sum((v - v.mean()) ** 2))
        if min_exponent is not None:
            b = max(b, min_exponent)
        return float(u.mean() - b * v.mean()), b

    def predict(self, params: tuple[float, float], xs: Sequence[float]) -> np.ndarray:
        a, b = params
        return self.y_back(a + b * self.x_form(np.asarray(xs, dtype=float)))


POWER = Law("power", "c·x^α", np.log, np.log, np.exp)
"""``y = c x^alpha``: log-log linear."""
POLYLOG = Law("polylog", "a·(ln x)^p", lambda x: np.log(np.log(x)), np.log, np.exp)
"""``y = a (ln x)^p``."""
LINEAR_LOG = Law("linear in ln x", "a + b·ln x", np.log, lambda y: y, lambda u: u)
"""``y = a + b ln x`` (SPEC B5.2's ``a + b q ln T`` at fixed ``q``)."""


def exponent_draws(law: Law, xs: Sequence[float], draws: np.ndarray) -> np.ndarray:
    """``law``'s exponent ``b`` fitted to each row of ``draws`` (``resamples x sizes``);
    a row with a size never reached gives ``nan`` (read as ``+inf`` by ``interval``)."""
    return np.array([law.fit(xs, row)[1] for row in draws])


def one_sided_exponent(
    law: Law, xs: Sequence[float], draws: np.ndarray, unreached: np.ndarray, side: str
) -> float:
    """One bound of ``law``'s exponent over bootstrap ``draws`` (``resamples x sizes``) in which
    some thresholds were never reached (``unreached``, same shape; their entries in ``draws``
    stand for a value they exceed). The fitted slope rises with a threshold above the mean of
    the law's ``x`` form and falls with one below, so for the ``"low"`` bound a row unreached
    below the mean reads ``-inf``, for the ``"high"`` bound a row unreached above it ``+inf``."""
    require(side in ("low", "high"), f"side must be 'low' or 'high', got {side!r}")
    v = law.x_form(np.asarray(xs, dtype=float))
    above = v >= v.mean()
    hit = (unreached & (~above if side == "low" else above)).any(axis=1)
    fitted = exponent_draws(law, xs, draws)
    low, high = interval(np.where(hit, -math.inf if side == "low" else math.inf, fitted))
    return low if side == "low" else high


def held_out(
    law: Law,
    xs: Sequence[float],
    values: Sequence[float],
    lows: Sequence[float],
    highs: Sequence[float],
    min_exponent: float | None = None,
) -> dict[str, Any]:
    """Fit ``law`` on the smaller half of the sizes and predict the larger half (SPEC Part D).

    ``inside`` is True when every prediction lies inside its measured interval. ``min_exponent``
    constrains the law's exponent (a rival "power law with alpha >= 0.25")."""
    order = np.argsort(xs)
    x = np.asarray(xs, dtype=float)[order]
    v = np.asarray(values, dtype=float)[order]
    lo, hi = np.asarray(lows, dtype=float)[order], np.asarray(highs, dtype=float)[order]
    half = max(2, len(x) // 2)
    require(len(x) > half, f"a held-out test needs at least {half + 1} sizes, got {len(x)}")
    params = law.fit(x[:half], v[:half], min_exponent)
    predicted = law.predict(params, x[half:])
    inside = bool(np.all((predicted >= lo[half:] - 1e-9) & (predicted <= hi[half:] + 1e-9)))
    return {
        "law": law.name,
        "formula": law.formula,
        "min_exponent": min_exponent,
        "fitted_on": x[:half].tolist(),
        "params": [finite_or_none(p) for p in params],
        "predicted_at": x[half:].tolist(),
        "predicted": [finite_or_none(p) for p in predicted],
        "inside": inside and bool(np.isfinite(predicted).all()),
    }


def compare_laws(
    paper: Law,
    rival: Law,
    xs: Sequence[float],
    values: Sequence[float],
    lows: Sequence[float],
    highs: Sequence[float],
    rival_min_exponent: float | None = None,
) -> dict[str, Any]:
    """The two-law comparison of SPEC Part D: both laws fitted on the smaller half, judged on
    the larger half. ``decided`` is ``"paper"`` (only the paper's law predicts), ``"rival"``
    (only the rival does), ``"both"`` or ``"neither"``. ``rival_min_exponent`` holds the
    rival's exponent at least that (e.g. ``c d^alpha`` with ``alpha >= 0.25``)."""
    p = held_out(paper, xs, values, lows, highs)
    r = held_out(rival, xs, values, lows, highs, rival_min_exponent)
    decided = {
        (True, False): "paper",
        (False, True): "rival",
        (True, True): "both",
        (False, False): "neither",
    }[(p["inside"], r["inside"])]
    return {"paper": p, "rival": r, "decided": decided}


def claim(
    verdict: str, reason: str, measured: str, criterion: str, estimates: list[dict], **extra: Any
) -> dict[str, Any]:
    """A verdict's result: one of ``OUTCOMES``, its reason in one sentence, what was measured,
    the criterion (written before the numbers) and the estimates with their intervals."""
    require(verdict in OUTCOMES, f"verdict must be one of {', '.join(OUTCOMES)}, got {verdict!r}")
    return {
        "verdict": verdict,
        "reason": reason,
        "measured": measured,
        "criterion": criterion,
        "estimates": estimates,
        **extra,
    }
