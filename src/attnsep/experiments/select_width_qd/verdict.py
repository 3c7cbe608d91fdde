"""B5.5's analysis and verdict: ``m_p*(d, q)`` of full-``W`` SGD, its exponent in ``d`` and its
growth in ``q`` (SPEC Part G, item B5.5; criterion: ``CRITERION``).

Each ``m_p*`` is made continuous as the middle of its integer cell, ``m_p* − 0.5``, and each of
its bootstrap draws over replicas (``stats.threshold_draws``) is moved uniformly within its cell
(as B5.2, ``select_width.verdict``). Records of different ``(d, q)`` are independent searches, so
their draws are combined column by column.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...metrics import calibration, stats
from ...train.search import probe_matrix
from ..base import Record
from .config import Config

D_PAPER = 0.25
"""The ``d``-exponent's upper end below this: ``m_p*`` does not grow with ``d``."""
D_RIVAL = 0.5
"""The ``d``-exponent's lower end at least this: ``m_p*`` grows with ``d`` (rival ``∝ d``)."""
CELL_SEED = 6211

CRITERION = (
    "m_p*(d, q) of full-W SGD (the middle of its integer cell, bootstrap draws over replicas "
    "moved within the cell); (1) d: the exponent beta_d of m_p* in d (least squares of ln m_p* "
    "on ln d, one slope for the q's reached at every d) with its bootstrap 95% interval: upper "
    f"end < {D_PAPER} sides with the paper (the d term is additive), lower end >= {D_RIVAL} "
    "with the rival; "
    "(2) q: per q the geometric mean of m_p* over d; a + b q (the paper's q log T at one T) and "
    "a + c q^2 (the rival: coherence-type q^2) fitted on the smaller q's, each one's |ln("
    "predicted / measured)| at the largest q: the rival's minus the paper's error with its 95% "
    "interval above 0, with m_p* at the largest q interval-separated above the smallest q's, "
    "sides with the paper, below 0 with the rival; reproduced when both parts side with the "
    "paper, not reproduced when either sides with the rival, inconclusive otherwise (an "
    "unreached m_p*, fewer than 2 d's or 3 q's, intervals that straddle) (criterion version 1)"
)


def cell(record: Record) -> tuple[float, np.ndarray]:
    """``(m_p* − 0.5, draws)``: the draws each less a uniform position in the cell; ``inf``
    where not reached."""
    sizes, outcomes = probe_matrix(record["probes"])
    seed = 1000 * record["d"] + record["q"]
    from ...train.selection_threshold import RATE  # torch: loaded when a verdict is judged

    point, boot = stats.threshold_draws(sizes, outcomes, RATE, seed=seed)
    shift = np.random.default_rng([CELL_SEED, seed]).uniform(0.0, 1.0, len(boot))
    return point - 0.5, boot - shift


def table(records: list[Record]) -> dict[str, Any]:
    """``{"d", "q", "value", "draws"}``: the sorted ``d``'s and ``q``'s, ``value[q, d]`` and
    ``draws[b, q, d]`` (``nan`` where a pair was not run)."""
    ds = sorted({r["d"] for r in records})
    qs = sorted({r["q"] for r in records})
    value = np.full((len(qs), len(ds)), math.nan)
    draws: np.ndarray | None = None
    for r in records:
        point, boot = cell(r)
        if draws is None:
            draws = np.full((len(boot), len(qs), len(ds)), math.nan)
        i, j = qs.index(r["q"]), ds.index(r["d"])
        value[i, j], draws[:, i, j] = point, boot
    assert draws is not None, "no records"
    return {"d": ds, "q": qs, "value": value, "draws": draws}


def d_slopes(ds: list[int], rows: np.ndarray) -> np.ndarray:
    """Per row (``... x q x d``) the least-squares slope of ``ln m`` on ``ln d`` with one
    intercept per ``q``; ``nan`` where a value is not finite and positive."""
    x = np.log(np.asarray(ds, dtype=float))
    xc = x - x.mean()
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.log(np.where(rows > 0, rows, math.nan))
        yc = y - y.mean(axis=-1, keepdims=True)
        slope = (yc @ xc).sum(axis=-1) / (y.shape[-2] * (xc @ xc))
    return np.where(np.isfinite(slope), slope, math.nan)


def with_interval(point: float, draws: np.ndarray) -> tuple[float, float, float]:
    """``(point, low, high)``: the bootstrap 95% interval, widened to hold the point where a
    bounded statistic (an absolute error near 0) puts it outside."""
    return stats.holding(point, *stats.interval(draws))


def q_errors(qs: list[int], levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``levels`` (``... x q``): ``|ln(predicted / measured)|`` at the largest ``q``
    of ``a + b q`` and of ``a + c q²``, both fitted on the other ``q``'s (a prediction ``<= 0``
    or a non-finite level: ``inf``)."""
    q = np.asarray(qs, dtype=float)
    out = []
    for v in (q, q**2):
        vc = v[:-1] - v[:-1].mean()
        y = levels[..., :-1]
        with np.errstate(invalid="ignore"):
            slope = ((y - y.mean(axis=-1, keepdims=True)) @ vc) / (vc @ vc)
            predicted = y.mean(axis=-1) + slope * (v[-1] - v[:-1].mean())
            ratio = predicted / levels[..., -1]
            error = np.abs(np.log(np.where(ratio > 0, ratio, math.nan)))
        out.append(np.where(np.isfinite(error), error, math.inf))
    return out[0], out[1]


def analyse(records: list[Record]) -> dict[str, Any]:
    """The table, the pooled and per-``q`` ``d``-exponents, the ``q`` levels (geometric mean
    over ``d``) and the held-out comparison of ``a + b q`` against ``a + c q²``, each with its
    bootstrap 95% interval; ``d_side``, ``q_side`` and ``reached``."""
    t = table(records)
    ds, qs, value, draws = t["d"], t["q"], t["value"], t["draws"]
    t["reached"] = bool(np.isfinite(value).all())
    rows = [i for i in range(len(qs)) if np.isfinite(value[i]).all()]  # q's reached at every d
    t["d_rows"] = [qs[i] for i in rows]
    beta = float(d_slopes(ds, value[rows])) if rows else math.nan
    t["beta_d"] = with_interval(beta, d_slopes(ds, draws[:, rows]) if rows else np.full(2, np.nan))
    t["beta_per_q"] = [
        with_interval(float(d_slopes(ds, value[i : i + 1])), d_slopes(ds, draws[:, i : i + 1]))
        for i in range(len(qs))
    ]
    with np.errstate(divide="ignore", invalid="ignore"):
        levels = np.exp(np.log(value).mean(axis=-1))
        level_draws = np.exp(np.log(draws).mean(axis=-1))
    t["levels"] = [with_interval(float(a), level_draws[:, i]) for i, a in enumerate(levels)]
    t["held_out"] = None
    if len(qs) >= 3:
        paper, rival = q_errors(qs, levels)
        paper_b, rival_b = q_errors(qs, level_draws)
        with np.errstate(invalid="ignore"):
            diff = np.where(np.isfinite(rival_b - paper_b), rival_b - paper_b, math.nan)
            point = float(rival - paper)
        t["held_out"] = {
            "paper": with_interval(float(paper), paper_b),
            "rival": with_interval(float(rival), rival_b),
            "difference": with_interval(point, diff),
        }
    t["d_side"], t["q_side"] = sides(t)
    return t


def sides(t: dict[str, Any]) -> tuple[str | None, str | None]:
    """The ``d`` part's and the ``q`` part's sides (``CRITERION``), ``None`` for neither."""
    d_side = None
    if len(t["d"]) >= 2 and t["d_rows"]:  # the d part on the q's reached at every d
        _, low, high = t["beta_d"]
        d_side = "paper" if high < D_PAPER else "rival" if low >= D_RIVAL else None
    h, q_side = t["held_out"], None
    if h is not None and t["reached"]:
        grows = t["levels"][-1][1] > t["levels"][0][2]
        _, low, high = h["difference"]
        q_side = "paper" if low > 0 and grows else "rival" if high < 0 else None
    return d_side, q_side


def outcome(t: dict[str, Any]) -> str:
    if t["d_side"] == "rival" or t["q_side"] == "rival":  # a rival side decides, reached or not
        return stats.NOT_REPRODUCED
    if t["d_side"] == "paper" and t["q_side"] == "paper" and t["reached"]:
        return stats.REPRODUCED
    return stats.INCONCLUSIVE


def _fmt(triple: tuple[float, float, float]) -> str:
    return stats.fmt_interval(*triple)


def unreached(t: dict[str, Any]) -> list[str]:
    """The ``(d=…, q=…)`` where ``m_p*`` was not reached (``analyse``'s table ``t``)."""
    return [
        f"(d={d}, q={q})"
        for i, q in enumerate(t["q"])
        for j, d in enumerate(t["d"])
        if not math.isfinite(t["value"][i, j])
    ]


def reason(t: dict[str, Any], result: str) -> str:
    beta = f"the exponent of m_p* in d is {_fmt(t['beta_d'])} over d = {t['d'][0]} … {t['d'][-1]}"
    h = t["held_out"]
    q_text = (
        "too few q's for the q part (3 needed)"
        if h is None
        else f"at q = {t['q'][-1]} a + b q misses by {_fmt(h['paper'])} and a + c q^2 by "
        f"{_fmt(h['rival'])} (difference {_fmt(h['difference'])})"
    )
    if not t["reached"]:
        return (
            f"m_p* was not reached at {', '.join(unreached(t))} (raise m_limit or max_steps); "
            f"on the q's reached at every d ({t['d_rows']}) {beta}"
        )
    if result == stats.REPRODUCED:
        return f"{beta} (upper end < {D_PAPER}: no growth with d); {q_text}: linear in q predicts"
    if result == stats.NOT_REPRODUCED:
        parts = []
        if t["d_side"] == "rival":
            parts.append(f"{beta}, lower end >= {D_RIVAL}: the width grows with d")
        if t["q_side"] == "rival":
            parts.append(f"{q_text}: the quadratic predicts better")
        return "; ".join(parts)
    return (
        f"{beta}; {q_text}; to decide, more seeds per probe (narrower intervals) or a wider d "
        "range (d up to 256) and q up to 16"
    )


def estimates_of(t: dict[str, Any]) -> list[dict]:
    out = []
    for i, q in enumerate(t["q"]):
        for j, d in enumerate(t["d"]):
            m = with_interval(t["value"][i, j], t["draws"][:, i, j])
            out.append(stats.estimate(f"m_p*(d={d}, q={q})", *m))
    out.append(stats.estimate(f"exponent of m_p* in d (q in {t['d_rows']})", *t["beta_d"]))
    out += [
        stats.estimate(f"exponent of m_p* in d (q={q})", *b)
        for q, b in zip(t["q"], t["beta_per_q"], strict=True)
    ]
    out += [
        stats.estimate(f"m_p* geometric mean over d (q={q})", *v)
        for q, v in zip(t["q"], t["levels"], strict=True)
    ]
    h = t["held_out"]
    if h is not None:
        names = {"paper": "a + b q", "rival": "a + c q^2", "difference": "rival - paper"}
        out += [
            stats.estimate(f"held-out |ln error| at q={t['q'][-1]}: {names[k]}", *h[k])
            for k in ("paper", "rival", "difference")
        ]
    return out


def training_text(records: list[Record]) -> str:
    """Per record at ``m_p*``: median content share, cosine and the family's threshold; the
    stopping rules over every probe."""
    parts = []
    for r in sorted(records, key=lambda r: (r["q"], r["d"])):
        at = [p for p in r["probes"] if p["size"] == r["m_star"]]
        if at:
            p = at[0]
            parts.append(
                f"(d={r['d']}, q={r['q']}) at m_p*: ‖W_xp‖/‖W‖ {stats.median(p['content']):.3g}, "
                f"cos(W, W*) {stats.median(p['cosines']):.3g}; m_p^fam {r['family_m']}"
            )
    rules = [x for r in records for p in r["probes"] for x in p["rules"]]
    counts = ", ".join(f"{x} {rules.count(x)}" for x in ("reached", "near-best", "plateau", "cap"))
    return "; ".join(parts) + f"; stopping rules: {counts}"


def verdict(records: list[Record], config: Config) -> dict:
    t = analyse(records)
    result = outcome(t)
    if calibration.in_simulation():
        return stats_claim(result, "simulated", "", [], summary="simulated")
    estimates = estimates_of(t)
    measured = "; ".join(stats.fmt_estimate(e) for e in estimates)
    if all("content" in p for r in records for p in r["probes"]):
        measured += "; " + training_text(records)
    return stats_claim(
        result,
        reason(t, result),
        f"T={config.T}, target {config.target:g}: " + measured,
        estimates,
        config,
        summary=summary(t, result),
        d_side=t["d_side"],
        q_side=t["q_side"],
    )


def stats_claim(
    result: str,
    why: str,
    measured: str,
    estimates: list,
    config: Config | None = None,
    *,
    summary: str,
    **extra,
) -> dict:
    extra_text = "" if config is None else f" ({config.seeds} seeds per probe)"
    return stats.claim(
        result, why, measured, CRITERION + extra_text, estimates, summary=summary, **extra
    )


def summary(t: dict[str, Any], result: str) -> str:
    """``reason(t, result)`` in at most ``stats.SUMMARY_CHARS`` characters: the part that
    decides, in the same branch."""
    beta, low, high = t["beta_d"]
    if not t["reached"]:
        missing = unreached(t)
        where = missing[0] if len(missing) == 1 else f"{len(missing)} (d, q), first {missing[0]}"
        not_reached = f"m_p* not reached at {where}"
        if result == stats.NOT_REPRODUCED:  # the d part decided on the q's reached at every d
            return stats.fitting(
                f"d-exponent >= {low:.3g} >= {D_RIVAL}; {not_reached}", not_reached
            )
        return not_reached
    q_last = t["q"][-1]
    if result == stats.REPRODUCED:
        return f"d-exponent <= {high:.3g} < {D_PAPER}; linear in q predicts q={q_last}"
    if result == stats.NOT_REPRODUCED:
        parts = []
        if t["d_side"] == "rival":
            parts.append(f"d-exponent >= {low:.3g} >= {D_RIVAL}: width grows with d")
        if t["q_side"] == "rival":
            parts.append(f"a + c q^2 predicts q={q_last} better")
        return stats.fitting("; ".join(parts), parts[0])
    # inconclusive: each undecided part, from its fullest text to its tersest
    d_texts = [""]
    if t["d_side"] is None:
        d_texts = (
            [f"only d = {t['d'][0]}; the d part needs 2"]
            if len(t["d"]) < 2
            else [
                f"d-exponent {stats.fmt_interval(beta, low, high)} undecided",
                f"d-exponent {beta:.3g} undecided",
            ]
        )
    q_texts, h = [""], t["held_out"]
    if t["q_side"] is None and h is None:
        q_texts = ["too few q's (3 needed)"]
    elif t["q_side"] is None and h["difference"][1] > 0:  # the rival misses by more, but
        q_texts = [f"m_p* at q={q_last} not above q={t['q'][0]}'s"]  # m_p* does not grow
    elif t["q_side"] is None:
        diff = h["difference"]
        q_texts = [
            f"q part: rival - paper error {stats.fmt_interval(*diff)} spans 0",
            f"q part: rival - paper error {diff[0]:.3g} spans 0",
        ]
    pairs = [(d, q) for d in d_texts for q in q_texts]  # at least one part is undecided
    return stats.fitting(
        *("; ".join(x for x in pair if x) for pair in pairs), d_texts[-1] or q_texts[-1]
    )
