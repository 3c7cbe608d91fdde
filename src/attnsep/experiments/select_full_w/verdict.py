"""B5.7's verdict (SPEC Part G, item B5.7; the criterion is in ``config.Config``): GD's loss
over the ``W = αI`` family's best, and the relative curvatures ``κ`` of the full ``W``'s
off-family blocks at GD's limit, per PE width ``m_p``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...metrics import stats
from ..base import Record
from ..select_common import fmt_mean, mean_estimate, seed_mean
from ..select_convergence.paper import open_summary, ratio_to_family

NEAR = 1.1
"""GD reaches the family's best when its loss is within ``1.1 x`` it (upper end)."""
STALLED = 1.5
"""GD stalls when its loss is above ``1.5 x`` the family's best (lower end, largest ``m_p``)."""
ALIGNED_ROUNDING = 1e-10
"""The autograd check: gradients in ``W[:, :d]`` and ``W_xp`` at most this share of ``W_pp``'s."""
MIN_SEEDS = 4
OFF_FAMILY = ("symmetric", "antisymmetric", "content")
BLOCKS = ("scale", *OFF_FAMILY)
STABLE = 2.0
"""A GD step multiplies a perturbation along a block by ``1 - rho``: it decays iff
``0 < rho < 2``."""

CRITERION = (
    "per m_p, the ratio of the seed means GD's loss / the W = alpha I family's best (exact over "
    "the tokens, bootstrap 95% interval over seeds, pairs resampled together) and, per "
    "off-family block of the full W (symmetric traceless W_pp, antisymmetric W_pp, W_xp), the "
    "relative curvature kappa = Hessian eigenvalue / L''(alpha) at GD's limit (mean over seeds, "
    f"bootstrap 95%): reproduced when every m_p's ratio upper end <= {NEAR}, every kappa's "
    "lower end > 0 (a minimum of the full W: cos(W, W*) = 1 on GD's path) and GD's step is "
    f"stable on every block (rho = lr_per_dim x curvature, upper end < {STABLE:g}: a perturbed "
    f"run returns to W*); not reproduced when the ratio's lower end > {STALLED} at the largest "
    "m_p or some kappa's upper end < 0 (a saddle: perturbed GD leaves W*); inconclusive "
    f"otherwise, with fewer than {MIN_SEEDS} seeds per width, when some rho's upper end >= "
    f"{STABLE:g} (the rate is at fault), or when the autograd check of the reduction finds a "
    f"gradient in W[:, :d] or W_xp above {ALIGNED_ROUNDING:g} of W_pp's (SPEC Part G, B5.7; the "
    "stability condition added after the first standard run of master seed 0)"
)


def mean_interval(values: list[float], seed: int = 0) -> tuple[float, float, float]:
    """Mean over seeds with its bootstrap 95% interval (seeds resampled)."""
    x = np.asarray(values, dtype=float)
    if len(x) < 2:
        return float(x.mean()), float(x.mean()), float(x.mean())
    draws = stats.bootstrap([x], lambda s: float(s[0].mean()), seed=seed)
    return stats.holding(float(x.mean()), *stats.interval(draws))


def kappas(record: Record) -> dict[str, float]:
    """The off-family curvatures over the scale's ``L''(α)``."""
    bends = record["curvature"]
    return {block: bends[block] / bends["scale"] for block in OFF_FAMILY}


def rho(record: Record, block: str) -> float:
    """GD's step times the block's curvature (``lr_per_dim x m_p x`` the Frobenius one)."""
    return float(record["lr_per_dim"] * record["curvature"][block])


def summarize(records: list[Record]) -> list[dict[str, Any]]:
    """Per ``m_p`` (ascending): seeds, GD's loss and the family's (mean ± 2 s.e.), their ratio
    (bootstrap), ``α`` over the family's, each block's ``κ`` (bootstrap), the worst autograd
    share and the stopping rules."""
    rows = []
    for m in sorted({r["pe_dim"] for r in records}):
        at = [r for r in records if r["pe_dim"] == m]
        checks = [max(r["check"]["columns"], r["check"]["content"]) for r in at]
        rows.append(
            {
                "pe_dim": m,
                "seeds": len(at),
                "gd": seed_mean([r["loss"] for r in at]),
                "family": seed_mean([r["family"] for r in at]),
                "ratio": ratio_to_family(np.array([[r["loss"], r["family"]] for r in at])),
                "alpha": seed_mean([r["alpha"] / r["family_alpha"] for r in at]),
                "kappa": {b: mean_interval([kappas(r)[b] for r in at]) for b in OFF_FAMILY},
                "rho": {b: mean_interval([rho(r, b) for r in at]) for b in BLOCKS},
                "scale": seed_mean([r["curvature"]["scale"] for r in at]),
                "check": max(checks),
                "plain": float(np.mean([r["check"]["content_plain"] for r in at])),
                "budget": sum(r["rule"] == "budget" for r in at),
                "cos": min(r["cos"] for r in at),
                "uniform": at[0]["uniform"],
            }
        )
    return rows


def judge(rows: list[dict[str, Any]]) -> tuple[str, str, str]:
    """The outcome, its reason and its summary (:data:`CRITERION`)."""
    if not rows or min(r["seeds"] for r in rows) < MIN_SEEDS:
        seeds = min((r["seeds"] for r in rows), default=0)
        return (
            stats.INCONCLUSIVE,
            f"needs {MIN_SEEDS} seeds per width, got at least {seeds} at {len(rows)} widths",
            f"needs {MIN_SEEDS} seeds per width, got {seeds}",
        )
    broken = [r["pe_dim"] for r in rows if not r["check"] <= ALIGNED_ROUNDING]
    if broken:
        return (
            stats.INCONCLUSIVE,
            f"the autograd check finds a gradient in W[:, :d] or W_xp above {ALIGNED_ROUNDING:g} "
            f"of W_pp's at m_p = {broken}: the reduction to W = alpha W* does not hold there",
            f"autograd finds W_xp or W[:, :d] gradients at m_p={broken[0]}",
        )
    contradicted = not_reproduced(rows)
    if contradicted:
        return contradicted
    unstable = [
        f"{b} at m_p={r['pe_dim']}" for r in rows for b in BLOCKS if r["rho"][b][2] >= STABLE
    ]
    far = [r["pe_dim"] for r in rows if r["ratio"][2] > NEAR]
    flat = [f"{b} at m_p={r['pe_dim']}" for r in rows for b in OFF_FAMILY if r["kappa"][b][1] <= 0]
    if not (far or flat or unstable):
        return reproduced(rows)
    return undecided(rows, far, flat, unstable)


def not_reproduced(rows: list[dict[str, Any]]) -> tuple[str, str, str] | None:
    """The contradicting outcome: a negative curvature's interval on an off-family block at some
    ``m_p`` (a saddle), or GD's ratio above :data:`STALLED` at the largest ``m_p``; else
    ``None``."""
    last = rows[-1]
    saddles = [
        f"{b} at m_p={r['pe_dim']}" for r in rows for b in OFF_FAMILY if r["kappa"][b][2] < 0
    ]
    if not (last["ratio"][1] > STALLED or saddles):
        return None
    why = [f"the full W's Hessian is negative ({', '.join(saddles)})"] if saddles else []
    if last["ratio"][1] > STALLED:
        why.append(
            f"GD stays {stats.fmt_interval(*last['ratio'])} x the family's best at m_p = "
            f"{last['pe_dim']} (lower end > {STALLED})"
        )
    stalled = f"GD >= {last['ratio'][1]:.3g}x the family's best at m_p={last['pe_dim']}"
    stalled = stats.fitting(f"{stalled} (> {STALLED})", stalled)
    summary = f"a saddle: negative curvature, {saddles[0]}" if saddles else stalled
    return stats.NOT_REPRODUCED, "; ".join(why), summary


def reproduced(rows: list[dict[str, Any]]) -> tuple[str, str, str]:
    """The agreeing outcome, with the worst ratio, the smallest curvature's lower end and the
    largest ``ρ``'s upper end."""
    last = rows[-1]
    worst = max(r["ratio"][0] for r in rows)
    smallest = min(r["kappa"][b][1] for r in rows for b in OFF_FAMILY)
    return (
        stats.REPRODUCED,
        f"population GD on the full W reaches within {NEAR}x of the family's best at every "
        f"m_p up to {last['pe_dim']} (worst ratio {worst:.4g}) on W = alpha W* (cos 1), and "
        f"its limit is a minimum of the full W (every relative curvature's lower end > 0, "
        f"smallest {smallest:.3g}) that GD's step keeps stable (largest rho "
        f"{max(r['rho'][b][2] for r in rows for b in BLOCKS):.3g} < {STABLE:g})",
        stats.fitting(
            f"GD within {NEAR}x of the floor to m_p={last['pe_dim']}, a stable minimum",
            f"GD within {NEAR}x of the family's best to m_p={last['pe_dim']}",
        ),
    )


def undecided(
    rows: list[dict[str, Any]], far: list[int], flat: list[str], unstable: list[str]
) -> tuple[str, str, str]:
    """The inconclusive outcome: a ratio's interval above :data:`NEAR` (``far``), a curvature's
    interval reaching 0 (``flat``) or an unstable step (``unstable``); what would decide each."""
    gaps, texts = [], []
    if far:
        gaps.append(
            f"the ratio's interval reaches above {NEAR} at m_p = {far} (more seeds would decide)"
        )
        texts.append(open_summary("GD", max(rows, key=lambda r: r["ratio"][2])))
    if flat:
        gaps.append(
            f"a curvature's interval reaches 0 ({', '.join(flat)}): more seeds would decide"
        )
        texts.append(f"curvature's interval reaches 0: {flat[0]}")
    if unstable:
        gaps.append(
            f"GD's step is unstable (rho >= {STABLE:g}) on {', '.join(unstable)}: a lower "
            "lr_per_dim would decide"
        )
        texts.append(f"GD's step unstable (rho >= {STABLE:g}): {unstable[0]}")
    return stats.INCONCLUSIVE, "; ".join(gaps), stats.fitting("; ".join(texts), texts[0])


def verdict(records: list[Record], config: Any) -> dict[str, Any]:
    rows = summarize(records)
    outcome, reason, summary = judge(rows)
    estimates, parts = [], []
    for r in rows:
        m = r["pe_dim"]
        estimates += [
            stats.estimate(f"GD / family's best (m_p={m})", *r["ratio"]),
            mean_estimate(f"GD's loss (m_p={m})", r["gd"]),
            mean_estimate(f"family's best loss (m_p={m})", r["family"]),
            mean_estimate(f"GD's alpha / family's alpha (m_p={m})", r["alpha"]),
        ]
        estimates += [stats.estimate(f"kappa {b} (m_p={m})", *r["kappa"][b]) for b in OFF_FAMILY]
        estimates += [stats.estimate(f"rho {b} (m_p={m})", *r["rho"][b]) for b in BLOCKS]
        kappa = ", ".join(f"{b} {stats.fmt_interval(*r['kappa'][b])}" for b in OFF_FAMILY)
        parts.append(
            f"m_p={m} ({r['seeds']} seeds, {r['budget']} at the step budget): GD "
            f"{fmt_mean(r['gd'])}, family's best {fmt_mean(r['family'])}, ratio "
            f"{stats.fmt_interval(*r['ratio'])}, alpha / family's {fmt_mean(r['alpha'])}, "
            f"L''(alpha) {fmt_mean(r['scale'])}, kappa: {kappa}; largest rho "
            f"{max(r['rho'][b][0] for b in BLOCKS):.3g}; cos(W, W*) {r['cos']:.6g}; "
            f"autograd share in W[:, :d], W_xp {r['check']:.2g} (mirrored tokens; "
            f"{r['plain']:.2g} without: sampling noise)"
        )
    paths = sorted({r["path"] for r in records})
    measured = "; ".join(parts) + (f" (path: {'; '.join(paths)})" if paths else "")
    measured = measured or "no records"
    return stats.claim(outcome, reason, measured, CRITERION, estimates, summary=summary)
