"""B5.3c — the corollary of B5.3 (SPEC Part E): the out-of-distribution loss at ``T' = k T``
(``k = corollary_factor``, 4) of stochastic PE trained at ``T``, against the PE width ``m_p``,
beside the ``W = αI`` family at the trained ``α`` (its best at ``T``) with the same ``m_p``, and
the in-distribution loss at ``T`` the corollary ties it to. A companion entry of B5.3
(the package's ``verdict``) judged from the same run's records tagged ``"role": "corollary"``.

One job per (width, seed) trains stochastic PE at ``T`` exactly as B5.3's runs do
(``config.training(width, seed, "stochastic")``) and evaluates it at ``T`` and ``k T`` on the
same fixed sequences; beside it the family's best at ``T`` (its ``α``) and that ``α``'s loss at
``k T`` (one independent draw per seed). The width B5.3's own stochastic runs train at
(``pe_dim``) is read from their records when they evaluate at ``T`` and ``k T``
(:func:`covered`): the same training, evaluation and family draws, so no job repeats them.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ...metrics import stats
from ...metrics.laws import POWER, exponent_draws
from ..base import Record
from ..select_common import (
    evaluation_loss,
    family_loss_at,
    family_record,
    fmt_mean,
    mean_estimate,
    seed_mean,
    train_and_evaluate,
)

ROLE = "corollary"
WITHIN = 1.5
"""Stochastic PE within ``1.5 x`` the trained-``α`` family at ``k T`` (B5.3's margin)."""
MIN_WIDTHS = 3
MIN_SEEDS = 4

CRITERION_COROLLARY = (
    "B5.3c (criterion version 1, written before any B5.3c data were seen): per m_p, the mean "
    "over seeds ± 2 s.e. of stochastic PE's loss at T' = k T (k = corollary_factor, 4 in every "
    "preset) over uniform attention's, and of the W = alpha I family's at the trained alpha "
    "(alpha best at T); the exponent b of loss(kT) = c m_p^b, least squares in log-log over the "
    "widths, with its bootstrap 95% interval (seeds resampled within each width): reproduced "
    "when b's upper end < 0 (the loss falls with m_p) and at every m_p stochastic's upper end "
    f"<= {WITHIN} x the trained-alpha family; not reproduced when b's lower end >= 0; "
    f"inconclusive otherwise (or with fewer than {MIN_WIDTHS} widths or {MIN_SEEDS} seeds per "
    "width). The in-distribution loss at T and the ratio out / in distribution per m_p are "
    "reported, not judged"
)


def is_corollary(record: Record) -> bool:
    return record.get("role") == ROLE


def main_records(records: list[Record]) -> list[Record]:
    """B5.3's and B5.3b's records: all but the corollary's."""
    return [r for r in records if not is_corollary(r)]


def far_length(config: Any) -> int:
    return config.corollary_factor * config.T


def covered(config: Any) -> bool:
    """Whether B5.3's stochastic runs (width ``pe_dim``) evaluate at ``T`` and ``k T``."""
    return "stochastic" in config.pes and {1, config.corollary_factor} <= set(config.factors)


def widths_to_run(config: Any) -> list[int]:
    """The widths whose jobs the corollary runs: all but the one :func:`covered` provides."""
    return [w for w in config.corollary_widths if not (w == config.pe_dim and covered(config))]


def run_width(config: Any, width: int, seed: int) -> list[Record]:
    """One job's records: stochastic PE at ``width`` evaluated at ``T`` and ``k T``, and the
    family at ``k T`` with ``α`` its best at ``T``."""
    T, far = config.T, far_length(config)
    out = train_and_evaluate(config.training(width, seed, "stochastic"), [T, far], config.eval_size)
    base = {"role": ROLE, "pe_dim": width, "seed": seed}
    records: list[Record] = []
    for row in out["eval"]:
        loss, stderr, path = evaluation_loss(row)
        records.append(
            {
                **base,
                "pe": "stochastic",
                "T": row["T"],
                "loss": loss,
                "stderr": stderr,
                "path": path,
                "uniform": row["uniform"],
                "cos": out["cos"],
            }
        )
    n = config.family_samples
    best = family_record(T, config.q, width, config.d, n, seed)
    at, at_se = family_loss_at(best["alpha"], far, config.q, width, config.d, n, seed)
    records.append(
        {
            **base,
            "pe": "family",
            "T": far,
            "uniform": out["eval"][-1]["uniform"],
            "train_alpha": best["alpha"],
            "at_train_alpha": at,
            "at_train_alpha_stderr": at_se,
            "best_at_T": best["loss"],
            "best_at_T_stderr": best["stderr"],
        }
    )
    return records


def _from_main(records: list[Record], config: Any) -> list[Record]:
    """Width ``pe_dim`` in the corollary's format, from B5.3's stochastic runs and family."""
    T, far, m = config.T, far_length(config), config.pe_dim
    main = [r for r in records if not is_corollary(r)]
    best = {r["seed"]: r["loss"] for r in main if r["pe"] == "family" and r["T"] == T}
    base = {"role": ROLE, "pe_dim": m}
    out = [{**r, **base} for r in main if r["pe"] == "stochastic" and r["T"] in (T, far)]
    out += [
        {
            **base,
            "pe": "family",
            "seed": r["seed"],
            "T": far,
            "uniform": r["uniform"],
            "at_train_alpha": r["at_train_alpha"],
            "best_at_T": best[r["seed"]],
        }
        for r in main
        if r["pe"] == "family" and r["T"] == far and r["seed"] in best
    ]
    return out


def corollary_records(records: list[Record], config: Any) -> list[Record]:
    """The records tagged for the corollary, with width ``pe_dim`` from B5.3's own runs when
    :func:`covered` and no job of that width ran."""
    tagged = [r for r in records if is_corollary(r)]
    m = config.pe_dim
    if m in config.corollary_widths and covered(config) and all(r["pe_dim"] != m for r in tagged):
        tagged += _from_main(records, config)
    return tagged


Table = dict[int, dict[str, np.ndarray]]
"""Per width, per seed (aligned): ``ood`` and ``id`` (stochastic's loss at ``k T`` and ``T``),
``family`` (at the trained ``α``, ``k T``), ``best`` (the family's best at ``T``), and the
uniform losses ``u_far``, ``u_T``."""


def table(records: list[Record], config: Any) -> Table:
    """Per width, the seeds that hold all four losses, as aligned arrays."""
    T, far = config.T, far_length(config)
    out: Table = {}
    recs = corollary_records(records, config)
    for w in sorted({r["pe_dim"] for r in recs}):
        mine = [r for r in recs if r["pe_dim"] == w]
        ind, ood, fam = (
            {r["seed"]: r for r in mine if (r["pe"], r["T"]) == key}
            for key in (("stochastic", T), ("stochastic", far), ("family", far))
        )
        seeds = sorted(set(ind) & set(ood) & set(fam))
        if not seeds:
            continue
        out[w] = {
            "ood": np.array([ood[s]["loss"] for s in seeds]),
            "id": np.array([ind[s]["loss"] for s in seeds]),
            "family": np.array([fam[s]["at_train_alpha"] for s in seeds]),
            "best": np.array([fam[s]["best_at_T"] for s in seeds]),
            "u_far": ood[seeds[0]]["uniform"],
            "u_T": ind[seeds[0]]["uniform"],
        }
    return out


def analyse(t: Table, seed: int = 0) -> dict[str, Any]:
    """Per width the seed means (``seed_mean``, relative to uniform), the out / in distribution
    ratio; the exponent ``b`` of ``loss(kT)`` (and of the family at the trained ``α``) with its
    bootstrap interval, seeds resampled within each width (``stats.resample_rows``); an exponent
    is ``None`` where a width's mean loss is 0 (a family that reaches 0 at tiny sizes)."""
    rng = np.random.default_rng(seed)
    widths = list(t)
    rows: dict[int, dict[str, Any]] = {}
    draws: dict[str, list[np.ndarray]] = {"ood": [], "family": []}
    for w in widths:
        v = t[w]
        idx = stats.resample_rows(len(v["ood"]), rng)  # one draw of seeds for every quantity
        means = {k: v[k][idx].mean(axis=1) for k in ("ood", "id", "family")}
        with np.errstate(divide="ignore", invalid="ignore"):
            low, high = stats.interval(means["ood"] / means["id"])
        rows[w] = {
            "seeds": len(v["ood"]),
            "ood": seed_mean(list(v["ood"] / v["u_far"])),
            "family": seed_mean(list(v["family"] / v["u_far"])),
            "id": seed_mean(list(v["id"] / v["u_T"])),
            "best": seed_mean(list(v["best"] / v["u_T"])),
            "ratio": stats.estimate(
                f"loss out / in distribution (m_p={w})", v["ood"].mean() / v["id"].mean(), low, high
            ),
        }
        for k in draws:
            draws[k].append(means[k])
    out: dict[str, Any] = {"rows": rows, "exponent": None, "family_exponent": None}
    for key, name in (("ood", "exponent"), ("family", "family_exponent")):
        point = np.array([t[w][key].mean() for w in widths])
        if len(widths) >= 2 and (point > 0).all():
            with np.errstate(divide="ignore", invalid="ignore"):  # a resample of zeros: nan
                slopes = exponent_draws(POWER, widths, np.column_stack(draws[key]))
            out[name] = (POWER.fit(widths, point)[1], *stats.interval(slopes))
    return out


def judge(a: dict[str, Any], k: int) -> tuple[str, str, str]:
    """The outcome, its one-sentence reason and its summary (``CRITERION_COROLLARY``)."""
    rows = a["rows"]
    seeds = min((r["seeds"] for r in rows.values()), default=0)
    if len(rows) < MIN_WIDTHS or seeds < MIN_SEEDS:
        return (
            stats.INCONCLUSIVE,
            f"needs at least {MIN_WIDTHS} widths m_p with at least {MIN_SEEDS} seeds each; got "
            f"widths {sorted(rows)} and {seeds} seeds",
            f"needs {MIN_WIDTHS} widths x {MIN_SEEDS} seeds; got {len(rows)} widths, {seeds} seeds",
        )
    if a["exponent"] is None:
        zero = f"the mean loss at T' = {k}T is 0 at some m_p: no exponent"
        return stats.INCONCLUSIVE, zero, zero
    b, low, high = a["exponent"]
    shown = f"b = {stats.fmt_interval(b, low, high)}"
    if low >= 0:
        return (
            stats.NOT_REPRODUCED,
            f"the loss at T' = {k}T does not fall with m_p: {shown}, lower end >= 0",
            stats.fitting(
                f"the loss at {k}T does not fall with m_p: {shown}",
                f"the loss at {k}T does not fall with m_p: b >= {low:.3g}",
            ),
        )
    far = [w for w, r in rows.items() if r["ood"]["high"] > WITHIN * r["family"]["mean"]]
    if high < 0 and not far:
        return (
            stats.REPRODUCED,
            f"the loss at T' = {k}T falls with m_p ({shown}) and stays within {WITHIN}x the "
            f"W = alpha I family at the trained alpha at every m_p",
            stats.fitting(
                f"the loss at {k}T falls with m_p: {shown}",
                f"the loss at {k}T falls with m_p: b <= {high:.3g}",
            ),
        )
    gaps, texts = [], []
    if high >= 0:
        gaps.append(f"{shown} reaches 0 (more seeds, or widths over a wider range, would decide)")
        texts.append([f"{shown} reaches 0", f"b's upper end {high:.3g} >= 0"])
    if far:
        settled = [w for w in far if rows[w]["ood"]["low"] > WITHIN * rows[w]["family"]["mean"]]
        need = (
            f"more seeds cannot decide it at m_p = {settled}, where it lies entirely above"
            if settled
            else "more seeds would decide"
        )
        gaps.append(
            f"stochastic PE's interval reaches above {WITHIN}x the family at the trained alpha "
            f"at m_p = {far} ({need})"
        )
        texts.append(
            [f"stochastic PE > {WITHIN}x the family at m_p={settled[0]}"]
            if settled
            else [f"stochastic's upper end > {WITHIN}x the family at m_p={far[0]}"]
        )
    both = ["; ".join(pair) for pair in itertools.product(*texts)]
    return stats.INCONCLUSIVE, "; ".join(gaps), stats.fitting(*both, texts[0][-1])


def verdict(records: list[Record], config: Any) -> dict[str, Any]:
    """The B5.3c entry without its calibration (``stats.claim`` with the companion's fields)."""
    k = config.corollary_factor
    a = analyse(table(records, config), config.seed)
    outcome, reason, summary = judge(a, k)
    estimates, parts = [], []
    for w, r in a["rows"].items():
        estimates += [
            mean_estimate(f"stochastic loss / uniform (T'={k}T, m_p={w})", r["ood"]),
            mean_estimate(
                f"family at the training alpha / uniform (T'={k}T, m_p={w})", r["family"]
            ),
        ]
        if r["family"]["mean"] > 0:
            estimates.append(
                mean_estimate(
                    f"stochastic / family at the training alpha (T'={k}T, m_p={w})",
                    r["ood"],
                    r["family"]["mean"],
                )
            )
        estimates += [
            mean_estimate(f"stochastic loss / uniform (T'=T, m_p={w})", r["id"]),
            mean_estimate(f"family's best / uniform (T'=T, m_p={w})", r["best"]),
            r["ratio"],
        ]
        parts.append(
            f"m_p={w} ({r['seeds']} seeds), loss / uniform: at {k}T stochastic "
            f"{fmt_mean(r['ood'])}, family at the trained alpha {fmt_mean(r['family'])}; at T "
            f"stochastic {fmt_mean(r['id'])}, family's best {fmt_mean(r['best'])}; loss out / in "
            "distribution "
            f"{stats.fmt_interval(r['ratio']['value'], r['ratio']['low'], r['ratio']['high'])}"
        )
    for key, name in (("exponent", "b"), ("family_exponent", "family's b")):
        if a[key] is not None:
            estimates.append(stats.estimate(f"{name} of loss(T'={k}T) = c m_p^b", *a[key]))
            parts.append(f"{name} = {stats.fmt_interval(*a[key])}")
    return stats.claim(
        outcome,
        reason,
        "; ".join(parts) if parts else "no corollary records",
        CRITERION_COROLLARY,
        estimates,
        summary=summary,
        claim="B5.3c",
        title="Out-of-distribution loss falling with the PE width",
        paper="The length-generalization corollary: the loss at unseen lengths follows the "
        "in-distribution loss as the positional-encoding width m_p grows.",
        section="the papers' claims",
        criterion_version=1,
    )
