"""B5.2's jobs: one ``(T, q, d)`` threshold a job (``WidthSearch.threshold``), and the cost
and memory of a job (SPEC B5.2)."""

from __future__ import annotations

import math

from ...configs import FAMILY_SAMPLES
from ...exact.law_sizes import MIN_OCTAVE, MOMENT_STEP, NODES, TABLE, TOP
from .. import costs
from ..base import Record
from ..select_convergence.run import family_bytes
from .config import Config, WidthSearch


def split(config: Config) -> list[Config]:
    return [
        config.model_copy(update={"T_values": [T], "q_values": [q], "d_values": [d]})
        for q in config.q_values
        for d in config.d_values
        for T in config.T_values
    ]


def run(config: Config) -> list[Record]:
    return [
        config.threshold(T, q, d)
        for q in config.q_values
        for d in config.d_values
        for T in config.T_values
    ]


# --- cost (``attnsep reproduce --plan``): the work of one job ---------------------------------


def width_search_work(c: costs.Config, d_values: list[int]) -> costs.Parts:
    """B5.2's search on ``m_p`` per ``(T, q, d)``, the threshold taken as ``4 q ln T``. The law
    evaluator's probe costs its table of ``2^16`` points and, per sequence, about ``TOP``
    off-subset draws and the ``q^2`` of the subset, whatever ``T``; its bisection takes about
    ``2 log2 m*`` probes: a part of its own (``law``), timed apart from the drawn solvers."""
    from ...exact.law_sizes import GOLDEN_ROUNDS, GRID_POINTS, TABLE, TOP

    solver = c.get("solver", "population")
    part = "law" if solver == "law" else ""
    parts: costs.Parts = {}
    for T in c["T_values"]:
        for q in c["q_values"]:
            m_star = 4 * q * costs.ln(T)
            probes = costs.probes(c["m_limit"])
            if solver == "law":
                probe = TABLE + (GRID_POINTS + GOLDEN_ROUNDS) * c["samples"] * (TOP + q * q)
                probes = costs.probes(m_star)
            elif solver == "population":
                probe = 2 * costs.family_search(c["samples"], [T], m_star)
            else:
                probe = c["max_steps"] * c["batch"] * T * m_star**2
            units = len(d_values) * c["seeds"] * probes * probe
            parts[part] = parts.get(part, 0.0) + units
    return parts


def work(c: costs.Config) -> costs.Parts:
    return width_search_work(c, c["d_values"])


# --- memory (``Experiment.peak``): the most one job holds ------------------------------------

MONITOR = 512
"""``stopping.Stopping().monitor``: the sequences of the ``sgd`` solver's monitor."""


def law_bytes(T: int, q: int, samples: int, m_limit: int) -> float:
    """The ``law`` solver's memory (``exact.family_law.best_law_loss``): a replica's two draws
    of ``samples`` sequences, their exactly drawn products (``T − q`` of them, or about
    ``2 TOP`` beyond ``T − q = 4 TOP``) in a few copies. Beyond ``4 TOP`` the bulk's moment
    table dominates: its quadrature holds about five ``points x NODES`` arrays at once
    (``points = ln(1 + 2^MIN_OCTAVE) / MOMENT_STEP``), and each probed width keeps its table and
    split in a cache (``2 log2 m_limit`` probes)."""
    K = T - q
    if K <= 4 * TOP:
        return 8.0 * 8 * samples * (K + q * q)
    points = math.log1p(2.0**MIN_OCTAVE) / MOMENT_STEP
    cached = 2 * math.log2(m_limit) * (points + 2 * TABLE)
    return 8.0 * (8 * samples * (2 * TOP + q * q) + 5 * NODES * points + cached)


def sgd_bytes(search: WidthSearch, T: int, q: int, m: int) -> float:
    """The ``sgd`` solver's memory at width ``m`` (``selection_threshold.converge``): per
    replica ``W`` (``m x m``) with its chunk's start, gradient and float copies; the monitor
    draw, kept throughout; the eval draw's subset encodings (``eval_size x q x m``) with its
    query and logits; a step's batch with its graph. The family's best before it
    (:func:`family_bytes`, ``FAMILY_SAMPLES`` sequences) is freed first."""
    sequences = search.eval_size * (q + 3) + MONITOR * (q + 1) + 3 * search.batch * (q + 2)
    products = 3 * (search.eval_size + MONITOR + search.batch) * (T - q)
    trained = 8.0 * search.seeds * (sequences * m + products + 4 * m * m)
    return max(trained, family_bytes(FAMILY_SAMPLES, T, q, m))


def search_peak(search: WidthSearch) -> float:
    """The memory of the largest ``(T, q)`` search of ``search``, by solver: ``law``
    (:func:`law_bytes`); ``population``, the family's draws at the widest width the search may
    probe, ``m_limit`` (:func:`family_bytes`, ``samples`` sequences, one replica at a time);
    ``sgd`` (:func:`sgd_bytes`) at ``m_limit``."""
    m = search.m_limit

    def one(T: int, q: int) -> float:
        if search.solver == "law":
            return law_bytes(T, q, search.samples, m)
        if search.solver == "population":
            return family_bytes(search.samples, T, q, m)
        return sgd_bytes(search, T, q, m)

    return max(one(T, q) for T in search.T_values for q in search.q_values)


def peak(c: costs.Config) -> float:
    """The largest search's memory (:func:`search_peak`; ``d`` does not enter it)."""
    return search_peak(Config(**c))
