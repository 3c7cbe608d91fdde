"""The growth laws a threshold is fitted to, each by least squares in a linear form (SPEC Part D,
Part E): ``c x^α``, ``a (ln x)^p``, ``a + b ln x``, ``a + b (ln x)^p`` with ``p`` free, and
``c x^α`` with ``α`` given; their exponents fitted to bootstrap draws of the thresholds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..core.validate import require
from .stats import Floats, interval


@dataclass(frozen=True)
class Law:
    """A two-parameter growth law ``y = law(x; a, b)``, fitted by least squares in a linear
    form: ``u(y) = a + b v(x)`` (``b`` is the exponent of a power or polylog law)."""

    name: str
    formula: str
    x_form: Callable[[np.ndarray], np.ndarray]
    y_form: Callable[[np.ndarray], np.ndarray]
    y_back: Callable[[np.ndarray], np.ndarray]

    def fit(self, xs: Floats, ys: Floats, min_exponent: float | None = None) -> tuple[float, ...]:
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

    def predict(self, params: Sequence[float], xs: Floats) -> np.ndarray:
        a, b = params
        return self.y_back(a + b * self.x_form(np.asarray(xs, dtype=float)))

    def exponent(self, params: Sequence[float]) -> float:
        """The law's exponent among its fitted ``params``."""
        return float(params[1])

    def refit_predict(
        self, xs: np.ndarray, rows: np.ndarray, at: np.ndarray, min_exponent: float | None
    ) -> np.ndarray:
        """The law fitted to each row of ``rows`` (finite, ``rows x len(xs)``), predicted
        ``at``: ``rows x len(at)`` (``fit`` then ``predict``, all rows at once)."""
        v, u = self.x_form(xs), self.y_form(rows)
        vc = v - v.mean()
        b = (u - u.mean(axis=1, keepdims=True)) @ vc / np.sum(vc**2)
        if min_exponent is not None:
            b = np.maximum(b, min_exponent)
        a = u.mean(axis=1) - b * v.mean()
        return self.y_back(a[:, None] + b[:, None] * self.x_form(at)[None, :])


POWER = Law("power", "c·x^α", np.log, np.log, np.exp)
"""``y = c x^alpha``: log-log linear."""
POLYLOG = Law("polylog", "a·(ln x)^p", lambda x: np.log(np.log(x)), np.log, np.exp)
"""``y = a (ln x)^p``."""
LINEAR_LOG = Law("linear in ln x", "a + b·ln x", np.log, lambda y: y, lambda u: u)
"""``y = a + b ln x`` (SPEC B5.2's ``a + b q ln T`` at fixed ``q``)."""

P_GRID = np.round(np.arange(0.1, 4.0 + 1e-9, 0.05), 2)
"""The powers ``p`` the affine polylog law tries (SPEC Part E: ``p`` free, here in
``[0.1, 4]``; ``(ln x)^4`` already bends like ``x^0.5`` at ``x = 2^12``)."""


@dataclass(frozen=True)
class AffinePolylog:
    """``y = a + b (ln x)^p`` with ``p`` free (SPEC Part E: the law an ``Õ(·)`` claim states,
    ``Õ`` hiding polylog factors): for each ``p`` of ``P_GRID`` ``(a, b)`` by least squares on
    ``y``, then the ``p`` with the smallest squared error. ``params`` are ``(a, b, p)``; the
    exponent is ``p``. Needs three sizes; with three it interpolates."""

    name: str = "affine polylog"
    formula: str = "a + b·(ln x)^p"

    def fit(self, xs: Floats, ys: Floats, min_exponent: float | None = None) -> tuple[float, ...]:
        x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
        require(len(x) >= 3, f"fitting {self.name} needs at least three points, got {len(x)}")
        if not np.isfinite(y).all():
            return math.nan, math.nan, math.nan
        powers = P_GRID if min_exponent is None else P_GRID[P_GRID >= min_exponent]
        v = np.log(x)[None, :] ** powers[:, None]  # powers x sizes
        vc = v - v.mean(axis=1, keepdims=True)
        yc = y - y.mean()
        b = (vc @ yc) / np.sum(vc**2, axis=1)
        sse = np.sum((yc[None, :] - b[:, None] * vc) ** 2, axis=1)
        best = int(np.argmin(sse))
        return float(y.mean() - b[best] * v[best].mean()), float(b[best]), float(powers[best])

    def predict(self, params: Sequence[float], xs: Floats) -> np.ndarray:
        a, b, p = params
        return a + b * np.log(np.asarray(xs, dtype=float)) ** p

    def exponent(self, params: Sequence[float]) -> float:
        return float(params[2])

    def refit_predict(
        self, xs: np.ndarray, rows: np.ndarray, at: np.ndarray, min_exponent: float | None
    ) -> np.ndarray:
        """As ``Law.refit_predict``: each row's best ``p`` on ``P_GRID``, all rows at once."""
        powers = P_GRID if min_exponent is None else P_GRID[P_GRID >= min_exponent]
        v = np.log(xs)[None, :] ** powers[:, None]  # powers x sizes
        vc = v - v.mean(axis=1, keepdims=True)
        yc = rows - rows.mean(axis=1, keepdims=True)
        b = (yc @ vc.T) / np.sum(vc**2, axis=1)  # rows x powers
        sse = np.sum(yc**2, axis=1, keepdims=True) - b**2 * np.sum(vc**2, axis=1)
        best = np.argmin(sse, axis=1)
        b_best = b[np.arange(len(rows)), best]
        a = rows.mean(axis=1) - b_best * v[best].mean(axis=1)
        return a[:, None] + b_best[:, None] * np.log(at)[None, :] ** powers[best][:, None]


AFFINE_POLYLOG = AffinePolylog()
"""``y = a + b (ln x)^p``, ``p`` free: the paper's side of an ``Õ`` width law (SPEC Part E)."""


@dataclass(frozen=True)
class FixedPower:
    """``y = c x^alpha`` with ``alpha`` given, one parameter: ``ln c`` is the mean of ``ln y -
    alpha ln x`` (SPEC Part E, A7.5b's ``c d`` and ``c d^2``). ``params`` are ``(ln c, alpha)``,
    as ``POWER``'s."""

    alpha: float

    @property
    def name(self) -> str:
        return f"power {self.alpha:g}"

    @property
    def formula(self) -> str:
        return f"c·x^{self.alpha:g}"

    def fit(self, xs: Floats, ys: Floats, min_exponent: float | None = None) -> tuple[float, ...]:
        x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
        require(len(x) >= 1, f"fitting {self.name} needs a point")
        if not np.isfinite(y).all():
            return math.nan, self.alpha
        return float(np.mean(np.log(y) - self.alpha * np.log(x))), self.alpha

    def predict(self, params: Sequence[float], xs: Floats) -> np.ndarray:
        return POWER.predict(params, xs)

    def exponent(self, params: Sequence[float]) -> float:
        return self.alpha

    def refit_predict(
        self, xs: np.ndarray, rows: np.ndarray, at: np.ndarray, min_exponent: float | None
    ) -> np.ndarray:
        """As ``Law.refit_predict``, all rows at once."""
        level = np.mean(np.log(rows) - self.alpha * np.log(xs), axis=1)
        return np.exp(level[:, None] + self.alpha * np.log(at)[None, :])


GrowthLaw = Law | AffinePolylog | FixedPower


def exponent_draws(law: GrowthLaw, xs: Floats, draws: np.ndarray) -> np.ndarray:
    """``law``'s exponent fitted to each row of ``draws`` (``resamples x sizes``);
    a row with a size never reached gives ``nan`` (read as ``+inf`` by ``interval``). A
    two-parameter law fits every row at once."""
    rows = np.asarray(draws, dtype=float)
    if not isinstance(law, Law):
        return np.array([law.exponent(law.fit(xs, row)) for row in rows])
    finite = np.isfinite(rows).all(axis=1)
    v = law.x_form(np.asarray(xs, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore"):
        u = law.y_form(np.where(finite[:, None], rows, 1.0))
    vc = v - v.mean()
    slopes = (u - u.mean(axis=1, keepdims=True)) @ vc / np.sum(vc**2)
    return np.where(finite, slopes, math.nan)


def one_sided_exponent(
    law: Law, xs: Floats, draws: np.ndarray, unreached: np.ndarray, side: str
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


def parameters(law: GrowthLaw) -> int:
    """How many parameters ``law`` fits."""
    if isinstance(law, FixedPower):
        return 1
    return 3 if isinstance(law, AffinePolylog) else 2
