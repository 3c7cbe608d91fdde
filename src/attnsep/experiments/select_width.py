"""B5.2 — width: ``m_p*(T)``, the smallest PE width whose trained selector reaches the success
target, and its growth law ``a + b q ln T`` decided against ``c T^alpha`` (SPEC B5.2, Part D).

Per ``(T, q, d)``: ``selection_threshold.trained_threshold`` bisects on the integer ``m_p``,
each probe trained (position block, population GD) until a stopping rule says it converged;
every probe keeps each replica's outcome, so the bootstrap over replicas re-runs the search on
the stored probes. Beside it, the family's threshold ``m_p^fam`` (the ``W = αI`` family alone,
cheap) as a yardstick. The law is fitted per ``(q, d)`` series (*choice*: ``a + b' ln T`` at
fixed ``q``, ``b' = b q``; ``b'/q`` is reported so that the ``q`` scaling can be read off).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from pydantic import Field, model_validator

from .. import selection_threshold as sel
from ..metrics import stats
from ..metrics.stats import LINEAR_LOG, POWER
from . import plotting
from .base import Experiment, ExperimentConfig, InputLength, Positive, Record, register


class WidthSearch(ExperimentConfig):
    """The ``m_p*`` search shared by B5.2 and C: lengths, subset sizes, seeds, the success
    target and the training's stopping rule (``selection_threshold``)."""

    T_values: list[InputLength] = Field(default=[8, 16, 32, 64], min_length=1)
    q_values: list[Positive] = Field(default=[1, 2, 4], min_length=1)
    seeds: int = Field(default=8, ge=1)
    target: float = Field(default=sel.TARGET, gt=0, lt=1)
    batch: int = Field(default=128, ge=1)
    eval_size: int = Field(default=2048, ge=2)
    max_steps: int = Field(default=3000, ge=25)
    m_limit: int = Field(default=2048, ge=2)

    @model_validator(mode="after")
    def _q_below_T(self):  # noqa: ANN202
        if max(self.q_values) >= min(self.T_values):
            raise ValueError(
                f"every q must be < every T (uniform loss is 0 at q = T), got "
                f"q={max(self.q_values)} and T={min(self.T_values)}"
            )
        return self

    def training(self) -> sel.Training:
        stopping = sel.Stopping(max_steps=self.max_steps)
        return sel.Training(batch=self.batch, eval_size=self.eval_size, stopping=stopping)


class Config(WidthSearch):
    """``m_p*(T)`` per ``(q, d)``: the smallest PE width whose selectors, trained to convergence
    (``selection_threshold``: bold-driver population GD on the position block, stopped when
    within 3% of the ``W = αI`` family's best, on a plateau, below half the target, or at
    ``max_steps``), reach loss ``<= target x`` uniform attention (exact over the tokens, at the
    training length) in at least 90% of ``seeds`` replicas; bisection on the integer ``m_p``.

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

    d_values: list[Positive] = Field(default=[8, 32], min_length=1)


CRITERION = (
    "m_p*(T) per (q, d) with a bootstrap 95% interval; a + b ln T and c T^alpha (alpha >= "
    f"{sel.RIVAL_MIN_ALPHA}) fitted on the smaller half of the T's predict the larger half: "
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
        sel.trained_threshold(
            T, q, d, config.seeds, config.seed, config.training(), config.target, config.m_limit
        )
        for q in config.q_values
        for d in config.d_values
        for T in config.T_values
    ]


def analyse(records: list[Record]) -> dict[tuple[int, int], dict[str, Any]]:
    """Per ``(q, d)`` series: ``selection_threshold.law_series``."""
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
            fam = sorted({(r["T"], r["family_m"]) for r in records if r["q"] == q})
            ax.plot(
                *zip(*[(T, m) for T, m in fam if m is not None], strict=True),
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
            f"larger T's and c T^alpha (alpha >= {sel.RIVAL_MIN_ALPHA}) does not, with slopes "
            "that agree across d"
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


def verdict(records: list[Record], config: Config) -> dict:
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
    family = sorted({(r["T"], r["q"], r["family_m"]) for r in records})
    measured = "; ".join(stats.fmt_estimate(e) for e in estimates)
    measured += "; held-out tests: " + "; ".join(parts) if parts else ""
    measured += "; family thresholds m_p^fam: " + ", ".join(
        f"(T={T}, q={q}) {m}" for T, q, m in family
    )
    steps = [s for r in records for p in r["probes"] for s in p["steps"]]
    rules = [x for r in records for p in r["probes"] for x in p["rules"]]
    measured += f"; training steps per replica: median {stats.median(steps):g}, max {max(steps)}"
    measured += "; stopping rules: " + ", ".join(
        f"{x} {rules.count(x)}" for x in ("reached", "near-best", "plateau", "cap")
    )
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
        version=2,
        presets={
            "quick": {
                "T_values": [8, 16, 32],
                "q_values": [2],
                "d_values": [8],
                "seeds": 4,
                "batch": 64,
                "eval_size": 512,
                "max_steps": 500,
            },
            "standard": {
                "T_values": [8, 16, 32, 64, 128],
                "q_values": [1, 2, 4],
                "d_values": [8, 32],
                "seeds": 8,
                "batch": 64,
                "eval_size": 1024,
                "max_steps": 2000,
            },
            "full": {
                "T_values": [8, 16, 32, 64, 128, 256, 512, 1024],
                "q_values": [1, 2, 4],
                "d_values": [8, 32],
                "seeds": 16,
                "max_steps": 5000,
            },
        },
    )
)
