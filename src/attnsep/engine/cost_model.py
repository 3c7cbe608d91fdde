"""How a job's cost grows with its config: each experiment's work, for ``--plan`` at new sizes.

``work(name, config)`` counts the dominant loop of one job of experiment ``name`` (multiply-adds
up to a constant per experiment), read off the algorithm, not fitted: e.g. the one step draws
and multiplies ``seeds x d x m`` embeddings. A threshold search costs what its probes near the
threshold cost, and the threshold is the result; its work takes the threshold from the law
the paper claims (``m* ~ (ln d)^2``, ``n* ~ d (ln d)^2``, ``m_p* ~ q ln T``, FCN width ``~ d``
or ``~ T d``), so those estimates are only as good as that law (:data:`SEARCHES`; the plan says so).

:func:`fit` turns an experiment's timed jobs into a floor (the fastest job's seconds: a job's
fixed cost) and seconds per unit of work above it, and :func:`predict` applies them to the jobs
without a timing. Fitted on the quick preset's published timings, it predicted the standard
preset's within 0.44x to 3.0x per experiment and 1.22x in total (``docs/cluster.md``).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable
from typing import Any

Config = dict[str, Any]
Parts = dict[str, float]
"""An experiment whose jobs run different models counts each model's work apart."""


def _ln(x: float) -> float:
    return math.log(max(x, 2.0))


def _probes(limit: float) -> float:
    """Probes of a doubling-then-bisection search from 1 up to ``limit``."""
    return 2.0 * max(1.0, math.log2(max(limit, 2.0)))


def _one_step(c: Config) -> float:
    from ..experiments.xor_one_step import schedule_m

    return sum(
        c["seeds"] * d * m
        for d in c["d_values"]
        for s in c["series"]
        for m in (c["m_values"] if s == "fixed" else [schedule_m(d, c["schedule_scale"])])
    )


def _polylog_width(c: Config) -> float:
    return sum(c["seeds"] * d * 3 * min(c["m_limit"], _ln(d) ** 2) for d in c["d_values"])


def _attention_maps(c: Config) -> float:
    budget = c["budget"]
    screen = min(c["screen_steps"] or budget, budget)
    steps = len(c["eta_exponents"]) * screen + c["refine"] * (budget - screen)
    return len(c["maps"]) * steps * c["seeds"] * c["d"] * c["m"]


def _head_specialization(c: Config) -> float:
    from ..experiments.xor_one_step import schedule_m

    fixed = sum(c["seeds"] * d * c["m"] for d in c["d_values"])
    schedule = sum(  # absent from the configs of version 2 (published timings)
        c["seeds_schedule"] * d * schedule_m(d, c["schedule_scale"])
        for d in c.get("schedule_d_values", [])
    )
    return len(c["inits"]) * (fixed + schedule)


def _finite_samples(c: Config) -> Parts:
    """Per ``d`` and width, where samples are drawn (``samples``): the search's probes (about
    ``3 n*``) and its guard at ``min(n_max, d^4)``, which a few stuck replicas make it take at
    nearly every ``d`` (``sample_search.search_samples``), ``n d`` each. Where the surrogate
    steps (``surrogate``): the covariance once (``d m`` times its ~400 partitions) and each of
    about 20 probes' fresh test inputs (``test_samples d / 8`` byte lookups)."""
    from ..experiments.xor_one_step import schedule_m

    def n_star(d: int) -> float:
        return min(c["n_max"], c["n_start_per_d"] * d * _ln(d) ** 2)

    def guard(d: int) -> float:
        return min(c["n_max"], d**4)

    parts: Parts = {}
    for d in c["d_values"]:
        for width in c["widths"]:
            m = c["m"] if width == "fixed" else schedule_m(d, c["schedule_scale"])
            if c["surrogate_from"] is not None and d >= c["surrogate_from"]:
                work = c["seeds"] * d * (400 * m + 20 * c["test_samples"] / 8)
                parts["surrogate"] = parts.get("surrogate", 0.0) + work
            else:
                work = c["seeds"] * d * (3 * n_star(d) + guard(d) + m)
                parts["samples"] = parts.get("samples", 0.0) + work
    return parts


def _kparity_steps(c: Config) -> float:
    runs = [(s["k"], d, c["m"]) for s in c["series"] for d in s["d_values"]]
    runs += [(c["width_k"], c["width_d"], m) for m in c["m_values"]]
    steps = len(c["eta_exponents"]) * c["budget"]
    return steps * c["seeds"] * sum(k * 2**k * d * m for k, d, m in runs)


def _selector_training(c: Config, m_p: float, T: int) -> float:
    """SGD on the position block: ``steps x batch x T x m_p^2`` with ``batch ∝ m_p``."""
    return c["steps"] * c["batch_per_dim"] * m_p * T * m_p**2


def _family(samples: int, lengths: list[int], m_p: float) -> float:
    """One search of the ``W = alpha I`` family's best loss over ``lengths``."""
    from ..exact.family import GOLDEN_ROUNDS, GRID_POINTS

    return (GRID_POINTS + GOLDEN_ROUNDS) * samples * sum(lengths) * m_p**2


SGD_TOKEN_OVERHEAD = 5000
"""Work units per token of a law-drawn SGD step beyond its products (draws and bookkeeping)."""


def _select_convergence(c: Config) -> Parts:
    """B5.1's runs, and B5.1b's (``paper_widths``, absent from older configs): SGD on the full
    ``W`` with ``steps ∝ m_p``, each sequence ``(d + m_p) m_p`` for its two products plus
    :data:`SGD_TOKEN_OVERHEAD` per token (its draws; measured at ``T = 20``: 30 and 91 µs per
    sequence at ``m_p = 128`` and 512), beside the family's best."""
    parts = {
        "": len(c["seeds"])
        * sum(
            _selector_training(c, m, c["T"]) + _family(c["family_samples"], [c["T"]], m)
            for m in c["pe_dims"]
        )
    }
    widths = c.get("paper_widths", [])
    if widths:
        per_sequence = [(c["d"] + m) * m + SGD_TOKEN_OVERHEAD * c["T"] for m in widths]
        parts["paper-setting"] = len(c["seeds"]) * sum(
            c["paper_steps_per_dim"] * m * c["paper_batch"] * cost
            for m, cost in zip(widths, per_sequence, strict=True)
        )
    return parts


def _length_generalization(c: Config) -> float:
    """B5.3's runs per PE mode and B5.3c's per width (``corollary_widths``, absent before
    version 3): training at ``T``, evaluation at ``T`` and ``k T``, the family's best at ``T``
    and one draw of it at ``k T``."""
    T, lengths, m_p = c["T"], [c["T"] * f for f in c["factors"]], c["pe_dim"]
    per_seed = sum(
        _selector_training(c, m_p, T)
        + c["eval_size"] * sum(lengths) * m_p**2
        + (_family(c["family_samples"], lengths, m_p) if pe == "stochastic" else 0)
        for pe in c["pes"]
    )
    far = c.get("corollary_factor", 4) * T
    per_seed += sum(
        _selector_training(c, m, T)
        + c["eval_size"] * (T + far) * m**2
        + _family(c["family_samples"], [T], m)
        + c["family_samples"] * far * m**2
        for m in c.get("corollary_widths", [])
    )
    return len(c["seeds"]) * per_seed


def _width_search(c: Config, d_values: list[int]) -> Parts:
    """B5.2's search on ``m_p`` per ``(T, q, d)``, the threshold taken as ``4 q ln T``. The law
    evaluator's probe costs its table of ``2^16`` points and, per sequence, about ``TOP``
    off-subset draws and the ``q^2`` of the subset, whatever ``T``; its bisection takes about
    ``2 log2 m*`` probes: a part of its own (``law``), timed apart from the drawn solvers."""
    from ..exact.family import GOLDEN_ROUNDS, GRID_POINTS
    from ..exact.family_law import TABLE, TOP

    solver = c.get("solver", "population")
    part = "law" if solver == "law" else ""
    parts: Parts = {}
    for T in c["T_values"]:
        for q in c["q_values"]:
            m_star = 4 * q * _ln(T)
            probes = _probes(c["m_limit"])
            if solver == "law":
                probe = TABLE + (GRID_POINTS + GOLDEN_ROUNDS) * c["samples"] * (TOP + q * q)
                probes = _probes(m_star)
            elif solver == "population":
                probe = 2 * _family(c["samples"], [T], m_star)
            else:
                probe = c["max_steps"] * c["batch"] * T * m_star**2
            work = len(d_values) * c["seeds"] * probes * probe
            parts[part] = parts.get(part, 0.0) + work
    return parts


def _select_width(c: Config) -> Parts:
    return _width_search(c, c["d_values"])


def _separation_select(c: Config) -> Parts:
    return _width_search(c, [c["d"]])


def _separation_xor(c: Config) -> Parts:
    """The one step's search (``m* ~ (ln d)^2``, then a sign test on fresh samples) and the
    FCNs' search: minibatch steps on small matrices, whose cost per step grows like ``d``."""
    from ..configs import XorFCNConfig, default

    test_samples = default(XorFCNConfig, "test_samples")
    transformer = sum(c["seeds"] * d * (3 * 4 * _ln(d) ** 2 + test_samples) for d in c["d_values"])
    fcn = sum(c["seeds"] * _probes(d) * c["fcn_steps"] * d for d in c["fcn_d_values"])
    return {"transformer": transformer, "fcn": fcn}


def _fcn_selection(c: Config) -> Parts:
    from ..configs import SelectionFCNConfig, default

    batch = default(SelectionFCNConfig, "batch")
    fcn = transformer = 0.0
    for T, d, q in c["settings"]:
        if "fcn" in c["kinds"]:
            widths = sum(f * T * d for f in c["width_fractions"])
            fcn += c["fcn_replicas"] * c["fcn_steps"] * batch * (T * d + T) * widths
        if "transformer" in c["kinds"]:
            m_star = 4 * q * _ln(T)
            transformer += (
                c["selector_replicas"]
                * _probes(T * d)
                * c["selector_steps"]
                * c["batch"]
                * T
                * m_star**2
            )
    return {"transformer": transformer, "fcn": fcn}


WORK: dict[str, Callable[[Config], float | Parts]] = {
    "one-step": _one_step,
    "polylog-width": _polylog_width,
    "attention-maps": _attention_maps,
    "head-specialization": _head_specialization,
    "finite-samples": _finite_samples,
    "kparity-steps": _kparity_steps,
    "select-convergence": _select_convergence,
    "select-width": _select_width,
    "length-generalization": _length_generalization,
    "separation-xor": _separation_xor,
    "fcn-selection": _fcn_selection,
    "separation-select": _separation_select,
}
SEARCHES = frozenset(
    {"polylog-width", "finite-samples", "select-width", "separation-xor", "fcn-selection"}
    | {"separation-select"}
)
"""Experiments whose work depends on a threshold they search for (taken from the paper's law)."""


def work(name: str, config: Config) -> Parts | None:
    """The work of one job of ``name`` by part (one part ``""`` unless its models differ);
    None when there is no model for this experiment or config."""
    model = WORK.get(name)
    if model is None:
        return None
    try:
        units = model(config)
    except (KeyError, TypeError, ValueError):  # a config from another version of the experiment
        return None
    parts = units if isinstance(units, dict) else {"": units}
    return {part: float(u) for part, u in parts.items() if u > 0}


Model = dict[str, tuple[float, float]]
"""Per part: ``(floor seconds, seconds per unit of work)``."""


def fit(timed: list[tuple[Parts, float]]) -> Model:
    """Each part's ``(floor, rate)`` from the timed jobs of that part alone (``(work,
    seconds)``): the floor is the fastest job's seconds (start-up, evaluation and bookkeeping
    that no work count sees), the rate the median of ``(seconds - floor) / work`` over the
    other jobs (over all of them when they took the same time)."""
    by_part: dict[str, list[tuple[float, float]]] = {}
    for parts, seconds in timed:
        if len(parts) == 1:
            ((part, units),) = parts.items()
            by_part.setdefault(part, []).append((units, seconds))
    model = {}
    for part, pairs in by_part.items():
        floor = min(s for _, s in pairs)
        rates = [(s - floor) / w for w, s in pairs if s > floor] or [s / w for w, s in pairs]
        model[part] = (floor, statistics.median(rates))
    return model


def fit_configs(name: str, timed: Iterable[tuple[Config, float]]) -> Model:
    """:func:`fit` on ``(config, seconds)`` of jobs of experiment ``name`` (configs without a
    work count, e.g. of another version, left out)."""
    return fit([(parts, s) for config, s in timed if (parts := work(name, config)) is not None])


def predict(model: Model, parts: Parts | None) -> float | None:
    """Seconds of a job with work ``parts``: each part's floor plus its rate times the work
    (None when a part has no timed job to scale)."""
    if not parts or any(part not in model for part in parts):
        return None
    return sum(model[part][0] + model[part][1] * units for part, units in parts.items())


def estimate(model: Model, name: str, config: Config) -> float | None:
    """Seconds of a job of experiment ``name`` at ``config`` under ``model`` (None: unknown)."""
    return predict(model, work(name, config))
