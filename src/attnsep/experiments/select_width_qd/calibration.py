"""B5.5's calibration: the criterion's error rates measured by simulation, ``m_p*`` free of
``d`` against ``m_p* ∝ d`` (SPEC Parts E and F)."""

from __future__ import annotations

import numpy as np

from ...metrics import calibration
from ...train.search import probe_matrix, smallest_passing
from ..base import Record
from .config import Config
from .verdict import analyse


def fitted(records: list[Record], m_limit: int) -> tuple[dict[int, float], float, float]:
    """Per ``q`` the paper's level ``a + b q`` (fitted to the geometric means over ``d``, at
    least 1.5; twice ``m_limit`` where nothing was reached), the geometric mean of the ``d``'s
    and the replicas' log-spread."""
    t = analyse(records)
    qs = np.array(t["q"], dtype=float)
    levels = np.array([v[0] for v in t["levels"]])
    finite = np.isfinite(levels)
    if finite.sum() >= 2:
        b, a = np.polyfit(qs[finite], levels[finite], 1)
        law = {q: max(1.5, float(a + b * q)) for q in t["q"]}
    else:
        fill = float(levels[finite][0]) if finite.any() else 2.0 * m_limit
        law = {q: fill for q in t["q"]}
    spread = calibration.log_spread([probe_matrix(r["probes"]) for r in records])
    return law, float(np.exp(np.log(t["d"]).mean())), spread


def simulated(level: float, spread: float, cfg: Config, rng: np.random.Generator) -> dict:
    from ...train.selection_threshold import RATE

    latent = calibration.replica_thresholds(level + 0.5, spread, cfg.seeds, RATE, rng)
    m_star, probes = smallest_passing(lambda m: latent <= m, RATE, 2, cfg.m_limit)
    return {"m_star": m_star, "probes": [p.as_record() for p in probes], "family_m": None}


def hypotheses(records: list[Record], config: Config) -> calibration.Hypotheses:
    """Paper: ``m_p*`` independent of ``d`` at the fitted ``a + b q``; rival: ``m_p* ∝ d``
    (the same level at the run's geometric-mean ``d``); per replica a latent threshold,
    log-normal with the run's log-spread, searched by ``smallest_passing`` from 2."""
    law, d_mid, spread = fitted(records, config.m_limit)

    def level(q: int) -> float:
        return law[min(law, key=lambda k: (abs(k - q), k))]

    def draw(rival: bool) -> calibration.Simulate:
        def one(cfg: Config, rng: np.random.Generator) -> list[Record]:
            return [
                {"T": cfg.T, "q": q, "d": d, "target": cfg.target, "replicas": cfg.seeds}
                | simulated(level(q) * (d / d_mid if rival else 1.0), spread, cfg, rng)
                for q in cfg.q_values
                for d in cfg.d_values
            ]

        return one

    shown = ", ".join(f"q={q}: {v:.3g}" for q, v in law.items())
    return calibration.Hypotheses(
        paper=draw(False),
        rival=draw(True),
        paper_law=f"m_p* crossing = a + b q fitted to the geometric means over d, d-free ({shown})",
        rival_law=f"m_p* crossing = the same level x d / {d_mid:.3g} (proportional to d)",
        noise=f"per replica a latent m_p*, log-normal with the run's log-spread {spread:.3g}, "
        "searched by smallest_passing from 2 to m_limit",
    )
