"""B5.1's error rates (SPEC Part E): training at the ``W = αI`` family's best or stalled above
it, on the floors ``c m_p^(−β)`` fitted to the family's seed means, with the measured seed noise.
B5.1b's are the paper setting's own (``paper.hypotheses``)."""

from __future__ import annotations

import math

import numpy as np

from ...metrics import calibration
from ...metrics.laws import POWER
from ..base import Record
from ..select_common import relative_spread
from . import paper
from .config import Config
from .verdict import summarize

RIVAL = paper.RIVAL
"""The rival of the error rates: training stalls at ``1.2 x`` the family's best (as B5.1b)."""


def hypotheses(records: list[Record], config: Config) -> calibration.Hypotheses:
    """Training at the family's best (the paper) or stalled at :data:`RIVAL` x it (the rival),
    each simulating a run at ``config``'s widths and seeds (SPEC Part E).

    Both keep the measured floors and noise: the family's best follows ``c m_p^(−β)`` fitted to
    its seed means (so widths beyond the measured ones extrapolate); per record the family's best
    and the trained loss carry the seeds' relative spread (independent normal factors), ``cos``
    the seeds' spread around its mean."""
    records = [r for r in records if not paper.is_paper_setting(r)]
    rows = summarize(records)
    ms = np.array([r["pe_dim"] for r in rows], dtype=float)
    floors = np.array([r["family"]["mean"] for r in rows])
    power = POWER.fit(ms, floors) if len(rows) >= 2 else (math.log(floors[0]), 0.0)
    noise_family = relative_spread(records, "family")
    noise_sgd = relative_spread(records, "loss")
    cos = np.array([r["cos"] for r in records])
    cos_mean, cos_sd = float(cos.mean()), float(cos.std(ddof=1)) if len(cos) > 1 else 0.0

    def simulate(ratio: float) -> calibration.Simulate:
        def draw(cfg: Config, rng: np.random.Generator) -> list[Record]:
            uniform = cfg.d * (cfg.T - cfg.q) / (cfg.q * cfg.T)
            out = []
            for m in cfg.pe_dims:
                floor = float(POWER.predict(power, [m])[0])
                for seed in cfg.seeds:
                    z = rng.standard_normal(3)
                    out.append(
                        {
                            "pe_dim": m,
                            "seed": seed,
                            "loss": floor * ratio * (1 + noise_sgd * z[0]),
                            "family": floor * (1 + noise_family * z[1]),
                            "cos": min(1.0, cos_mean + cos_sd * z[2]),
                            "uniform": uniform,
                            "path": "exact",
                        }
                    )
            return out

        return draw

    beta = -POWER.exponent(power)
    floor = f"floor = c m_p^-beta, c = {math.exp(power[0]):.3g}, beta = {beta:.3g}"
    return calibration.Hypotheses(
        paper=simulate(1.0),
        rival=simulate(RIVAL),
        paper_law=f"training at the family's best (ratio 1) at every m_p; {floor}",
        rival_law=f"training stalled at {RIVAL} x the family's best at every m_p; {floor}",
        noise=f"relative seed spread: family's best {noise_family:.2g}, trained loss "
        f"{noise_sgd:.2g}; cos {cos_mean:.4f} ± {cos_sd:.2g}",
    )
