"""B5.3c's hypotheses and error rates (SPEC Part E): the loss at ``k T`` falling with ``m_p`` as
measured, against flat in ``m_p``, at the measured per-seed spread."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...metrics import calibration
from ...metrics.laws import POWER
from ..base import Record
from .corollary import ROLE, far_length, table, verdict

KINDS = ("ood", "id", "family", "best")
SPREAD_FLOOR = 1e-3
"""Least per-seed relative spread a simulation uses (a measured spread of one seed is 0)."""
TINY = 1e-12
"""Least mean loss a simulation follows (a family reaches 0 at tiny sizes; logs stay finite)."""


def _curve(widths: np.ndarray, values: np.ndarray, at: np.ndarray) -> np.ndarray:
    """``values`` measured at ``widths``, at the widths ``at``: interpolated in log-log, and
    beyond the ends continued with the least-squares exponent of all of them."""
    x, y, z = np.log(widths), np.log(values), np.log(at)
    slope = POWER.fit(widths, values)[1] if len(x) >= 2 else 0.0
    inside = np.interp(z, x, y)
    below, above = y[0] + slope * (z - x[0]), y[-1] + slope * (z - x[-1])
    return np.exp(np.where(z < x[0], below, np.where(z > x[-1], above, inside)))


def hypotheses(records: list[Record], config: Any) -> calibration.Hypotheses:
    """B5.3c's two statements with the measured per-seed relative spread (SPEC Part E). Paper:
    the loss at ``k T`` at its measured per-width means (falling as fitted; beyond the measured
    widths, continued with the fitted exponent); rival: flat at the smallest width's mean
    (``b = 0``). The family, the loss at ``T`` and every spread are as measured."""
    t = table(records, config)
    widths = np.array(list(t), dtype=float)
    means = {k: np.array([max(t[w][k].mean(), TINY) for w in t]) for k in KINDS}
    spreads = {k: np.array([_spread(t[w][k]) for w in t]) for k in KINDS}

    def simulated(flat: bool) -> calibration.Simulate:
        def draw(cfg: Any, rng: np.random.Generator) -> list[Record]:
            at = np.array(cfg.corollary_widths, dtype=float)
            curves = {k: _curve(widths, means[k], at) for k in KINDS}
            if flat:
                curves["ood"] = np.full(len(at), means["ood"][0])
            noise = {k: np.interp(np.log(at), np.log(widths), spreads[k]) for k in KINDS}
            return _simulate(cfg, rng, curves, noise)

        return draw

    b = POWER.fit(widths, means["ood"])[1] if len(widths) >= 2 else 0.0
    return calibration.Hypotheses(
        paper=simulated(False),
        rival=simulated(True),
        paper_law=f"the loss at T' = {config.corollary_factor}T at its measured means per m_p "
        f"(fitted b = {b:.3g}; beyond the measured widths continued with it); the family and the "
        "loss at T as measured",
        rival_law=f"the loss at T' = {config.corollary_factor}T flat in m_p (b = 0) at the "
        f"smallest width's mean ({means['ood'][0]:.3g}, m_p = {int(widths[0])})",
        noise="log-normal per seed with the measured relative s.d. per m_p: stochastic at "
        f"{config.corollary_factor}T {_range(spreads['ood'])}, at T {_range(spreads['id'])}, "
        f"family at the trained alpha {_range(spreads['family'])}",
    )


def _spread(values: np.ndarray) -> float:
    spread = values.std(ddof=1) / values.mean() if len(values) > 1 and values.mean() > 0 else 0.0
    return max(SPREAD_FLOOR, float(spread))


def _range(spreads: np.ndarray) -> str:
    return f"{100 * spreads.min():.2g}-{100 * spreads.max():.2g}%"


def _simulate(
    config: Any,
    rng: np.random.Generator,
    curves: dict[str, np.ndarray],
    noise: dict[str, np.ndarray],
) -> list[Record]:
    """One run's corollary records at ``config``'s widths and seeds (the fields the verdict
    reads): per kind, width and seed, the loss is ``curve x exp(spread · N(0, 1))``."""
    from ...exact.selection_bounds import uniform_attention_loss

    T, far = config.T, far_length(config)
    u_T, u_far = (float(uniform_attention_loss(t, config.q, config.d)) for t in (T, far))
    shape = (len(config.seeds), len(config.corollary_widths))
    v = {k: curves[k] * np.exp(noise[k] * rng.standard_normal(shape)) for k in KINDS}
    records: list[Record] = []
    for i, seed in enumerate(config.seeds):
        for j, w in enumerate(config.corollary_widths):
            base = {"role": ROLE, "pe_dim": w, "seed": seed}
            stochastic = {**base, "pe": "stochastic"}
            records += [
                {**stochastic, "T": T, "loss": float(v["id"][i, j]), "uniform": u_T},
                {**stochastic, "T": far, "loss": float(v["ood"][i, j]), "uniform": u_far},
                {
                    **base,
                    "pe": "family",
                    "T": far,
                    "uniform": u_far,
                    "at_train_alpha": float(v["family"][i, j]),
                    "best_at_T": float(v["best"][i, j]),
                },
            ]
    return records


def calibrate(
    records: list[Record],
    config: Any,
    candidates: list[tuple[str, Any]],
    simulations: int = calibration.SIMULATIONS,
) -> dict[str, Any]:
    """B5.3c's error rates at ``config`` (``calibration.calibrate``), with ``candidates`` tried
    when they miss the goals."""
    laws = calibration.redrawable(hypotheses, records, config)
    return calibration.calibrate(verdict, laws, config, candidates, simulations, seed=config.seed)
