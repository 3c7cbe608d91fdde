"""A3's calibration hypotheses (SPEC Part E): deviations at the rounding level against those of a
wrong map of the step, both log-normal as measured."""

from __future__ import annotations

import numpy as np

from ...metrics import calibration
from ..base import Record
from .config import Config, jobs_of
from .verdict import CONDITIONED


def _log_fit(values: list[float]) -> tuple[float, float]:
    """Mean and standard deviation of ``log10`` (zeros at ``1e-20``; at least 0.1 spread)."""
    logs = np.log10(np.maximum(np.asarray(values, dtype=float), 1e-20))
    return float(logs.mean()), max(0.1, float(logs.std(ddof=1)) if len(logs) > 1 else 0.1)


def hypotheses(records: list[Record], config: Config) -> calibration.Hypotheses:
    """SPEC Part E: the paper's side draws each replica's deviation from the log-normal fitted to
    the conditioned replicas' ``D`` (rounding level), the rival from the control's log-normal
    (the mismatch a wrong map of the step gives); both draw conditioned replicas at the pooled
    measured share (chaotic ones with twin ``1e-8``) and the control from its fit."""
    dev, twin, control = ([x for r in records for x in r[k]] for k in ("dev", "twin", "control"))
    cond = [i for i, t in enumerate(twin) if t <= CONDITIONED]
    if not cond:
        raise ValueError("no conditioned replica to fit the rounding level to")
    share = len(cond) / len(twin)
    paper_fit = _log_fit([dev[i] for i in cond])
    twin_fit, control_fit = _log_fit([twin[i] for i in cond]), _log_fit(control)

    def simulate(fit: tuple[float, float]):
        def draw(cfg: Config, rng: np.random.Generator) -> list[Record]:
            out = []
            for d, m, loss in jobs_of(cfg):
                n = cfg.seeds
                ok = rng.random(n) < share
                t = np.where(ok, np.minimum(10 ** rng.normal(*twin_fit, n), CONDITIONED), 1e-8)
                row = {"d": d, "m": m, "loss": loss, "seeds": n, "twin": t.tolist()}
                row["dev"] = (10 ** rng.normal(*fit, n)).tolist()
                row["control"] = (10 ** rng.normal(*control_fit, n)).tolist()
                out.append(row)
            return out

        return draw

    return calibration.Hypotheses(
        paper=simulate(paper_fit),
        rival=simulate(control_fit),
        paper_law=f"deviations at the rounding level: log10 D ~ N({paper_fit[0]:.2f}, "
        f"{paper_fit[1]:.2f}) (fitted to the conditioned replicas)",
        rival_law=f"a wrong map of the step: log10 D ~ N({control_fit[0]:.2f}, "
        f"{control_fit[1]:.2f}) (the control's, W_Q and W_K trained)",
        noise=f"conditioned share {share:.2f} (binomial per replica), twin and control "
        "log-normal as measured",
    )
