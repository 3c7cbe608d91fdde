"""B5.2 — width: ``m_p*(T)``, the smallest PE width whose trained selector reaches the success
target, and its growth law ``a + b q ln T`` decided against ``c T^alpha`` (SPEC B5.2, Part D).

Per ``(T, q, d)`` the search bisects on the integer ``m_p``; every probe keeps each replica's
outcome, so the bootstrap over replicas re-runs the search on the stored probes. Two solvers
(``selection_threshold``), both on the position block from ``W = 0``:

* ``population`` (default): gradient descent on the population loss. By the rotation symmetry
  of the encodings its path is ``W = α(t) I`` and it comes to rest at the first minimum of the
  ``W = αI`` family's loss; each replica is an independent Monte Carlo estimate of that loss.
* ``sgd``: stochastic gradient descent on the full position block, each probe trained until a
  stopping rule says it converged, beside the family's threshold as a yardstick. Its noise in
  the ``m_p² − 1`` directions off ``I`` needs a batch growing with ``m_p``: at ``T = 1024,
  m_p = 200`` a batch of 64 stalls at 0.54 x uniform where the family reaches 0.25.

With the position block alone the loss is ``d`` times a ``d``-free function of ``W``, so
``m_p*`` does not depend on ``d`` under either solver (tested); ``d`` enters C's width
``d + m_p*`` additively. The law is fitted per ``(q, d)`` series (*choice*: ``a + b' ln T`` at
fixed ``q``, ``b' = b q``; ``b'/q`` is reported so that the ``q`` scaling can be read off).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import Field, model_validator

from ..configs import SELECTION_RIVAL_MIN_ALPHA, SELECTION_TARGET
from ..metrics import stats
from ..metrics.stats import LINEAR_LOG, POWER
from . import plotting
from .base import Experiment, ExperimentConfig, InputLength, Positive, Record, register

if TYPE_CHECKING:
    from .. import selection_threshold as sel


class WidthSearch(ExperimentConfig):
    """The ``m_p*`` search shared by B5.2 and C: lengths, subset sizes, seeds, the success
    target and the training's stopping rule (``selection_threshold``)."""

    T_values: list[InputLength] = Field(default=[8, 16, 32, 64], min_length=1)
    q_values: list[Positive] = Field(default=[1, 2, 4], min_length=1)
    seeds: int = Field(default=8, ge=1)
    target: float = Field(default=SELECTION_TARGET, gt=0, lt=1)
    batch: int = Field(default=128, ge=1)
    eval_size: int = Field(default=2048, ge=2)
    max_steps: int = Field(default=3000, ge=25)
    m_limit: int = Field(default=2048, ge=2)
    solver: Literal["population", "sgd"] = "population"
    samples: int = Field(default=1024, ge=2)

    @model_validator(mode="after")
    def _q_below_T(self):  # noqa: ANN202
        if max(self.q_values) >= min(self.T_values):
            raise ValueError(
                f"every q must be < every T (uniform loss is 0 at q = T), got "
                f"q={max(self.q_values)} and T={min(self.T_values)}"
            )
        return self

    def training(self) -> sel.Training:
        from .. import selection_threshold as sel

        stopping = sel.Stopping(max_steps=self.max_steps)
        return sel.Training(batch=self.batch, eval_size=self.eval_size, stopping=stopping)

    def threshold(self, T: int, q: int, d: int) -> Record:
        """One ``m_p*`` record: population gradient descent (``samples`` sequences per replica)
        or SGD trained to its stopping rule (``batch``, ``eval_size``, ``max_steps``)."""
        from .. import selection_threshold as sel

        if self.solver == "population":
            return sel.population_threshold(
                T, q, d, self.seeds, self.seed, self.samples, self.target, self.m_limit
            )
        return sel.trained_threshold(
            T, q, d, self.seeds, self.seed, self.training(), self.target, self.m_limit
        )


class Config(WidthSearch):
    """``m_p*(T)`` per ``(q, d)``: the smallest PE width whose selectors, trained to convergence
    (module docstring: population gradient descent by default, or SGD to a stopping rule),
    reach loss ``<= target x`` uniform attention (exact over the tokens, at the training length)
    in at least 90% of ``seeds`` replicas; bisection on the integer ``m_p``.

    Criterion (SPEC B5.2, Part D; fixed before any standard-size numbers were seen): each
    ``m_p*`` carries a bootstrap 95% interval over replicas. Per ``(q, d)`` series the paper's
    law ``a + b ln T`` (``b = b_q q``) and the rival ``c T^alpha`` with ``alpha >= 0.3`` are
    fitted on the smaller half of the ``T``'s and predict the larger half. **reproduced**: in
    every series only ``a + b ln T`` predicts inside the measured intervals, and for each ``q``
    the two ``d``'s slopes ``b`` have overlapping bootstrap intervals (``m_p*`` depends on ``d``
    at most by an additive term). **not reproduced**: the power law alone predicts in a majority
    of the series and ``a + b ln T`` alone in none. **inconclusive**: otherwise (fewer than 3
    ``T``'s, both or neither law predicts, an unreached ``m_p*``, or the ``d``'s slopes
    disagree); the reason names the ``T`` at which the two laws would separate.
    """

    d_values: list[Positive] = Field(default=[8], min_length=1)
    """Each ``d`` a series of its own; ``m_p*`` does not depend on ``d`` (module docstring)."""


CRITERION = (
    "m_p*(T) per (q, d) with a bootstrap 95% interval; a + b ln T and c T^alpha (alpha >= "
    f"{SELECTION_RIVAL_MIN_ALPHA}) fitted on the smaller half of the T's predict the larger half: "
    "reproduced when in every series only a + b ln T predicts inside the intervals and the two "
    "d's slopes b overlap for each q; not reproduced when the power law alone predicts in a "
    "majority of series and a + b ln T alone in none; inconclusive otherwise"
)


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


def analyse(records: list[Record]) -> dict[tuple[int, int], dict[str, Any]]:
    """Per ``(q, d)`` series: ``selection_threshold.law_series``."""
    from .. import selection_threshold as sel

    keys = sorted({(r["q"], r["d"]) for r in records})
    return {
        (q, d): sel.law_series([r for r in records if (r["q"], r["d"]) == (q, d)]) for q, d in keys
    }


def d_slopes_agree(series: dict[tuple[int, int], dict[str, Any]]) -> dict[int, bool]:
    """Per ``q`` with at least two ``d``'s: do the slopes ``b`` have overlapping intervals?"""
    out = {}
    for q in sorted({q for q, _ in series}):
        bs = [s["b"] for (qq, _), s in series.items() if qq == q]
        if len(bs) >= 2:
            out[q] = max(b[1] for b in bs) <= min(b[2] for b in bs)
    return out


def law_curves(ax, series: dict[str, Any], grid: np.ndarray, color: str, tag: str) -> None:
    """Both laws fitted on the smaller half, drawn over ``grid``, held-out predictions as x."""
    for side, law, style in (("paper", LINEAR_LOG, "-"), ("rival", POWER, "--")):
        fit = series["comparison"][side]
        if None in fit["params"]:
            continue
        label = f"{tag}: {law.formula} fitted on T <= {int(max(fit['fitted_on']))}"
        ax.plot(grid, law.predict(fit["params"], grid), style, color=color, lw=1, label=label)
        ax.plot(fit["predicted_at"], fit["predicted"], "x", ms=9, color=color)


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


def _reason(series, agree, decided, outcome: str) -> str:
    if outcome == stats.REPRODUCED:
        return (
            "in every (q, d) series a + b ln T fitted on the smaller T's predicts m_p* at the "
            f"larger T's and c T^alpha (alpha >= {SELECTION_RIVAL_MIN_ALPHA}) does not, with "
            "slopes that agree across d"
        )
    if outcome == stats.NOT_REPRODUCED:
        return "the power law alone predicts the held-out T's in a majority of the series"
    short = [k for k, s in series.items() if s["comparison"] is None]
    if short:
        return f"the held-out test needs at least 3 values of T, got {len(series[short[0]]['T'])}"
    where = [s["separating_T"] for s in series.values() if s["separating_T"]]
    beyond = (
        f"; the two laws fitted on all T's separate by more than the intervals from T = "
        f"{min(where)}"
        if where
        else "; no T up to 2^40 separates the fitted laws"
    )
    unreached = [k for k, s in series.items() if not np.isfinite(s["m"]).all()]
    if unreached:
        return f"m_p* was not reached in series (q, d) = {unreached} (raise m_limit){beyond}"
    off = [q for q, ok in agree.items() if not ok]
    if all(v == "paper" for v in decided.values()) and off:
        return f"the two d's slopes b disagree at q = {off}{beyond}"
    counts = {k: list(decided.values()).count(k) for k in ("paper", "rival", "both", "neither")}
    return f"held-out decisions over the series: {counts}{beyond}"


def training_summary(records: list[Record]) -> str:
    """How the thresholds were trained: the solver, and for SGD the family's thresholds, the
    steps used and the stopping rules that fired."""
    if all(r.get("solver") == "population" for r in records):
        return "; solver: population gradient descent (W = alpha I by symmetry)"
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


def verdict(records: list[Record], config: Config) -> dict:
    from .. import selection_threshold as sel

    series = analyse(records)
    agree = d_slopes_agree(series)
    decided = {
        k: (None if s["comparison"] is None else s["comparison"]["decided"])
        for k, s in series.items()
    }
    votes = list(decided.values())
    if None not in votes and all(v == "paper" for v in votes) and all(agree.values()):
        outcome = stats.REPRODUCED
    elif votes.count("rival") > len(votes) / 2 and "paper" not in votes:
        outcome = stats.NOT_REPRODUCED
    else:
        outcome = stats.INCONCLUSIVE
    estimates, parts = [], []
    for (q, d), s in series.items():
        estimates += [
            stats.estimate(f"m_p*(T={int(T)}, q={q}, d={d})", v, lo, hi)
            for T, v, lo, hi in zip(s["T"], s["m"], s["low"], s["high"], strict=True)
        ]
        b, alpha = s["b"], s["alpha"]
        estimates += [
            stats.estimate(f"slope b in ln T (q={q}, d={d})", *b),
            stats.estimate(f"b / q (q={q}, d={d})", *(x / q for x in b)),
            stats.estimate(f"power exponent alpha (q={q}, d={d})", *alpha),
        ]
        cmp = s["comparison"]
        if cmp is not None:
            parts.append(
                f"(q={q}, d={d}) fit T <= {int(max(cmp['paper']['fitted_on']))}: a + b ln T "
                f"{sel.predictions(cmp['paper'])}, power {sel.predictions(cmp['rival'])} -> "
                f"{cmp['decided']}"
            )
    measured = "; ".join(stats.fmt_estimate(e) for e in estimates)
    measured += "; held-out tests: " + "; ".join(parts) if parts else ""
    measured += training_summary(records)
    return stats.claim(
        outcome,
        _reason(series, agree, decided, outcome),
        measured,
        CRITERION + f" (target {config.target:g}, {config.seeds} seeds per probe)",
        estimates,
        decided={f"q={q}, d={d}": v for (q, d), v in decided.items()},
        d_slopes_agree={f"q={q}": v for q, v in agree.items()},
        separating_T={f"q={q}, d={d}": s["separating_T"] for (q, d), s in series.items()},
    )


EXPERIMENT = register(
    Experiment(
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
        version=3,
        presets={
            # Job-seconds (one thread, population solver): quick ~5 s; standard ~10 min, most of
            # it the T = 512 and 1024 jobs (q = 4, T = 1024 alone ~2 min).
            "quick": {"T_values": [8, 16, 32], "q_values": [2], "seeds": 4, "samples": 512},
            "standard": {
                "T_values": [8, 16, 32, 64, 128, 256, 512, 1024],
                "q_values": [1, 2, 4],
                "seeds": 8,
                "samples": 1024,
            },
            "full": {
                "T_values": [16, 32, 64, 128, 256, 512, 1024, 2048, 4096],
                "q_values": [1, 2, 4, 8],
                "seeds": 16,
                "samples": 4096,
                "m_limit": 4096,
            },
        },
    )
)
