"""Counting a job's work for the plan (``attnsep reproduce --plan``): shared helpers of the
``work`` functions each experiment registers (``Experiment(work=...)``).

A ``work(config)`` counts the dominant loop of one job (multiply-adds up to a constant per
experiment), read off the algorithm, not fitted: e.g. the one step draws and multiplies
``seeds x d x m`` embeddings. A threshold search costs what its probes near the threshold
cost, and the threshold is the result; its work takes the threshold from the law the paper
claims (``m* ~ (ln d)^2``, ``n* ~ d (ln d)^2``, ``m_p* ~ q ln T``, FCN width ``~ d`` or
``~ T d``), so those estimates are only as good as that law (``Experiment(searches=True)``;
the plan says so). The engine fits seconds per unit of work to timed jobs
(``engine.cost_model``).
"""

from __future__ import annotations

import math
from typing import Any

Config = dict[str, Any]
"""A job's config as stored (``model_dump``)."""
Parts = dict[str, float]
"""An experiment whose jobs run different models counts each model's work apart."""

SGD_TOKEN_OVERHEAD = 5000
"""Work units per token of a law-drawn SGD step beyond its products (draws and bookkeeping)."""


def ln(x: float) -> float:
    return math.log(max(x, 2.0))


def probes(limit: float) -> float:
    """Probes of a doubling-then-bisection search from 1 up to ``limit``."""
    return 2.0 * max(1.0, math.log2(max(limit, 2.0)))


DRAW = 180
"""Multiply-adds one normal draw costs (numpy's generator; measured with one thread: 12.4 ns a
normal, 67.6 ps a multiply-add of the step's float64 products)."""
STEP_TOKEN = 1000
"""Multiply-adds per sequence and token of a law-drawn step: its scalar draws (coordinates, the
walk's parts), the walk and the softmax (65 to 88 ns, measured at ``m_p = 2``)."""
STEP = 1.3e7
"""Multiply-adds of a step's fixed cost: its Python and small tensors (0.9 ms, measured)."""
FAMILY_WIDTH, FAMILY_TOKEN = 1600, 350
"""The family's best (``exact.family``), per sample: two draws of the ``q`` encodings per unit of
width, and each of the search's loss evaluations per token (measured: 0.15 s at ``m_p = 64``
and 0.35 s at 512, 4096 samples, ``T = 20``)."""
EVAL = 400
"""Multiply-adds per evaluation sequence, token and unit of width (explicit encodings, 27 ns)."""


def _batch(c: Config, m: float) -> int:
    """A selector step's batch at width ``m``: ``batch_per_dim · m`` sequences."""
    return max(1, round(c["batch_per_dim"] * m))


def law_training(c: Config, m: float) -> float:
    """``steps`` law-drawn steps of the selector (``train.selection``) at width ``m``: each of
    ``B = batch_per_dim · m`` sequences with its two products (``2 rows · m`` multiply-adds,
    ``rows = m``, or ``d + m`` for the full ``W``), ``(q + 1) m`` normal draws and
    :data:`STEP_TOKEN` per token, and :data:`STEP` per step."""
    rows = m + (c["d"] if c.get("trainable", "position") == "full" else 0)
    return selector_steps(c["steps"], _batch(c, m), rows, m, c["q"], c["T"])


def selector_steps(steps: int, batch: int, rows: float, m: float, q: int, T: int) -> float:
    """:func:`law_training`'s count for ``steps`` steps of ``batch`` sequences of length ``T``,
    ``W`` of ``rows x m`` trained, ``q`` selected tokens."""
    per_sequence = 2 * rows * m + DRAW * (q + 1) * m + STEP_TOKEN * T
    return steps * (batch * per_sequence + STEP)


EXPLICIT_STEP = 55
"""Multiply-adds per sequence, token and unit of width of a step on explicit encodings (a fixed
PE's rows, autograd), set so that length-generalization's published fixed-PE jobs cost what
its law-drawn ones cost per unit (at ``m_p = 256``: 38 s against 76 s, the median of eight
each; at ``m_p = 64`` it reads the fixed jobs 0.4x low)."""


def explicit_training(c: Config, m: float, length: int) -> float:
    """``steps`` steps on explicit encodings at ``length`` positions (:data:`EXPLICIT_STEP`)."""
    return c["steps"] * (_batch(c, m) * EXPLICIT_STEP * length * m + STEP)


def explicit_eval(size: int, lengths: list[int], m: float) -> float:
    """An evaluation on ``size`` sequences of each length with explicit encodings."""
    return EVAL * size * sum(lengths) * m


def family_best(samples: int, m: float, searched: list[int], evaluated: list[int]) -> float:
    """The ``W = αI`` family's best loss (``exact.family``, by the products' law) searched at each
    length of ``searched`` and evaluated once at each of ``evaluated``."""
    from ..exact.law_sizes import GOLDEN_ROUNDS, GRID_POINTS

    rounds = [(L, GRID_POINTS + GOLDEN_ROUNDS) for L in searched] + [(L, 1) for L in evaluated]
    return samples * sum(FAMILY_WIDTH * m + FAMILY_TOKEN * n * L for L, n in rounds)


def family_search(samples: int, lengths: list[int], m_p: float) -> float:
    """One search of the ``W = alpha I`` family's best loss over ``lengths``."""
    from ..exact.law_sizes import GOLDEN_ROUNDS, GRID_POINTS

    return (GRID_POINTS + GOLDEN_ROUNDS) * samples * sum(lengths) * m_p**2


def one_step_work(d: int, m: int, seeds: int) -> float:
    """One population step's work (SPEC A5): ``seeds x d x m`` (each replica's embeddings
    through its heads)."""
    return seeds * d * m


FCN_DATA_WIDTH = 342.0
"""A step's cost beside its width, as first-layer units (the draw of the batch and the targets,
which grow with ``Td`` but not with ``w``): fitted with :data:`FCN_STEP` on float32 steps at
``(T, d, w, nets)`` = ``(16, 4, 64, 2)``, ``(64, 2, 96, 2)``, ``(64, 2, 192, 2)``, ``(128, 8,
256, 4)``, ``(128, 8, 1024, 4)``: ``0.23 ns · nets · batch · (Td + T) · (w + 342) + 1.1 ms``
per step, within 10% at each (one thread)."""
FCN_STEP = 4.8e6
"""A step's fixed cost (the optimizer and the calls, 1.1 ms) in units of the FCN's work."""


def fcn_steps(steps: float, nets: int, batch: int, inputs: int, width: int) -> float:
    """The work of ``steps`` Adam steps of ``nets`` nets of first-layer ``width`` on ``batch``
    samples of ``inputs`` inputs (:data:`FCN_DATA_WIDTH`, :data:`FCN_STEP`)."""
    return steps * (nets * batch * inputs * (width + FCN_DATA_WIDTH) + FCN_STEP)
