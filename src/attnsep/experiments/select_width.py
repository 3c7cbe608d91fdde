"""B5.2 — width: ``m_p*(T)``, the smallest PE width whose trained selector reaches the success
target, and its growth law ``a + b (ln T)^p`` (``p`` free) decided against ``c T^alpha`` (SPEC
B5.2, Part E).

Per ``(T, q, d)`` the search bisects on the integer ``m_p``; every probe keeps each replica's
outcome, so the bootstrap over replicas re-runs the search on the stored probes. Three solvers
(``selection_threshold``), all on the position block from ``W = 0``:

* ``population`` (default): gradient descent on the population loss. By the rotation symmetry
  of the encodings its path is ``W = α(t) I`` and it comes to rest at the first minimum of the
  ``W = αI`` family's loss; each replica is an independent Monte Carlo estimate of that loss.
* ``law``: the same descent, each replica's loss evaluated through the law of the encodings'
  products (``exact.family_law``: the upper tail drawn exactly, the bulk by its exact moments),
  at a cost that does not grow with ``T`` — how ``T`` reaches ``2^16`` (held against the direct
  draw in ``tests/test_family_law.py``).
* ``sgd``: stochastic gradient descent on the full position block, each probe trained until a
  stopping rule says it converged, beside the family's threshold as a yardstick. Its noise in
  the ``m_p² − 1`` directions off ``I`` needs a batch growing with ``m_p``: at ``T = 1024,
  m_p = 200`` a batch of 64 stalls at 0.54 x uniform where the family reaches 0.25.

With the position block alone the loss is ``d`` times a ``d``-free function of ``W``, so
``m_p*`` does not depend on ``d`` under either solver (tested); ``d`` enters C's width
``d + m_p*`` additively. The law is fitted per ``(q, d)`` series (*choice*: the paper's
``Õ(q log T)`` at fixed ``q`` is ``a + b (ln T)^p``, ``Õ`` hiding polylog factors).

The criterion's error rates are measured by simulation (``hypotheses``, SPEC Part E): each
replica's latent threshold is drawn around the law fitted to the run, with the run's replica
noise, and searched by ``search.smallest_passing`` exactly as ``population_threshold`` searches.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import Field, model_validator

from ..configs import SELECTION_RIVAL_MIN_ALPHA, SELECTION_TARGET
from ..metrics import calibration, stats
from ..metrics.stats import AFFINE_POLYLOG, LINEAR_LOG, POWER
from ..train.search import probe_matrix, smallest_passing
from . import costs, plotting
from .base import Experiment, ExperimentConfig, InputLength, Positive, Record, register

if TYPE_CHECKING:
    from ..train import selection_threshold as sel


class WidthSearch(ExperimentConfig):
    """The ``m_p*`` search shared by B5.2 and C: lengths, subset sizes, seeds, the success
    target and the training's stopping rule (``selection_threshold``)."""

    T_values: list[InputLength] = Field(
        default=[8, 16, 32, 64], min_length=1, description="Sequence lengths T, a search each."
    )
    q_values: list[Positive] = Field(
        default=[1, 2, 4], min_length=1, description="Subset sizes q, each < every T."
    )
    seeds: int = Field(
        default=8, ge=1, description="Replicas per probe; a width passes when 90% succeed."
    )
    target: float = Field(
        default=SELECTION_TARGET, gt=0, lt=1, description="Success: loss <= target x uniform."
    )
    batch: int = Field(default=128, ge=1, description="SGD batch (solver sgd).")
    eval_size: int = Field(default=2048, ge=2, description="Evaluation sequences (solver sgd).")
    max_steps: int = Field(default=3000, ge=25, description="Most SGD steps (solver sgd).")
    m_limit: int = Field(default=2048, ge=2, description="Largest PE width m_p searched.")
    solver: Literal["population", "law", "sgd"] = Field(
        default="population",
        description="population: descent on W = alpha I, losses drawn; law: the same, losses "
        "from the products' law (any T); sgd: SGD on the whole position block.",
    )
    samples: int = Field(
        default=1024, ge=2, description="Sequences per replica fitting and evaluating alpha."
    )

    @model_validator(mode="after")
    def _q_below_T(self):  # noqa: ANN202
        if max(self.q_values) >= min(self.T_values):
            raise ValueError(
                f"every q must be < every T (uniform loss is 0 at q = T), got "
                f"q={max(self.q_values)} and T={min(self.T_values)}"
            )
        return self

    def training(self) -> sel.Training:
        from ..train import selection_threshold as sel

        stopping = sel.Stopping(max_steps=self.max_steps)
        return sel.Training(batch=self.batch, eval_size=self.eval_size, stopping=stopping)

    def threshold(self, T: int, q: int, d: int) -> Record:
        """One ``m_p*`` record: population gradient descent (``samples`` sequences per replica)
        or SGD trained to its stopping rule (``batch``, ``eval_size``, ``max_steps``)."""
        from ..train import selection_threshold as sel

        if self.solver in ("population", "law"):
            return sel.population_threshold(
                T,
                q,
                d,
                self.seeds,
                self.seed,
                self.samples,
                self.target,
                self.m_limit,
                by_law=self.solver == "law",
            )
        return sel.trained_threshold(
            T, q, d, self.seeds, self.seed, self.training(), self.target, self.m_limit
        )


class Config(WidthSearch):
    """``m_p*(T)`` per ``(q, d)``: the smallest PE width whose selectors, trained to convergence
    (module docstring: population gradient descent by default, or SGD to a stopping rule),
    reach loss ``<= target x`` uniform attention (exact over the tokens, at the training length)
    in at least 90% of ``seeds`` replicas; bisection on the integer ``m_p``.

    Criterion (SPEC B5.2, Part E; criterion version 2, written after the seed-0 standard data
    were seen, so its confirmatory run is on another master seed): each ``m_p*`` carries a
    bootstrap 95% interval over replicas. Per ``(q, d)`` series the paper's law
    ``a + b (ln T)^p`` (``p`` free, ``stats.AFFINE_POLYLOG``) and the rival ``c T^alpha`` with
    ``alpha >= 0.3`` are fitted on the smaller half of the ``T``'s and predict the larger half;
    a law predicts when the band of its prediction (the law refitted to bootstrap draws of the
    smaller half, each threshold moved within its integer cell: ``stats.held_out``) meets the
    measured interval widened by ``± 1`` at every larger ``T`` (``m_p`` is an integer knob).
    ``q = 1`` (*choice*, after SPEC Part E's "``q = 1`` only with no cap on ``alpha``"): its
    rival is ``c T^alpha`` with ``alpha`` free, and a ``q = 1`` series in which one constant lies
    inside every widened interval is *flat*: no growth law can be judged from it, so it is
    reported and left out of the decision. **reproduced**: in every judged series only
    ``a + b (ln T)^p`` predicts. **not reproduced**: the power law alone predicts in a majority
    of the judged series and ``a + b (ln T)^p`` alone in none. **inconclusive**: otherwise
    (fewer than 4 ``T``'s, both or neither law predicts, an unreached ``m_p*``, no series
    judged); the reason names the ``T`` at which the two laws would separate. Reported, not
    decided on: ``p`` per series with its bootstrap interval, beside the ``W = αI`` family's
    prediction ``m_p* ∝ (q − 1) ln²T / ε`` (``p = 2`` for ``q >= 3``, ``1`` for ``q = 2``).
    Part D's agreement of the slopes across two ``d``'s is no longer part of the criterion
    (Part E's row drops it; ``m_p*`` does not depend on ``d``, module docstring).

    Presets: ``standard`` and ``full`` run ``T = 2^5 ... 2^16``, ``q = 2, 3, 4, 8`` with the
    ``law`` solver (Part E's row); ``q = 1`` is left out there: its family reaches any target
    only by growing ``alpha`` without a bound, so its ``m_p*`` measures where a search over
    ``alpha`` stops, not a width law (it stays available as a ``q_values`` entry).
    """

    d_values: list[Positive] = Field(default=[8], min_length=1)
    """Each ``d`` a series of its own; ``m_p*`` does not depend on ``d`` (module docstring)."""


CRITERION = (
    "m_p*(T) per (q, d) with a bootstrap 95% interval; a + b (ln T)^p (p free) and c T^alpha "
    f"(alpha >= {SELECTION_RIVAL_MIN_ALPHA}; free at q = 1) fitted on the smaller half of the T's "
    "predict the larger half, a law predicting when its refit band meets the interval widened by "
    "± 1 (integer m_p); a q = 1 series flat within ± 1 is not judged: reproduced when in every "
    "judged series only the polylog predicts; not reproduced when the power law alone predicts "
    "in a majority of judged series and the polylog alone in none; inconclusive otherwise "
    "(criterion version 2)"
)

FLAT = "flat"
"""The decision of a ``q = 1`` series with no growth to judge (``Config``'s criterion)."""


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


def rival_min_alpha(q: int) -> float | None:
    """The rival's smallest exponent: ``alpha >= 0.3``, free at ``q = 1`` (SPEC Part E)."""
    return None if q == 1 else SELECTION_RIVAL_MIN_ALPHA


def analyse(records: list[Record]) -> dict[tuple[int, int], dict[str, Any]]:
    """Per ``(q, d)`` series: ``selection_threshold.law_series``."""
    from ..train import selection_threshold as sel

    keys = sorted({(r["q"], r["d"]) for r in records})
    return {
        (q, d): sel.law_series(
            [r for r in records if (r["q"], r["d"]) == (q, d)], rival_min_alpha=rival_min_alpha(q)
        )
        for q, d in keys
    }


def decision(q: int, s: dict[str, Any]) -> str | None:
    """One series' held-out decision (``paper``, ``rival``, ``both``, ``neither``), ``FLAT`` for
    a flat ``q = 1`` series, ``None`` with fewer than 4 ``T``'s."""
    if s["comparison"] is None:
        return None
    if q == 1 and s["flat"]:
        return FLAT
    return s["comparison"]["decided"]


def outcome(decisions: Iterable[str | None]) -> str:
    """The verdict from the series' decisions (``Config``'s criterion; ``FLAT`` not judged)."""
    votes = [v for v in decisions if v != FLAT]
    if not votes or None in votes:
        return stats.INCONCLUSIVE
    if all(v == "paper" for v in votes):
        return stats.REPRODUCED
    if votes.count("rival") > len(votes) / 2 and "paper" not in votes:
        return stats.NOT_REPRODUCED
    return stats.INCONCLUSIVE


def family_p(q: int) -> str:
    """The ``W = αI`` family's prediction ``m_p* ∝ (q − 1) ln²T / ε`` as a power of ``ln T``."""
    if q == 1:
        return "bounded (q − 1 = 0)"
    return "p = 1" if q == 2 else "p = 2"


def flat_note(series: dict[Any, dict[str, Any]], flat: list[Any], what: str = "m_p*") -> str:
    """The reason's note on the flat ``q = 1`` series left out of the decision."""
    if not flat:
        return ""
    s = series[flat[0]]
    Ts = f"T = {int(min(s['T']))} … {int(max(s['T']))}"
    return (
        f"; q = 1 is flat ({what} {min(s['m']):g} to {max(s['m']):g} over {Ts}), so no growth "
        "law is judged on it"
    )


def law_curves(ax, series: dict[str, Any], grid: np.ndarray, color: str, tag: str) -> None:
    """Both laws fitted on the smaller half, drawn over ``grid``, held-out predictions as x with
    their refit bands."""
    for side, law, style in (("paper", AFFINE_POLYLOG, "-"), ("rival", POWER, "--")):
        fit = series["comparison"][side]
        if None in fit["params"]:
            continue
        label = f"{tag}: {law.formula} fitted on T <= {int(max(fit['fitted_on']))}"
        ax.plot(grid, law.predict(fit["params"], grid), style, color=color, lw=1, label=label)
        ax.plot(fit["predicted_at"], fit["predicted"], "x", ms=9, color=color)
        if fit.get("band") and None not in np.ravel(fit["band"]):
            low, high = np.array(fit["band"]).T
            bars = plotting.bar_lengths(fit["predicted"], low, high)
            ax.errorbar(fit["predicted_at"], fit["predicted"], yerr=bars, fmt="none", ecolor=color)


def draw_series(ax, s: dict[str, Any], color: str, tag: str) -> None:
    """Measured points with bootstrap bars (an unreached one at the top as ^), both laws."""
    Ts, m = np.array(s["T"]), np.array(s["m"])
    found = np.isfinite(m)
    low, high = np.array(s["low"])[found], np.array(s["high"])[found]
    high = np.where(np.isfinite(high), high, m[found])
    bars = plotting.bar_lengths(m[found], low, high)
    ax.errorbar(Ts[found], m[found], yerr=bars, fmt="o", color=color, capsize=3, label=tag)
    if s["comparison"] is not None:
        law_curves(ax, s, np.geomspace(Ts.min(), Ts.max() * 2, 64), color, tag)
    ax.set_xscale("log", base=2)


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    path = out / "select_width.png"
    series = analyse(records)
    qs = sorted({q for q, _ in series})
    colors = dict(zip(sorted({d for _, d in series}), ("C0", "C1", "C2", "C3"), strict=False))
    with plotting.figure(path, ncols=len(qs)) as (_, axes):
        for ax, q in zip(axes, qs, strict=True):
            for (qq, d), s in series.items():
                if qq == q:
                    draw_series(ax, s, colors.get(d, "k"), f"d = {d}")
            fam = sorted({(r["T"], r.get("family_m")) for r in records if r["q"] == q})
            fam = [(T, m) for T, m in fam if m is not None]
            if fam:
                ax.plot(
                    *zip(*fam, strict=True),
                    "s",
                    mfc="none",
                    color="grey",
                    label="family W = αI threshold",
                )
            ax.set_xlabel("T (x: held-out predictions)")
            ax.set_ylabel(f"m_p* (loss <= {config.target:g} x uniform)")
            ax.set_title(f"q = {q}", fontsize=10)
            ax.legend(fontsize=6)
    return [path]


def inconclusive_reason(
    series: dict[Any, dict[str, Any]], decided: dict[Any, str | None], what: str
) -> str:
    """Why neither law won (B5.2 and C): too few sizes, an unreached threshold, or the held-out
    decisions, with the ``T`` from which the laws fitted on all sizes would separate."""
    if None in decided.values():
        sizes = len(next(iter(series.values()))["T"])
        return f"the held-out test needs at least 4 values of T, got {sizes}"
    judged = [k for k, v in decided.items() if v != FLAT]
    if not judged:
        return f"every series is a flat q = 1 series: no growth law of {what} can be judged"
    where = [series[k]["separating_T"] for k in judged if series[k]["separating_T"]]
    beyond = (
        "; the two laws fitted on all T's separate by more than the intervals ± 1 from T = "
        f"{min(where)}"
        if where
        else "; no T up to 2^40 separates the fitted laws"
    )
    unreached = [k for k in judged if not np.isfinite(series[k]["m"]).all()]
    if unreached:
        return f"{what} was not reached in series {unreached} (raise m_limit){beyond}"
    votes = [decided[k] for k in judged]
    counts = {k: votes.count(k) for k in ("paper", "rival", "both", "neither")}
    return f"held-out decisions over the judged series: {counts}{beyond}"


def _reason(series, decided, result: str) -> str:
    flat = [k for k, v in decided.items() if v == FLAT]
    note = flat_note(series, flat)
    judged = [v for v in decided.values() if v != FLAT]
    if result == stats.REPRODUCED:
        return (
            "in every judged (q, d) series a + b (ln T)^p fitted on the smaller T's predicts "
            f"m_p* at the larger T's within the intervals ± 1 and c T^alpha (alpha >= "
            f"{SELECTION_RIVAL_MIN_ALPHA}) does not{note}"
        )
    if result == stats.NOT_REPRODUCED:
        return (
            f"c T^alpha alone predicts the held-out T's in {judged.count('rival')} of "
            f"{len(judged)} judged series and a + b (ln T)^p alone in none{note}"
        )
    return inconclusive_reason(series, decided, "m_p*") + note


def training_summary(records: list[Record]) -> str:
    """How the thresholds were trained: the solver, and for SGD the family's thresholds, the
    steps used and the stopping rules that fired."""
    if all(r.get("solver") == "population" for r in records):
        lean = (
            " (losses from the products' law)" if any(r.get("evaluator") for r in records) else ""
        )
        return f"; solver: population gradient descent (W = alpha I by symmetry){lean}"
    family = sorted({(r["T"], r["q"], r.get("family_m")) for r in records})
    steps = [s for r in records for p in r["probes"] for s in p.get("steps", [])]
    rules = [x for r in records for p in r["probes"] for x in p.get("rules", [])]
    return (
        "; solver: SGD to a stopping rule; family thresholds m_p^fam: "
        + ", ".join(f"(T={T}, q={q}) {m}" for T, q, m in family)
        + f"; training steps per replica: median {stats.median(steps):g}, max {max(steps)}"
        + "; stopping rules: "
        + ", ".join(f"{x} {rules.count(x)}" for x in ("reached", "near-best", "plateau", "cap"))
    )


def series_text(tag: str, q: int, s: dict[str, Any], decided: str | None) -> str:
    """One series' fitted polylog (all T's), the family's ``p`` and its held-out test."""
    from ..train import selection_threshold as sel

    a, b, p = s["polylog"]
    text = (
        f"({tag}) a + b (ln T)^p on all T's: a={a:.3g}, b={b:.3g}, p={p:.3g} "
        f"(W = alpha I family: {family_p(q)})"
    )
    cmp = s["comparison"]
    if cmp is not None:
        rival = "c T^alpha" if s["rival_min_alpha"] is None else "c T^alpha (alpha >= 0.3)"
        text += (
            f"; fit T <= {int(max(cmp['paper']['fitted_on']))}: a + b (ln T)^p "
            f"{sel.predictions(cmp['paper'])}, {rival} {sel.predictions(cmp['rival'])} -> "
            f"{decided}"
        )
    return text


def verdict(records: list[Record], config: Config) -> dict:
    series = analyse(records)
    decided = {k: decision(k[0], s) for k, s in series.items()}
    result = outcome(decided.values())
    estimates, parts = [], []
    for (q, d), s in series.items():
        estimates += [
            stats.estimate(f"m_p*(T={int(T)}, q={q}, d={d})", v, lo, hi)
            for T, v, lo, hi in zip(s["T"], s["m"], s["low"], s["high"], strict=True)
        ]
        estimates += [
            stats.estimate(f"polylog exponent p (q={q}, d={d})", *s["p"]),
            stats.estimate(f"power exponent alpha (q={q}, d={d})", *s["alpha"]),
        ]
        parts.append(series_text(f"q={q}, d={d}", q, s, decided[(q, d)]))
    measured = "; ".join(stats.fmt_estimate(e) for e in estimates)
    measured += "; " + "; ".join(parts) + training_summary(records)
    return stats.claim(
        result,
        _reason(series, decided, result),
        measured,
        CRITERION + f" (target {config.target:g}, {config.seeds} seeds per probe)",
        estimates,
        decided={f"q={q}, d={d}": v for (q, d), v in decided.items()},
        family_p={f"q={q}": family_p(q) for q in sorted({q for q, _ in series})},
        separating_T={f"q={q}, d={d}": s["separating_T"] for (q, d), s in series.items()},
    )


# --- the criterion's error rates (SPEC Part E) ---------------------------------------------


@dataclass(frozen=True)
class SeriesLaws:
    """One ``q``'s two laws fitted to the run's ``offset + m_p*`` over all ``T``'s and its
    replica noise: ``paper`` is ``(a, b, p)`` of ``a + b (ln T)^p``, ``rival`` ``(ln c, alpha)``
    of ``c T^alpha`` with ``alpha >= 0.3``; ``spread`` the log-spread of the replicas'
    thresholds (``calibration.log_spread``)."""

    paper: tuple[float, ...]
    rival: tuple[float, ...]
    spread: float
    offset: int

    def m_star(self, side: str, T: int) -> float:
        """The law's ``m_p*`` at ``T`` (the width less ``offset``), at least 1."""
        law, params = (AFFINE_POLYLOG, self.paper) if side == "paper" else (POWER, self.rival)
        value = float(law.predict(params, [float(T)])[0]) - self.offset
        return value if math.isfinite(value) and value >= 1 else 1.0


def fit_series(points: list[tuple[float, float]], spread: float, offset: int) -> SeriesLaws:
    """``SeriesLaws`` through ``(T, offset + m_p*)`` points; with fewer than 3 the paper's side
    is ``a + b ln T`` (``p = 1``), with one point a constant."""
    Ts, ys = [t for t, _ in points], [y for _, y in points]
    if len(points) >= 3:
        paper = AFFINE_POLYLOG.fit(Ts, ys)
    elif len(points) == 2:
        paper = (*LINEAR_LOG.fit(Ts, ys), 1.0)
    else:
        paper = (ys[0], 0.0, 1.0)
    if len(points) >= 2:
        rival = POWER.fit(Ts, ys, SELECTION_RIVAL_MIN_ALPHA)
    else:
        alpha = SELECTION_RIVAL_MIN_ALPHA
        rival = (math.log(ys[0]) - alpha * math.log(Ts[0]), alpha)
    return SeriesLaws(tuple(paper), tuple(rival), spread, offset)


def fitted_laws(records: list[Record], offset: int = 0) -> dict[int, SeriesLaws]:
    """Per ``q`` of the run (every ``d`` pooled: ``m_p*`` does not depend on ``d``): both laws
    fitted to ``offset + m_p*`` at the reached thresholds, and the replica noise of its searches.
    A ``q`` with no reached threshold is left out (its neighbours stand in, ``law_for``)."""
    out = {}
    for q in sorted({r["q"] for r in records}):
        rows = [r for r in records if r["q"] == q]
        points = [(float(r["T"]), r["m_star"] + offset) for r in rows if r["m_star"] is not None]
        if points:
            spread = calibration.log_spread([probe_matrix(r["probes"]) for r in rows])
            out[q] = fit_series(points, spread, offset)
    return out


def law_for(laws: dict[int, SeriesLaws], q: int) -> SeriesLaws | None:
    """The laws of ``q``, or (*choice*) of the nearest measured ``q`` when the simulated config
    has a ``q`` the run did not measure; ``None`` when the run reached no threshold at all."""
    if not laws:
        return None
    return laws[min(laws, key=lambda k: (abs(k - q), k))]


def simulated_search(
    value: float, spread: float, replicas: int, m_limit: int, rng: np.random.Generator
) -> tuple[int | None, list[dict]]:
    """One simulated ``population_threshold`` search: per replica a latent threshold, log-normal
    with log-spread ``spread`` and 90% quantile ``value`` (``calibration.replica_thresholds``);
    a replica passes width ``m`` when its threshold is ``<= m``; ``search.smallest_passing`` from
    2 to ``m_limit``, as the real search."""
    from ..train import selection_threshold as sel

    latent = calibration.replica_thresholds(value, spread, replicas, sel.RATE, rng)
    m_star, probes = smallest_passing(lambda m: latent <= m, sel.RATE, 2, m_limit)
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


def describe(laws: dict[int, SeriesLaws], side: str, what: str = "m_p*") -> str:
    """The simulated law per ``q``, for the calibration entry."""
    parts = []
    for q, law in laws.items():
        if side == "paper":
            a, b, p = law.paper
            parts.append(f"q={q}: {a:.3g} + {b:.3g} (ln T)^{p:.3g}")
        else:
            parts.append(f"q={q}: {math.exp(law.rival[0]):.3g} T^{law.rival[1]:.3g}")
    formula = "a + b (ln T)^p" if side == "paper" else "c T^alpha (alpha >= 0.3)"
    return f"{what} = {formula} fitted to the run's thresholds over all T's; " + "; ".join(parts)


def noise_text(laws: dict[int, SeriesLaws]) -> str:
    spreads = ", ".join(f"q={q}: {law.spread:.3g}" for q, law in laws.items())
    return (
        "per replica a latent m_p*, log-normal around the law (its 90% quantile) with the run's "
        f"log-spread ({spreads}), searched by smallest_passing from 2 to m_limit"
    )


def hypotheses_for(
    records: list[Record],
    offset: int,
    draw: Callable[[dict[int, SeriesLaws], str, Any, np.random.Generator], list[Record]],
    what: str,
) -> calibration.Hypotheses:
    """``calibration.Hypotheses`` whose two sides ``draw`` record sets from the laws fitted to
    ``records`` (shared by B5.2 and C)."""
    laws = fitted_laws(records, offset)
    return calibration.Hypotheses(
        paper=lambda config, rng: draw(laws, "paper", config, rng),
        rival=lambda config, rng: draw(laws, "rival", config, rng),
        paper_law=describe(laws, "paper", what),
        rival_law=describe(laws, "rival", what),
        noise=noise_text(laws),
    )


def _draw(laws, side: str, config: Config, rng: np.random.Generator) -> list[Record]:
    return [
        simulated_record(T, q, d, law_for(laws, q), side, config, rng)
        for q in config.q_values
        for d in config.d_values
        for T in config.T_values
    ]


def hypotheses(records: list[Record], config: Config) -> calibration.Hypotheses:
    """B5.2's two laws (SPEC Part E): per ``q``, ``m_p* = a + b (ln T)^p`` and ``c T^alpha``
    (``alpha >= 0.3``) fitted to the run, each simulated with the run's replica noise."""
    return hypotheses_for(records, 0, _draw, "m_p*")


# --- cost (``attnsep reproduce --plan``): the work of one job ---------------------------------


def width_search_work(c: costs.Config, d_values: list[int]) -> costs.Parts:
    """B5.2's search on ``m_p`` per ``(T, q, d)``, the threshold taken as ``4 q ln T``. The law
    evaluator's probe costs its table of ``2^16`` points and, per sequence, about ``TOP``
    off-subset draws and the ``q^2`` of the subset, whatever ``T``; its bisection takes about
    ``2 log2 m*`` probes: a part of its own (``law``), timed apart from the drawn solvers."""
    from ..exact.family import GOLDEN_ROUNDS, GRID_POINTS
    from ..exact.family_law import TABLE, TOP

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


EXPERIMENT = register(
    Experiment(
        work=work,
        searches=True,
        name="select-width",
        claim="B5.2",
        title="Width Θ(d + q log T) suffices",
        paper="With stochastic PE, transformer width Theta(d + q log T) suffices for gradient "
        "descent to learn q-sparse token selection.",
        config_type=Config,
        run=run,
        figure=figure,
        verdict=verdict,
        split=split,
        version=4,
        hypotheses=hypotheses,
        criterion_version=2,
        presets={
            # Job-seconds (one thread, law solver, cost independent of T): quick ~2 s; standard
            # ~36 s per (T, q) threshold, 48 thresholds.
            "quick": {
                "T_values": [8, 16, 32],
                "q_values": [2],
                "seeds": 4,
                "samples": 512,
                "solver": "law",
            },
            "standard": {
                "T_values": [2**k for k in range(5, 17)],
                "q_values": [2, 3, 4, 8],
                "seeds": 8,
                "samples": 1024,
                "solver": "law",
                "m_limit": 4096,
            },
            "full": {
                "T_values": [2**k for k in range(5, 17)],
                "q_values": [2, 3, 4, 8],
                "seeds": 16,
                "samples": 4096,
                "solver": "law",
                "m_limit": 8192,
            },
        },
    )
)
