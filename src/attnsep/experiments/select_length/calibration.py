"""B5.3's hypotheses, the paper's statement and the rival simulated at the measured noise (SPEC
Part E), and the error rates of its companions B5.3b and B5.3c."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...metrics import calibration, stats
from ..base import Record
from . import convergence as in_distribution
from . import corollary_calibration
from .config import PRESETS, Config
from .convergence import SPREAD_FLOOR
from .corollary import main_records

KINDS = {
    "stochastic": ("stochastic", "loss"),
    "fixed": ("fixed", "loss"),
    "family": ("family", "loss"),
    "at_train_alpha": ("family", "at_train_alpha"),
}
"""What a simulated run draws: per kind, the record's ``pe`` and the field that holds it."""

Profile = dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]
"""Per kind: the factors ``T'/T`` measured, the mean loss / uniform and the per-seed relative
s.d. there."""


def measured_profile(
    records: list[Record], T: int, kinds: tuple[str, ...] = tuple(KINDS)
) -> Profile:
    """Each of ``kinds``' mean loss over seeds relative to uniform and its per-seed relative
    spread (s.d. / mean, at least ``SPREAD_FLOOR``), per factor ``T'/T`` of the records."""
    out: Profile = {}
    records = main_records(records)
    lengths = sorted({r["T"] for r in records})
    for kind in kinds:
        pe, key = KINDS[kind]
        factors, ratios, spreads = [], [], []
        for t in lengths:
            here = [r for r in records if r["T"] == t and r["pe"] == pe]
            if not here:
                continue
            values = np.array([r[key] for r in here], dtype=float)
            spread = values.std(ddof=1) / values.mean() if len(values) > 1 else 0.0
            factors.append(t / T)
            ratios.append(values.mean() / here[0]["uniform"])
            spreads.append(max(SPREAD_FLOOR, float(spread)))
        if not factors:
            raise ValueError(f"the records hold no {kind} losses to simulate from")
        out[kind] = (np.array(factors), np.array(ratios), np.array(spreads))
    return out


def _at(profile: Profile, kind: str, factors: stats.Floats) -> tuple[np.ndarray, np.ndarray]:
    """``kind``'s ratio to uniform and spread at ``factors`` (interpolated in ``ln`` factor,
    held at the ends)."""
    measured, ratios, spreads = profile[kind]
    x, at = np.log(measured), np.log(np.asarray(factors, dtype=float))
    return np.exp(np.interp(at, x, np.log(ratios))), np.interp(at, x, spreads)


def _uniform(config: Config, lengths: list[int]) -> np.ndarray:
    from ...exact.selection_bounds import uniform_attention_loss

    return np.array([float(uniform_attention_loss(t, config.q, config.d)) for t in lengths])


def _simulate(
    config: Config, rng: np.random.Generator, curves: dict[str, tuple[np.ndarray, np.ndarray]]
) -> list[Record]:
    """One run at ``config``'s ``T``, factors and seeds in ``run()``'s record format (the fields
    the verdict reads): per kind, seed and ``T'``, the loss is uniform x
    ratio x ``exp(spread · N(0, 1))``."""
    lengths = [config.T * f for f in config.factors]
    uniform = _uniform(config, lengths)
    shape = (len(config.seeds), len(lengths))
    draws = {
        kind: uniform * ratio * np.exp(spread * rng.standard_normal(shape))
        for kind, (ratio, spread) in curves.items()
    }
    records: list[Record] = []
    for i, seed in enumerate(config.seeds):
        for j, t in enumerate(lengths):
            base = {"seed": seed, "T": t, "uniform": float(uniform[j])}
            records += [
                {**base, "pe": pe, "loss": float(draws[pe][i, j])}
                for pe in ("stochastic", "fixed")
                if pe in draws
            ]
            if "family" in draws:
                records.append(
                    {
                        **base,
                        "pe": "family",
                        "loss": float(draws["family"][i, j]),
                        "at_train_alpha": float(draws["at_train_alpha"][i, j]),
                    }
                )
    return records


def _spread_text(profile: Profile, kind: str) -> str:
    spreads = profile[kind][2]
    return f"{100 * spreads.min():.2g}-{100 * spreads.max():.2g}%"


def hypotheses(records: list[Record], config: Config) -> calibration.Hypotheses:
    """B5.3's two statements simulated at the measured noise (SPEC Part E), judged on their
    losses relative to uniform. Paper: stochastic PE at the family at the trained ``α`` at every
    ``T'`` (what a ``W`` at the family's optimum for ``T`` scores there); rival: stochastic PE
    degrades like fixed PE (its loss / uniform is fixed PE's at every ``T' > T``). Fixed PE, the
    family and every per-seed spread are as measured."""
    profile = measured_profile(records, config.T)

    def measured(cfg: Config) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        return {kind: _at(profile, kind, cfg.factors) for kind in KINDS}

    def paper(cfg: Config, rng: np.random.Generator) -> list[Record]:
        levels = measured(cfg)
        levels["stochastic"] = (levels["at_train_alpha"][0], levels["stochastic"][1])
        return _simulate(cfg, rng, levels)

    def rival(cfg: Config, rng: np.random.Generator) -> list[Record]:
        levels = measured(cfg)
        ood = np.asarray(cfg.factors) > 1
        (f0, f1), (s0, s1) = levels["fixed"], levels["stochastic"]
        levels["stochastic"] = (np.where(ood, f0, s0), np.where(ood, f1, s1))
        return _simulate(cfg, rng, levels)

    return calibration.Hypotheses(
        paper=paper,
        rival=rival,
        paper_law="stochastic PE at the W = alpha I family at the trained alpha at every T' (a "
        "W at the family's optimum for T); fixed PE as measured",
        rival_law="stochastic PE degrades like fixed PE: its loss / uniform is fixed PE's "
        "measured one at every T' > T (as measured at T)",
        noise="log-normal per seed with the measured relative s.d. per mode and T': stochastic "
        f"{_spread_text(profile, 'stochastic')}, fixed {_spread_text(profile, 'fixed')}, family "
        f"at the trained alpha {_spread_text(profile, 'at_train_alpha')}",
    )


# --- B5.3b and B5.3c: their error rates ------------------------------------------------------


def calibrate_in_distribution(
    records: list[Record], config: Config, simulations: int = calibration.SIMULATIONS
) -> dict[str, Any] | None:
    """B5.3b's error rates at ``config`` (``calibration.calibrate`` over ``error_rates``), with
    twice and four times the seeds, then the ``full`` preset, tried when they miss the goals;
    ``None`` without the curves of 2 seeds per mode to simulate from."""
    if in_distribution.convergence(records)["ratio"] is None:
        return None
    return calibration.calibrate(
        in_distribution.verdict,
        calibration.redrawable(in_distribution_hypotheses, records, config),
        config,
        larger(config),
        simulations,
        seed=config.seed,
    )


def in_distribution_hypotheses(records: list[Record], config: Config) -> calibration.Hypotheses:
    """B5.3b's two statements (``convergence.hypotheses``), its runs at ``T``
    simulated as B5.3's at the measured losses (``_simulate``) of the two PE modes alone, all
    that a fit to such a simulated run finds there."""
    profile = measured_profile(records, config.T, ("stochastic", "fixed"))
    levels = {k: _at(profile, k, [1]) for k in profile}

    def at_T(cfg: Config, rng: np.random.Generator) -> list[Record]:
        return _simulate(cfg.model_copy(update={"factors": [1]}), rng, levels)

    return in_distribution.hypotheses(records, at_T)


def larger(config: Config) -> list[tuple[str, Config]]:
    """The configs a companion's calibration tries when ``config`` misses the goals: twice and
    four times the seeds, then the ``full`` preset."""
    n = len(config.seeds)
    candidates = [
        (f"{k * n} seeds", config.model_copy(update={"seeds": list(range(k * n))})) for k in (2, 4)
    ]
    return [*candidates, ("the full preset", Config(**PRESETS["full"], seed=config.seed))]


def calibrate_corollary(
    records: list[Record], config: Config, simulations: int = calibration.SIMULATIONS
) -> dict[str, Any]:
    """B5.3c's error rates at ``config``, with the same larger configs tried (:func:`larger`)."""
    return corollary_calibration.calibrate(records, config, larger(config), simulations)
