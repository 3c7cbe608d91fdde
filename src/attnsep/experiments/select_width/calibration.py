"""B5.2's calibration: the criterion's error rates measured by simulation (SPEC Parts E and F).

Each simulated run redraws the law's parameters from their fits to bootstrap draws of the run,
each replica's latent threshold is drawn around that law with the run's replica noise, and
searched by ``search.smallest_passing`` exactly as ``population_threshold`` searches (guarded).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...configs import SELECTION_RIVAL_MIN_ALPHA
from ...metrics import calibration
from ...metrics.laws import AFFINE_POLYLOG, LINEAR_LOG, POWER
from ...train.search import probe_matrix, smallest_passing
from ..base import Record
from .config import Config, WidthSearch
from .verdict import cell_series


@dataclass(frozen=True)
class SeriesLaws:
    """One ``q``'s two laws fitted to the run's crossings ``m_p* − 0.5`` over all ``T``'s and
    its replica noise: ``paper`` is ``(a, b, p)`` of ``a + b (ln T)^p``, ``rival`` ``(ln c,
    alpha)`` of ``c T^alpha`` with ``alpha >= 0.3``; ``spread`` the log-spread of the replicas'
    thresholds (``calibration.log_spread``); ``draws`` the pairs ``(paper, rival)`` refitted to
    bootstrap draws of the crossings, from which each simulated run redraws (SPEC Part F), and
    ``probes`` the searches' ``(sizes, outcomes)``, from which it redraws the log-spread."""

    paper: tuple[float, ...]
    rival: tuple[float, ...]
    spread: float
    draws: tuple[tuple[tuple[float, ...], tuple[float, ...]], ...] = ()
    probes: tuple[tuple[Any, np.ndarray], ...] = ()

    def m_star(self, side: str, T: int) -> float:
        """The law's crossing at ``T``, at least 1."""
        law, params = (AFFINE_POLYLOG, self.paper) if side == "paper" else (POWER, self.rival)
        value = float(law.predict(params, [float(T)])[0])
        return value if math.isfinite(value) and value >= 1 else 1.0

    def redrawn(self, rng: np.random.Generator) -> SeriesLaws:
        """The laws of one bootstrap draw (themselves when there are none) with the log-spread
        of one bootstrap draw of the searches' replicas (itself without searches)."""
        paper, rival = self.paper, self.rival
        if self.draws:
            paper, rival = self.draws[int(rng.integers(len(self.draws)))]
        resampled = [(s, t[rng.integers(len(t), size=len(t))]) for s, t in self.probes]
        spread = calibration.log_spread(resampled) if resampled else self.spread
        return SeriesLaws(paper, rival, spread)


def fit_pair(Ts: list[float], ys: list[float]) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """``(paper, rival)`` through ``(T, y)``; with fewer than 3 points the paper's side is
    ``a + b ln T`` (``p = 1``), with one point a constant."""
    if len(Ts) >= 3:
        paper = AFFINE_POLYLOG.fit(Ts, ys)
    elif len(Ts) == 2:
        paper = (*LINEAR_LOG.fit(Ts, ys), 1.0)
    else:
        paper = (ys[0], 0.0, 1.0)
    if len(Ts) >= 2:
        rival = POWER.fit(Ts, ys, SELECTION_RIVAL_MIN_ALPHA)
    else:
        alpha = SELECTION_RIVAL_MIN_ALPHA
        rival = (math.log(ys[0]) - alpha * math.log(Ts[0]), alpha)
    return tuple(paper), tuple(rival)


def fitted_laws(records: list[Record]) -> dict[int, SeriesLaws]:
    """Per ``q`` of the run (every ``d`` pooled: ``m_p*`` does not depend on ``d``): both laws
    fitted to the reached crossings (``verdict.cell_series``) and to each bootstrap
    draw of them that reached every ``T``, and the replica noise of its searches. A ``q`` with
    no reached threshold is left out (its neighbours stand in, ``law_for``)."""
    out = {}
    for q in sorted({r["q"] for r in records}):
        rows = [r for r in records if r["q"] == q and r["m_star"] is not None]
        if not rows:
            continue
        Ts, values, draws = cell_series(rows)
        probes = tuple(probe_matrix(r["probes"]) for r in rows)
        spread = calibration.log_spread(probes)
        paper, rival = fit_pair(Ts, list(values))
        redraws = tuple(fit_pair(Ts, list(row)) for row in draws if np.isfinite(row).all())
        out[q] = SeriesLaws(paper, rival, spread, redraws if len(Ts) >= 3 else (), probes)
    return out


def law_for(laws: dict[int, SeriesLaws], q: int) -> SeriesLaws | None:
    """The laws of ``q``, or (*choice*) of the nearest measured ``q`` when the simulated config
    has a ``q`` the run did not measure; ``None`` when the run reached no threshold at all."""
    if not laws:
        return None
    return laws[min(laws, key=lambda k: (abs(k - q), k))]


def simulated_search(
    value: float,
    spread: float,
    replicas: int,
    m_limit: int,
    rng: np.random.Generator,
    guard: bool = True,
) -> tuple[int | None, list[dict]]:
    """One simulated ``population_threshold`` search: per replica a latent threshold, log-normal
    with log-spread ``spread`` and 90% quantile ``value`` (``calibration.replica_thresholds``);
    a replica passes width ``m`` when its threshold is ``<= m``; ``search.smallest_passing`` from
    2 to ``m_limit`` with its guard, as the real search (``guard=False``: as version 4's)."""
    from ...train import selection_threshold as sel

    latent = calibration.replica_thresholds(value, spread, replicas, sel.RATE, rng)
    m_star, probes = smallest_passing(lambda m: latent <= m, sel.RATE, 2, m_limit, guard=guard)
    return m_star, [p.as_record() for p in probes]


def simulated_record(
    T: int, q: int, d: int, laws: SeriesLaws | None, side: str, config: WidthSearch, rng
) -> Record:
    """A ``population_threshold`` record (the fields the verdicts read) drawn from one side's
    law; with no law (the run reached nothing) every replica misses ``m_limit``."""
    if laws is None:
        value, spread = 2.0 * config.m_limit, 0.01
    else:
        value, spread = laws.m_star(side, T), laws.spread
    m_star, probes = simulated_search(value, spread, config.seeds, config.m_limit, rng)
    return {
        "T": T,
        "q": q,
        "d": d,
        "m_star": m_star,
        "target": config.target,
        "replicas": config.seeds,
        "solver": "population",
        "samples": config.samples,
        "probes": probes,
    }


def describe(laws: dict[int, SeriesLaws], side: str) -> str:
    """The simulated law per ``q``, for the calibration entry."""
    parts = []
    for q, law in laws.items():
        if side == "paper":
            a, b, p = law.paper
            parts.append(f"q={q}: {a:.3g} + {b:.3g} (ln T)^{p:.3g}")
        else:
            parts.append(f"q={q}: {math.exp(law.rival[0]):.3g} T^{law.rival[1]:.3g}")
    formula = "a + b (ln T)^p" if side == "paper" else "c T^alpha (alpha >= 0.3)"
    return (
        f"m_p* crossing = {formula} fitted to the run's m_p* - 0.5 over all T's, each simulated "
        "run redrawing the parameters from their fits to bootstrap draws; " + "; ".join(parts)
    )


def noise_text(laws: dict[int, SeriesLaws]) -> str:
    spreads = ", ".join(f"q={q}: {law.spread:.3g}" for q, law in laws.items())
    return (
        "per replica a latent m_p*, log-normal around the law (its 90% quantile) with the run's "
        f"log-spread ({spreads}; redrawn per run from the searches, replicas resampled), "
        "searched by smallest_passing from 2 to m_limit"
    )


def hypotheses(records: list[Record], config: Config) -> calibration.Hypotheses:
    """B5.2's two laws (SPEC Parts E, F): per ``q``, ``m_p* = a + b (ln T)^p`` and ``c T^alpha``
    (``alpha >= 0.3``) fitted to the run, each simulated run with parameters redrawn from their
    bootstrap fits and the log-spread redrawn from the searches with their replicas resampled
    (``SeriesLaws.redrawn``: every fitted parameter redrawn from the real run,
    ``redraws_itself``), searched as the real search."""
    laws = fitted_laws(records)

    def draw(side: str) -> calibration.Simulate:
        def one(cfg: Config, rng: np.random.Generator) -> list[Record]:
            out = []
            for q in cfg.q_values:
                law = law_for(laws, q)
                law = None if law is None else law.redrawn(rng)
                out += [
                    simulated_record(T, q, d, law, side, cfg, rng)
                    for d in cfg.d_values
                    for T in cfg.T_values
                ]
            return out

        return one

    return calibration.Hypotheses(
        paper=draw("paper"),
        rival=draw("rival"),
        paper_law=describe(laws, "paper"),
        rival_law=describe(laws, "rival"),
        noise=noise_text(laws),
        redraws_itself=True,
    )
