"""B5.1's verdict from the records: the ratio trained / the ``W = αI`` family's best per PE width
``m_p`` with its bootstrap interval, ``cos(W, W*)``, the reported decay exponents, and B5.1b's
companion entry with its error rates (SPEC B5.1, Parts E and F)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...metrics import calibration, stats
from ..base import Record, get
from ..select_common import fmt_mean, mean_estimate, seed_mean
from . import paper
from .config import Config

NEAR = 1.1
"""Training reaches the family's optimum when trained / family's best is at most ``1.1``."""
ALIGNED = 0.98
"""``cos(W, W*)`` every seed must reach."""
MIN_SEEDS = 4

CRITERION = (
    "per m_p, the ratio trained / W = alpha I family's best of the seed means, with its "
    "bootstrap 95% interval over seeds (a seed's pair resampled together): reproduced when "
    f"every m_p's upper end <= {NEAR} and cos(W, W*) >= {ALIGNED} for every seed; not reproduced "
    f"when some m_p's lower end > {NEAR}; inconclusive otherwise or with fewer than {MIN_SEEDS} "
    "seeds per width (criterion version 3, SPEC Part F: a learning claim judged on learning; the "
    "floor's decay with m_p is a fact of the family, reported, not judged)"
)


def summarize(records: list[Record]) -> list[dict]:
    """Per ``m_p`` (ascending): the trained loss's and the family's mean over seeds with their
    intervals, the ratio trained / family's best with its bootstrap interval
    (:func:`~.paper.ratio_to_family`), and the seeds' ``(trained, family)`` pairs (B5.1's
    records; the paper setting's are left out)."""
    records = [r for r in records if not paper.is_paper_setting(r)]
    rows = []
    for m in sorted({r["pe_dim"] for r in records}):
        mine = [r for r in records if r["pe_dim"] == m]
        pairs = np.array([[r["loss"], r["family"]] for r in mine])
        rows.append(
            {
                "pe_dim": m,
                "seeds": len(mine),
                "sgd": seed_mean([r["loss"] for r in mine]),
                "family": seed_mean([r["family"] for r in mine]),
                "ratio": paper.ratio_to_family(pairs),
                "cos": seed_mean([r["cos"] for r in mine]),
                "worst_cos": min(r["cos"] for r in mine),
                "uniform": mine[0]["uniform"],
                "pairs": pairs,
            }
        )
    return rows


def decay_exponent(ms: np.ndarray, losses: np.ndarray) -> np.ndarray:
    """``β`` of ``loss ≈ c m_p^(−β)`` by least squares in log–log, for each row of ``losses``
    (``draws x widths``); ``nan`` where a loss is not positive."""
    x = np.log(ms) - np.log(ms).mean()
    with np.errstate(invalid="ignore", divide="ignore"):
        y = np.log(np.where(losses > 0, losses, np.nan))
    return -(y - y.mean(axis=-1, keepdims=True)) @ x / np.sum(x**2)


def decay(rows: list[dict], seed: int = 0) -> dict[str, tuple[float, float, float]]:
    """``β`` of the trained loss (``"sgd"``) and of the floor (``"family"``): the fit to the
    seed means and the bootstrap 95% interval over seeds, resampled within each ``m_p``
    (a seed's trained and family values together; SPEC Part E). All resamples at once, as many
    as ``stats.bootstrap`` draws (``stats.resampling``). Reported, not judged."""
    ms = np.array([r["pe_dim"] for r in rows], dtype=float)
    rng = np.random.default_rng(seed)
    drawn = np.stack(
        [r["pairs"][stats.resample_rows(len(r["pairs"]), rng)].mean(1) for r in rows], axis=1
    )  # resamples x widths x (trained, family)
    means = np.array([r["pairs"].mean(axis=0) for r in rows])
    return {
        name: (
            float(decay_exponent(ms, means[:, k])),
            *stats.interval(decay_exponent(ms, drawn[:, :, k])),
        )
        for k, name in enumerate(("sgd", "family"))
    }


def judge(rows: list[dict]) -> tuple[str, str, str]:
    """The outcome, its one-sentence reason and its summary (criterion in :class:`Config`)."""
    if not rows or min(r["seeds"] for r in rows) < MIN_SEEDS:
        seeds = min((r["seeds"] for r in rows), default=0)
        return (
            stats.INCONCLUSIVE,
            f"needs {MIN_SEEDS} seeds per width, got at least {seeds} at {len(rows)} widths",
            f"needs {MIN_SEEDS} seeds per width, got {seeds}",
        )
    far = [r["pe_dim"] for r in rows if r["ratio"][1] > NEAR]
    if far:
        return (
            stats.NOT_REPRODUCED,
            f"training stays more than {NEAR}x above the W = alpha I family's best at m_p = "
            f"{far} (lower end of the ratio's interval)",
            paper.far_summary("GD", max(rows, key=lambda r: r["ratio"][1])),
        )
    open_near = [r["pe_dim"] for r in rows if r["ratio"][2] > NEAR]
    misaligned = [r["pe_dim"] for r in rows if r["worst_cos"] < ALIGNED]
    if not (open_near or misaligned):
        worst = max(r["ratio"][0] for r in rows)
        return (
            stats.REPRODUCED,
            f"gradient descent reaches within {NEAR}x of the W = alpha I family's best at every "
            f"m_p up to {rows[-1]['pe_dim']} (upper ends of the ratio's intervals; worst ratio "
            f"{worst:.3g}) and aligns with W* (cos >= {ALIGNED}) on every seed",
            paper.near_summary("GD", worst, rows[-1]["pe_dim"]),
        )
    return undecided(rows, open_near, misaligned)


def undecided(
    rows: list[dict], open_near: list[int], misaligned: list[int]
) -> tuple[str, str, str]:
    """The inconclusive outcome: a ratio's interval across :data:`NEAR` at ``open_near``'s widths,
    or a seed below :data:`ALIGNED` at ``misaligned``'s."""
    gaps = []
    if open_near:
        gaps.append(
            f"the ratio's interval reaches above {NEAR} at m_p = {open_near} (more seeds or "
            "steps would decide)"
        )
    if misaligned:
        gaps.append(f"cos(W, W*) < {ALIGNED} for some seed at m_p = {misaligned}")
    tilted = f"cos(W, W*) < {ALIGNED} on a seed at m_p={misaligned[0]}" if misaligned else ""
    if not open_near:
        return stats.INCONCLUSIVE, "; ".join(gaps), tilted
    spans = paper.open_summary("GD", max(rows, key=lambda r: r["ratio"][2]))
    summary = stats.fitting(f"{spans}; {tilted}", spans) if tilted else spans
    return stats.INCONCLUSIVE, "; ".join(gaps), summary


def measured(rows: list[dict], records: list[Record], config: Config) -> tuple[list[dict], str]:
    """The estimates per ``m_p`` and the text of what was measured, with the reported (not
    judged) trained loss over uniform attention's and, on real runs, the decay exponents; each
    width's steps where its records say them (since version 5)."""
    estimates, parts = [], []
    steps = {r["pe_dim"]: r["steps"] for r in records if "steps" in r and "role" not in r}
    for r in rows:
        m, sgd, fam = r["pe_dim"], r["sgd"], r["family"]
        estimates += [
            stats.estimate(f"trained / family's best (m_p={m})", *r["ratio"]),
            mean_estimate(f"trained loss (m_p={m})", sgd),
            mean_estimate(f"family's best loss (m_p={m})", fam),
            mean_estimate(f"cos(W, W*) (m_p={m})", r["cos"]),
        ]
        parts.append(
            f"m_p={m} ({r['seeds']} seeds{f', {steps[m]} steps' if m in steps else ''}): "
            "trained / family's best "
            f"{stats.fmt_interval(*r['ratio'])} (bootstrap), trained {fmt_mean(sgd)}, family's "
            f"best {fmt_mean(fam)}, cos >= {r['worst_cos']:.4f}"
        )
    last = rows[-1]
    name = f"trained loss / uniform (m_p={last['pe_dim']})"
    estimates.append(mean_estimate(name, last["sgd"], last["uniform"]))
    paths = "/".join(sorted({r["path"] for r in records if "path" in r}))
    text = "; ".join(parts) + "; reported, not judged: uniform attention "
    text += f"{last['uniform']:.4g}, {name} = {fmt_mean(last['sgd'], last['uniform'])}"
    if len(rows) >= 2 and not calibration.in_simulation():
        betas = decay(rows)
        for key, label in (("family", "floor's decay exponent beta"), ("sgd", "trained beta")):
            estimates.append(stats.estimate(label, *betas[key]))
            text += f"; {label} = {stats.fmt_interval(*betas[key])}"
    text += f" (loss {paths} over the tokens, {config.eval_size} sequences per seed)"
    return estimates, text


def verdict(records: list[Record], config: Config) -> dict:
    """B5.1, with B5.1b (the paper's setting) as its companion when ``paper_widths`` is set; on
    simulated records (``calibration.in_simulation``) the companion and the reported exponents
    are left out."""
    extra: dict[str, Any] = {}
    if config.paper_widths and not calibration.in_simulation():
        entry = paper.verdict(records, config)
        entry["calibration"] = calibration.companion_rates(
            lambda: paper_calibration(records, config) if entry["estimates"] else None
        )
        extra["companions"] = [entry]
    rows = summarize(records)
    if not rows:
        return stats.claim(
            stats.INCONCLUSIVE,
            "no B5.1 records (pe_dims empty)",
            "",
            CRITERION,
            [],
            summary="no B5.1 records (pe_dims empty)",
            **extra,
        )
    outcome, reason, summary = judge(rows)
    estimates, text = measured(rows, records, config)
    return stats.claim(outcome, reason, text, CRITERION, estimates, summary=summary, **extra)


def paper_calibration(records: list[Record], config: Config) -> dict[str, Any]:
    """B5.1b's error rates (``calibration.calibrate``, the laws redrawn per simulated run), with
    B5.1's larger configs (``Experiment.larger``) to try when they miss the goals."""
    laws = calibration.redrawable(paper.hypotheses, records, config)
    larger = get("select-convergence").larger(config)
    return calibration.calibrate(paper.verdict, laws, config, larger, seed=config.seed)
