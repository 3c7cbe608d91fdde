"""A7.7's calibration hypotheses (SPEC Part E): the paper's law (an exponent of ``d`` per ``k``)
and the rival's (one exponent for every ``k``), fitted to the run, able to simulate one."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...metrics import calibration
from ..base import Record
from .verdict import thresholds


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
