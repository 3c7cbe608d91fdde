"""A7.5b — how ``n*`` grows with ``d`` (SPEC A7.5, Part F), a *finding* beside A7.5a from the
same run: the paper remarks in passing that empirically ``O(d)`` samples suffice, far fewer than
Corollary 3's ``d^4 polylog d``. Reported, not judged: the one-step ``n*(d)`` exponent with its
interval per width and success definition (sizes from ``surrogate_from`` on come from the
Gaussian surrogate, validated against exact sampling only at ``d <= SURROGATE_VALIDATED``), and
``n*(d)`` after a few gradient-descent steps on the same ``n`` samples by exact sampling, fitted as
``c d`` against ``c d^2`` (``multistep``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ...metrics import stats
from ...metrics.stats import fmt_interval, fmt_number
from .. import plotting
from ..base import Record
from . import multistep
from .search import analyse, series

SURROGATE_VALIDATED = 256
"""The largest ``d`` at which the surrogate was checked against exact sampling
(``docs/surrogate.md``)."""
LEAD = ("test", "fixed")
"""The series the reason leads with: test accuracy (the paper's experiments report it) at the
fixed width."""
RELATED = (
    "one large gradient step needing n ~ d^2 samples to learn several directions is known "
    "behaviour (Dandi et al. 2023, 'How two-layer neural networks learn, one (giant) step at a "
    "time'); the paper's 'empirically O(d)' remark concerns trained models, which the multi-step "
    "measurement approaches"
)
RULE = (
    "A7.5b, a finding (no verdict on the paper: its 'empirically O(d)' is a remark in passing): "
    "n*(d), the smallest half-octave n whose success rate reaches the target times the "
    "population rate on the same replicas, on the replicas that are not stuck (stuck: succeed in "
    "population, fail at every n tried; their rate reported with its Wilson interval), by test "
    "accuracy and by certified success; after ONE step at the fixed width and along m(d) (from "
    "surrogate_from on by the Gaussian surrogate), and after multistep_steps GD steps of eta/steps "
    "each on the same n samples (exact sampling, fixed width); reported: n* per d with bootstrap "
    "95% intervals, the exponent of n* = c d^alpha with its interval, and for the multi-step n* "
    "the held-out relative errors of c d and c d^2 fitted on the smaller half of the d's (mean "
    "|ln(predicted / measured)| over the larger half), with an interval on their difference"
)


def widths(records: list[Record]) -> list[str]:
    """The widths of the one-step searches, in the order of first appearance."""
    return list(dict.fromkeys(r["width"] for r in records if r.get("steps", 1) == 1))


def one_step(records: list[Record], config: Any) -> dict[tuple[str, str], dict[str, Any]]:
    """``search.analyse`` of every one-step series, by (definition, width)."""
    return {
        (outcome, width): analyse(series(records, width, outcome), config)
        for width in widths(records)
        for outcome in ("test", "certified")
    }


def finding(records: list[Record], config: Any) -> dict[str, Any]:
    """The A7.5b entry (``stats.FINDING``): ``measured`` and ``estimates`` per series, the
    reason in a few clauses (the lead exponents, the multi-step fit, the surrogate's range, the
    related work)."""
    estimates: list[dict] = []
    measured = []
    series_fits = one_step(records, config)
    for (outcome, width), a in series_fits.items():
        label = f"{outcome}, {width} width"
        estimates += [
            stats.estimate(f"n* ({label}, d={int(d)})", n, lo, hi)
            for d, n, lo, hi in zip(a["d"], a["n"], a["low"], a["high"], strict=True)
        ]
        estimates.append(stats.estimate(f"exponent alpha ({label})", *a["alpha"]))
        measured.append(_measured(label, a))
    fits = {o: multistep.fit(records, config, o) for o in (multistep.REPORTED, "certified")}
    for outcome, fitted in fits.items():
        if fitted is not None:
            estimates += multistep.estimates(fitted, outcome)
            measured.append(multistep.describe(fitted, outcome))
    measured.append(surrogate_range(records))
    return stats.claim(
        stats.FINDING,
        _reason(series_fits, fits[multistep.REPORTED], records),
        "; ".join(measured),
        RULE,
        estimates,
        summary=_summary(series_fits.get(LEAD), fits[multistep.REPORTED]),
    )


def surrogate_range(records: list[Record]) -> str:
    """Which one-step sizes come from the surrogate, and how far it was validated."""
    surrogated = sorted({r["d"] for r in records if r.get("gradient") == "surrogate"})
    if not surrogated:
        return "every n* by exact sampling"
    return (
        f"one-step n* at d >= {surrogated[0]} from the Gaussian surrogate of the empirical "
        f"gradient, validated against exact sampling only at d <= {SURROGATE_VALIDATED} "
        "(docs/surrogate.md); larger sizes rest on the surrogate"
    )


def _reason(
    series_fits: dict[tuple[str, str], dict[str, Any]],
    steps: dict[str, Any] | None,
    records: list[Record],
) -> str:
    parts = []
    lead = series_fits.get(LEAD)
    if lead is not None and lead["d"]:
        span = f"d = {int(lead['d'][0])}..{int(lead['d'][-1])}"
        others = ", ".join(
            f"{fmt_interval(*a['alpha'])} ({o}, {w} width)"
            for (o, w), a in series_fits.items()
            if (o, w) != LEAD
        )
        parts.append(
            f"after one empirical step n* grows like d^alpha with alpha = "
            f"{fmt_interval(*lead['alpha'])} (test accuracy, fixed width, {span}; {others})"
        )
    if steps is not None:
        parts.append(_steps_clause(steps))
    parts.append(surrogate_range(records))
    parts.append(RELATED)
    return "; ".join(parts) + "."


SHORT_LAWS = {"paper": "c d better", "rival": "c d^2 better", "neither": "neither law better"}
"""``_better``'s outcome in a summary's words."""


def _summary(lead: dict[str, Any] | None, steps: dict[str, Any] | None) -> str:
    """``_reason`` in short: the lead and multi-step exponents, and which law the held-out
    errors favour."""
    one = fmt_number(lead["alpha"][0]) if lead and lead["d"] else None
    if steps is None:
        return f"after one step n* ~ d^alpha, alpha = {one}" if one else "no n* series fitted"
    many, k = fmt_number(steps["alpha"][0]), steps["steps"]
    if one:
        text = f"alpha {one} (one step), {many} ({k} GD steps)"
    else:
        text = f"after {k} GD steps n* ~ d^alpha, alpha = {many}"
    law = SHORT_LAWS.get(_better(steps) or "")
    return stats.fitting(f"{text}; {law}", text) if law else text


def _better(a: dict[str, Any]) -> str | None:
    """Which law predicts the larger ``d``'s of the multi-step ``n*`` better held out:
    ``paper`` (c d), ``rival`` (c d^2), ``neither`` (not interval-separated), ``None`` when
    not fitted."""
    held = a["held_out"]
    if not held or held["paper"] is None:
        return None
    diff = held["difference"]
    if diff["low"] is not None and diff["low"] > 0:
        return "paper"
    if diff["high"] is not None and diff["high"] < 0:
        return "rival"
    return "neither"


def _steps_clause(a: dict[str, Any]) -> str:
    span = f"d = {int(a['d'][0])}..{int(a['d'][-1])}"
    text = (
        f"after {a['steps']} GD steps of eta/{a['steps']} each on the same n samples (exact "
        f"sampling, {span}) alpha = {fmt_interval(*a['alpha'])}"
    )
    better = _better(a)
    if better is None:
        return text
    verdict = {
        "paper": "c d predicts the larger d's better",
        "rival": "c d^2 predicts the larger d's better",
        "neither": "neither law predicts the larger d's interval-separated better",
    }[better]
    held = a["held_out"]
    return (
        f"{text}; held out, c d's relative error {multistep.interval_text(held['paper'])} against "
        f"c d^2's {multistep.interval_text(held['rival'])}: {verdict}"
    )


def _measured(label: str, a: dict[str, Any]) -> str:
    values = ", ".join(
        f"{int(d)}: {fmt_interval(n, lo, hi)}"
        for d, n, lo, hi in zip(a["d"], a["n"], a["low"], a["high"], strict=True)
    )
    stuck = ", ".join(f"{s['stuck']}/{s['trials']}" for s in a["stuck"])
    return f"{label}: n* by d {values} (stuck by d: {stuck}); alpha = {fmt_interval(*a['alpha'])}"


FIGURE = "finite_samples_growth.png"
"""A7.5b's figure, drawn with A7.5a's (``figure.figure``) and named in the entry."""


def figure(records: list[Record], config: Any, out: Path) -> Path:
    """Left: the one-step ``n*(d)`` per width and success definition, with ``d^1`` and ``d^2``
    slopes. Right: ``n*(d)`` after a few GD steps (``multistep.panel``)."""
    path = out / FIGURE
    with plotting.figure(path, ncols=2) as (_, (left, right)):
        _growth_panel(left, records, config)
        multistep.panel(right, records, config)
    return path


def _growth_panel(ax, records: list[Record], config: Any) -> None:
    pivot = None
    for (outcome, width), a in one_step(records, config).items():
        ds, n = np.array(a["d"]), np.array(a["n"])
        found = np.isfinite(n)
        if not found.any():
            continue
        high = np.where(np.isinf(a["high"]), 2 * n, a["high"])
        ax.errorbar(
            ds[found],
            n[found],
            yerr=plotting.bar_lengths(n[found], np.array(a["low"])[found], high[found]),
            fmt=("o" if outcome == "test" else "s") + ("-" if width == "fixed" else "--"),
            capsize=2,
            label=f"{outcome}, {width} width",
        )
        pivot = pivot or (ds[found][0], n[found][0], ds.max())
    if pivot:
        d0, n0, top = pivot
        grid = np.geomspace(d0, top, 32)
        for slope, style in ((1, ":"), (2, "-.")):
            ax.plot(grid, n0 * (grid / d0) ** slope, style, color="grey", label=f"d^{slope}")
    if pivot and pivot[2] > SURROGATE_VALIDATED:
        ax.axvline(SURROGATE_VALIDATED, color="grey", lw=0.6)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel(f"d (one step; surrogate validated to d = {SURROGATE_VALIDATED})")
    ax.set_ylabel("n* after one step, bootstrap 95%")
    ax.legend(fontsize=7)
