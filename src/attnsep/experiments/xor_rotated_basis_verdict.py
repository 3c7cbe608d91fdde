"""A7.9's numbers (SPEC Part G, item 7): per ``d`` the four arms' success rates with Wilson
intervals, the MLP's rate difference and loss ratio between the tasks, the transformer's rotated
loss beside its expressivity ceiling; the finding's text and the figure's panels."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..metrics import stats
from . import plotting
from .base import Record

ARMS = (("transformer", "axis"), ("transformer", "rotated"), ("mlp", "axis"), ("mlp", "rotated"))
LOSS_KEY = {"transformer": "loss_final", "mlp": "test_loss"}


def rate(successes: int, trials: int) -> dict[str, float]:
    """``{"successes", "trials", "rate", "low", "high"}``, Wilson 95%."""
    low, high = stats.wilson(successes, trials)
    return {
        "successes": successes,
        "trials": trials,
        "rate": successes / trials,
        "low": low,
        "high": high,
    }


def newcombe(a: dict[str, float], b: dict[str, float]) -> tuple[float, float, float]:
    """``a``'s rate minus ``b``'s with Newcombe's hybrid score 95% interval (from the two Wilson
    intervals; independent replicas)."""
    return stats.rate_difference((a["rate"], a["low"], a["high"]), (b["rate"], b["low"], b["high"]))


def ratio_interval(top: list[float], bottom: list[float]) -> tuple[float, float, float]:
    """``median(top) / median(bottom)`` with its bootstrap 95% interval (each resampled)."""
    a, b = np.asarray(top, dtype=float), np.asarray(bottom, dtype=float)
    draws = stats.bootstrap([a, b], lambda s: float(np.median(s[0]) / np.median(s[1])))
    return _around(float(np.median(a) / np.median(b)), draws)


def _around(value: float, draws: np.ndarray) -> tuple[float, float, float]:
    """``value`` and the percentile interval of its bootstrap ``draws``, widened to hold it."""
    return stats.holding(value, *stats.interval(draws))


def _point(record: Record, success_loss: float) -> dict[str, Any]:
    loss = record[LOSS_KEY[record["model"]]]
    out: dict[str, Any] = {
        **rate(sum(x <= success_loss for x in loss), len(loss)),
        "loss": stats.median_interval(loss, hold=True),
    }
    if record["model"] == "transformer":
        out["one_step"] = rate(sum(x <= success_loss for x in record["loss_one_step"]), len(loss))
        out["least"] = stats.median_interval(record["loss_min"], hold=True)
    if "floor_found" in record:
        out["floor_found"] = stats.median_interval(record["floor_found"], hold=True)
        out["floor_bound"] = stats.median_interval(record["floor_bound"], hold=True)
    return out


def analyse(records: list[Record], config: Any) -> dict[int, dict[Any, Any]]:
    """Per ``d``: each arm present (``(model, task)`` -> rate, median loss with interval, and
    for the transformer its one-step rate and least loss, for its rotated arm the ceiling); and
    where both MLP arms ran, ``"mlp_difference"`` (rotated - axis, Newcombe) and
    ``"mlp_ratio"`` (median test loss rotated / axis, bootstrap)."""
    out: dict[int, dict[Any, Any]] = {}
    for r in sorted(records, key=lambda r: r["d"]):
        out.setdefault(r["d"], {})[(r["model"], r["task"])] = r
    for arms in out.values():
        raw = dict(arms)
        for arm, record in raw.items():
            arms[arm] = _point(record, config.success_loss)
        if ("mlp", "axis") in raw and ("mlp", "rotated") in raw:
            arms["mlp_difference"] = newcombe(arms[("mlp", "rotated")], arms[("mlp", "axis")])
            arms["mlp_ratio"] = ratio_interval(
                raw[("mlp", "rotated")]["test_loss"], raw[("mlp", "axis")]["test_loss"]
            )
    return out


def estimates(a: dict[int, dict[Any, Any]]) -> list[dict]:
    """Every number of :func:`analyse` as a ``stats.estimate``."""
    out = []
    for d, arms in a.items():
        for model, task in ARMS:
            p = arms.get((model, task))
            if p is None:
                continue
            label = f"{model}, {task}, d={d}"
            out.append(stats.rate_estimate(f"{label}: success rate", p["successes"], p["trials"]))
            out.append(stats.estimate(f"{label}: median loss", *p["loss"]))
            if "one_step" in p:
                s = p["one_step"]
                out.append(
                    stats.rate_estimate(f"{label}: one-step rate", s["successes"], s["trials"])
                )
            if task == "rotated" and "least" in p:
                out.append(stats.estimate(f"{label}: median least loss", *p["least"]))
            for key, name in (("floor_found", "ceiling found"), ("floor_bound", "proven bound")):
                if key in p:
                    out.append(stats.estimate(f"{label}: median {name}", *p[key]))
        if "mlp_difference" in arms:
            out.append(stats.estimate(f"mlp, d={d}: rate rotated - axis", *arms["mlp_difference"]))
            out.append(
                stats.estimate(f"mlp, d={d}: median loss rotated / axis", *arms["mlp_ratio"])
            )
    return out


def _rates(a: dict[int, dict[Any, Any]], arm: tuple[str, str]) -> str:
    return ", ".join(
        f"d={d}: {stats.fmt_interval(p['rate'], p['low'], p['high'], 2)}"
        for d, arms in a.items()
        if (p := arms.get(arm)) is not None
    )


def _transformer_clause(a: dict[int, dict[Any, Any]]) -> str | None:
    ceilings = [
        (d, arms[("transformer", "rotated")])
        for d, arms in a.items()
        if ("transformer", "rotated") in arms
    ]
    if not ceilings:
        return None
    ceiling = ", ".join(
        f"d={d}: {p['floor_found'][0]:.3g} (bound {p['floor_bound'][0]:.3g})" for d, p in ceilings
    )
    return (
        f"the transformer succeeds on the axis task at {_rates(a, ('transformer', 'axis'))} and "
        f"on the rotated task at {_rates(a, ('transformer', 'rotated'))}; on the rotated task "
        f"no attention weights reach below the median ceiling {ceiling} (least loss found over "
        "all weights, proven bound), so its failure is expressivity, not learning"
    )


def _mlp_clause(a: dict[int, dict[Any, Any]]) -> str | None:
    pairs = [(d, arms) for d, arms in a.items() if "mlp_difference" in arms]
    if not pairs:
        return None
    agree = all(arms["mlp_difference"][1] <= 0 <= arms["mlp_difference"][2] for _, arms in pairs)
    ratio = ", ".join(f"d={d}: {stats.fmt_interval(*arms['mlp_ratio'])}" for d, arms in pairs)
    return (
        f"the MLP succeeds at {_rates(a, ('mlp', 'axis'))} (axis) and "
        f"{_rates(a, ('mlp', 'rotated'))} (rotated); its rate difference's interval "
        f"{'contains 0 at every d' if agree else 'excludes 0 at some d'}, median test loss "
        f"rotated / axis {ratio}"
    )


def _span(a: dict[int, dict[Any, Any]], arm: tuple[str, str]) -> str:
    """``arm``'s lowest and highest success rate over the ``d``'s, as ``_rates`` prints them."""
    rates = sorted(p["rate"] for arms in a.values() if (p := arms.get(arm)) is not None)
    if not rates:
        return "n/a"
    low, high = f"{rates[0]:.2g}", f"{rates[-1]:.2g}"
    return low if low == high else f"{low}-{high}"


def _summary(a: dict[int, dict[Any, Any]]) -> str:
    """The finding in short, from the clauses the reason has: the transformer's success rates on
    both tasks, whether the MLP's rates differ between them."""
    pairs = [arms["mlp_difference"] for arms in a.values() if "mlp_difference" in arms]
    agree = all(low <= 0 <= high for _, low, high in pairs)
    gap = "no rate gap" if agree else "rate gap at some d"
    rates = {
        m: f"axis {_span(a, (m, 'axis'))}, rotated {_span(a, (m, 'rotated'))}" for m, _ in ARMS
    }
    texts = []
    if any(("transformer", "rotated") in arms for arms in a.values()):
        texts.append(f"transformer: {rates['transformer']}")
        if pairs:
            texts.insert(0, f"{texts[0]}; MLP: {gap}")
    elif pairs:
        texts += [f"MLP: {rates['mlp']}; {gap}", f"MLP: {gap} between the tasks"]
    else:
        return "no arm was run"
    limit = stats.SUMMARY_CHARS
    return next((t for t in texts if len(t) <= limit), stats.clipped(texts[-1], limit))


def finding(records: list[Record], config: Any, criterion: str) -> dict:
    """The A7.9 entry (``stats.FINDING``)."""
    a = analyse(records, config)
    found = estimates(a)
    clauses = [c for c in (_transformer_clause(a), _mlp_clause(a)) if c]
    reason = "; ".join(clauses) + "." if clauses else "no arm was run."
    measured = "; ".join(stats.fmt_estimate(e) for e in found)
    rule = f"{criterion} (success_loss {config.success_loss:g})"
    return stats.claim(stats.FINDING, reason, measured, rule, found, summary=_summary(a))


# --- the figure's panels ------------------------------------------------------------------------

LOG_FLOOR = 1e-3
"""On the log axis a median below this (a bound of 0) is left out, an interval end clipped."""
STYLE = {
    ("transformer", "axis"): ("o-", "C0"),
    ("transformer", "rotated"): ("o--", "C0"),
    ("mlp", "axis"): ("s-", "C1"),
    ("mlp", "rotated"): ("s--", "C1"),
}


def draw_rates(ax, a: dict[int, dict[Any, Any]]) -> None:
    """Success rates of the four arms vs ``d`` with their Wilson intervals."""
    for arm in ARMS:
        points = [(d, arms[arm]) for d, arms in a.items() if arm in arms]
        if not points:
            continue
        ds = np.array([d for d, _ in points], dtype=float)
        r = np.array([p["rate"] for _, p in points])
        bars = [[p["low"] for _, p in points], [p["high"] for _, p in points]]
        fmt, color = STYLE[arm]
        ax.errorbar(
            ds,
            r,
            yerr=plotting.bar_lengths(r, *bars),
            fmt=fmt,
            color=color,
            capsize=2,
            label=f"{arm[0]}, {arm[1]}",
        )
    ax.set_xscale("log", base=2)
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel("d")
    ax.set_ylabel("success rate (loss <= target), Wilson 95%")
    ax.legend(fontsize=7)


def draw_losses(ax, a: dict[int, dict[Any, Any]], success_loss: float) -> None:
    """Median losses vs ``d`` with bootstrap intervals, the ceiling and the success line."""
    series: list[tuple[str, tuple[str, str], str, str]] = [
        ("transformer, rotated: least loss", ("transformer", "rotated"), "least", "C0"),
        ("ceiling: least over all weights", ("transformer", "rotated"), "floor_found", "k"),
        ("ceiling: proven bound", ("transformer", "rotated"), "floor_bound", "grey"),
        ("MLP, axis: test loss", ("mlp", "axis"), "loss", "C1"),
        ("MLP, rotated: test loss", ("mlp", "rotated"), "loss", "C3"),
    ]
    for label, arm, key, color in series:
        points = [
            (d, arms[arm][key])
            for d, arms in a.items()
            if arm in arms and key in arms[arm] and arms[arm][key][0] > LOG_FLOOR
        ]
        if not points:
            continue
        ds = np.array([d for d, _ in points], dtype=float)
        shown = np.maximum(np.array([p for _, p in points], dtype=float), LOG_FLOOR)  # log axis
        v = shown[:, 0]
        bars = plotting.bar_lengths(v, shown[:, 1], shown[:, 2])
        ax.errorbar(ds, v, yerr=bars, fmt="o-", color=color, capsize=2, label=label)
    ax.axhline(success_loss, color="green", lw=0.8, ls=":", label=f"success: {success_loss:g}")
    ax.axhline(1.0, color="grey", lw=0.6, ls="-.", label="trivial predictor f = 0")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("d")
    ax.set_ylabel("loss, median over replicas (bootstrap 95%)")
    ax.legend(fontsize=6)
