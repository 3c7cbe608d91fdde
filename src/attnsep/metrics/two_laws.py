"""The held-out two-law comparison (SPEC Part D): the paper's law and its rival fitted on the
smaller half of the sizes, each judged on the larger half by whether its prediction, with the
band of its refits to bootstrap draws, meets the measured interval widened by the grid's
resolution (SPEC Part E).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.validate import require
from .laws import GrowthLaw, parameters
from .stats import Floats, finite_or_none

GRIDS = ("continuous", "integer", "half-octave")
"""How finely a threshold's knob was searched (SPEC Part E): a prediction is compared with the
measured interval widened by the grid's resolution — ``± 1`` on an integer knob, a factor
``√2`` either way on a half-octave grid, nothing on a continuous one."""


def widen(lows: Floats, highs: Floats, grid: str) -> tuple[np.ndarray, np.ndarray]:
    """The measured intervals widened by ``grid``'s resolution (``GRIDS``)."""
    require(grid in GRIDS, f"grid must be one of {', '.join(GRIDS)}, got {grid!r}")
    lo, hi = np.asarray(lows, dtype=float), np.asarray(highs, dtype=float)
    if grid == "integer":
        return lo - 1, hi + 1
    if grid == "half-octave":
        return lo / math.sqrt(2), hi * math.sqrt(2)
    return lo, hi


BAND_DRAWS = 200
"""Bootstrap draws of the smaller half refitted for a law's prediction band (``held_out``)."""


def grid_jitter(grid: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Where in its grid cell a searched threshold's crossing may lie, as an additive offset
    (``integer``: the smallest passing integer ``m`` means a crossing in ``(m - 1, m]``) or, for
    ``half-octave``, a factor ``2^u``, ``u`` in ``(-1/2, 0]``; ``continuous``: none."""
    if grid == "integer":
        return -rng.random(shape)
    if grid == "half-octave":
        return 2.0 ** (-0.5 * rng.random(shape))
    return np.zeros(shape)


def held_out(
    law: GrowthLaw,
    xs: Floats,
    values: Floats,
    lows: Floats,
    highs: Floats,
    min_exponent: float | None = None,
    grid: str = "continuous",
    fitted: int | None = None,
    draws: np.ndarray | None = None,
) -> dict[str, Any]:
    """Fit ``law`` on the smaller half of the sizes (or the ``fitted`` smallest) and predict the
    larger half (SPEC Part D).

    ``inside`` is True when the prediction lies inside the measured interval at every larger
    size, the interval widened by the ``grid``'s resolution (``widen``, SPEC Part E). With
    ``draws`` (bootstrap draws of the thresholds, ``resamples x sizes`` in the order of ``xs``)
    the prediction carries a band too: the law refitted to ``BAND_DRAWS`` draws of the smaller
    half, each threshold moved within its grid cell (``grid_jitter``), gives the 95% range of
    the predictions; ``inside`` then asks the band (with the point prediction) to meet the
    widened interval, so that the fit's own uncertainty and the grid's rounding of the fitted
    points do not count against a law. ``min_exponent`` constrains the law's exponent (a rival
    "power law with alpha >= 0.25"). The smaller half has at least as many sizes as the law has
    parameters."""
    order = np.argsort(xs)
    x = np.asarray(xs, dtype=float)[order]
    v = np.asarray(values, dtype=float)[order]
    lo, hi = widen(
        np.asarray(lows, dtype=float)[order], np.asarray(highs, dtype=float)[order], grid
    )
    half = fitted or max(parameters(law), len(x) // 2)
    require(len(x) > half, f"a held-out test needs at least {half + 1} sizes, got {len(x)}")
    params = law.fit(x[:half], v[:half], min_exponent)
    predicted = law.predict(params, x[half:])
    band_lo, band_hi = predicted, predicted
    if draws is not None and np.isfinite(predicted).all():
        rows = np.asarray(draws, dtype=float)[:BAND_DRAWS][:, order][:, :half]
        refits = refitted(law, x, half, rows, grid, min_exponent)
        if len(refits):
            band_lo = np.minimum(predicted, np.quantile(refits, 0.025, axis=0))
            band_hi = np.maximum(predicted, np.quantile(refits, 0.975, axis=0))
    meets = (band_hi >= lo[half:] - 1e-9) & (band_lo <= hi[half:] + 1e-9)
    return {
        "law": law.name,
        "formula": law.formula,
        "min_exponent": min_exponent,
        "grid": grid,
        "fitted_on": x[:half].tolist(),
        "params": [finite_or_none(p) for p in params],
        "predicted_at": x[half:].tolist(),
        "predicted": [finite_or_none(p) for p in predicted],
        "band": [
            [finite_or_none(a), finite_or_none(b)] for a, b in zip(band_lo, band_hi, strict=True)
        ],
        "inside": bool(np.all(meets)) and bool(np.isfinite(predicted).all()),
    }


def refitted(
    law: GrowthLaw,
    x: np.ndarray,
    half: int,
    rows: np.ndarray,
    grid: str,
    min_exponent: float | None,
) -> np.ndarray:
    """:func:`held_out`'s band: the law refitted to each finite row of threshold draws at the
    ``half`` smaller sizes ``x[:half]``, each moved within its grid cell (``grid_jitter``), and
    its finite predictions at the larger sizes (none when no row is finite)."""
    rows = rows[np.isfinite(rows).all(axis=1)]
    jitter = grid_jitter(grid, rows.shape, np.random.default_rng(0))
    moved = rows * jitter if grid == "half-octave" else rows + jitter
    if not len(moved):
        return moved
    refits = law.refit_predict(x[:half], moved, x[half:], min_exponent)
    return refits[np.isfinite(refits).all(axis=1)]


def compare_laws(
    paper: GrowthLaw,
    rival: GrowthLaw,
    xs: Floats,
    values: Floats,
    lows: Floats,
    highs: Floats,
    rival_min_exponent: float | None = None,
    grid: str = "continuous",
    draws: np.ndarray | None = None,
) -> dict[str, Any]:
    """The two-law comparison of SPEC Part D: both laws fitted on the smaller half, judged on
    the larger half (intervals widened by ``grid``, predictions with their band from ``draws``:
    ``held_out``, SPEC Part E). ``decided`` is ``"paper"`` (only
    the paper's law predicts), ``"rival"`` (only the rival does), ``"both"`` or ``"neither"``.
    ``rival_min_exponent`` holds the rival's exponent at least that (e.g. ``c d^alpha`` with
    ``alpha >= 0.25``)."""
    half = max(parameters(paper), parameters(rival), len(xs) // 2)
    p = held_out(paper, xs, values, lows, highs, None, grid, half, draws)
    r = held_out(rival, xs, values, lows, highs, rival_min_exponent, grid, half, draws)
    decided = {
        (True, False): "paper",
        (False, True): "rival",
        (True, True): "both",
        (False, False): "neither",
    }[(p["inside"], r["inside"])]
    return {"paper": p, "rival": r, "decided": decided}
