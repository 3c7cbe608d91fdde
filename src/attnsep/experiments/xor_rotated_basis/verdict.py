"""A7.9's finding (SPEC Part G, item 7): per ``d`` the four arms' success rates with Wilson
intervals, the MLP's rate difference and loss ratio between the tasks, the transformer's rotated
loss beside its expressivity ceiling."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...metrics import stats
from ..base import Record

CRITERION = (
    "A7.9, a finding (negative control, no verdict): per d, success (population loss <= "
    "success_loss; the MLP's on fresh test inputs) of the transformer (one step of SPEC A5's eta, "
    "then GD) and of a two-layer ReLU MLP (Gaussian first layer, online SGD) on the axis task "
    "y = -x_i x_j and the rotated task y = -<u,x><v,x>, Gaussian inputs; rates with Wilson 95% "
    "intervals; the MLP's rate difference rotated - axis (Newcombe) and median test-loss ratio "
    "(bootstrap over replicas); the transformer's least rotated loss beside its expressivity "
    "ceiling (least loss over all attention weights found, and the proven bound 1 - 4U^2 + U^4)"
)

ARMS = (("transformer", "axis"), ("transformer", "rotated"), ("mlp", "axis"), ("mlp", "rotated"))
LOSS_KEY = {"transformer": "loss_final", "mlp": "test_loss"}


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
        **stats.rate_record(sum(x <= success_loss for x in loss), len(loss)),
        "loss": stats.median_interval(loss, hold=True),
    }
    if record["model"] == "transformer":
        one_step = sum(x <= success_loss for x in record["loss_one_step"])
        out["one_step"] = stats.rate_record(one_step, len(loss))
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


def verdict(records: list[Record], config: Any) -> dict:
    """The A7.9 entry (``stats.FINDING``)."""
    a = analyse(records, config)
    found = estimates(a)
    clauses = [c for c in (_transformer_clause(a), _mlp_clause(a)) if c]
    reason = "; ".join(clauses) + "." if clauses else "no arm was run."
    measured = "; ".join(stats.fmt_estimate(e) for e in found)
    rule = f"{CRITERION} (success_loss {config.success_loss:g})"
    return stats.claim(stats.FINDING, reason, measured, rule, found, summary=_summary(a))
