"""A3's verdict from the records: per size the conditioned replicas, their largest deviation and
the control's smallest, judged against ``CRITERION`` (SPEC A3; Part G, item 3)."""

from __future__ import annotations

import numpy as np

from ...metrics import stats
from ..base import Record
from .config import Config

TOLERANCE = 1e-9
"""Reproduced at or below: ``4.5e6`` units of float64 rounding (``2^-52``) on quantities of
order 1 (losses ``<= 2``, attention weights in ``[0, 1]``)."""
MISMATCH = 1e-6
"""Not reproduced above: the size of a real mismatch (the control's smallest deviation in the
runs is ``1e-4`` at ``eta_scale = 1``)."""
CONDITIONED = 1e-12
"""A replica is *conditioned* when its rounding twin stays within this: the trajectory
amplifies a one-ulp start by at most about ``4500``, so a rounding-level deviation of the CLS
path stays far below ``TOLERANCE``; chaotic trajectories (oscillating, collapsed replicas) are
reported and left out."""
MIN_CONDITIONED = 0.5
"""The share of conditioned replicas (per size) below which a size cannot decide."""

CRITERION = (
    "on the conditioned replicas (rounding twin, one ulp off at the start, within 1e-12 of the "
    "query-vector trajectory): reproduced when every size has >= half its replicas conditioned, "
    "the largest deviation D (loss and attention, absolute, over all steps) is <= 1e-9 (4.5e6 "
    "float64 rounding units) and the control (W_Q and W_K trained) deviates by > 1e-6 on every "
    "conditioned replica; not reproduced when some conditioned replica has D > 1e-6; "
    "inconclusive otherwise"
)


def label(r: Record) -> str:
    return f"d={r['d']}, m={r['m']}, {r['loss']}"


def analyse(r: Record) -> dict:
    """One size's numbers: the conditioned replicas, their largest deviation and the control's
    smallest, each with its bootstrap 95% interval over the conditioned replicas."""
    dev, twin, control = (np.asarray(r[k], dtype=float) for k in ("dev", "twin", "control"))
    cond = twin <= CONDITIONED
    out: dict = {"n": int(cond.sum()), "seeds": len(dev), "chaotic_max_dev": None}
    if (~cond).any():
        out["chaotic_max_dev"] = float(dev[~cond].max())
    if not cond.any():
        return out
    for key, values, largest in (("max_dev", dev[cond], True), ("control", control[cond], False)):
        out[key] = extreme(values, largest)
    return out


def extreme(values: np.ndarray, largest: bool) -> tuple[float, float, float]:
    """The largest (or smallest) value and its bootstrap 95% interval over replicas (the
    interval's far end is the value itself: no resample exceeds it)."""

    def pick(draw: list[np.ndarray]) -> float:
        return float(draw[0].max() if largest else draw[0].min())

    value = pick([values])
    return stats.holding(value, *stats.interval(stats.bootstrap([values], pick)))


def estimates_of(r: Record, a: dict) -> list[dict]:
    out = [stats.rate_estimate(f"conditioned share ({label(r)})", a["n"], a["seeds"])]
    if a["n"]:
        out.append(stats.estimate(f"largest deviation D ({label(r)})", *a["max_dev"]))
        out.append(stats.estimate(f"control's smallest deviation ({label(r)})", *a["control"]))
    return out


def _decide(rows: list[tuple[Record, dict]]) -> tuple[str, str, str]:
    """The verdict, its reason and the reason in short (``CRITERION``)."""
    judged = [(r, a) for r, a in rows if a["n"]]
    worst = max(judged, key=lambda p: p[1]["max_dev"][0], default=None)
    if worst is not None and worst[1]["max_dev"][0] > MISMATCH:
        dev = f"{worst[1]['max_dev'][0]:.2g} > {MISMATCH:g}"
        return (
            stats.NOT_REPRODUCED,
            f"at {label(worst[0])} a conditioned replica deviates by {dev}: the CLS block does "
            "not train like the query-vector model",
            stats.fitting(f"deviation {dev} at {label(worst[0])}", f"a replica deviates by {dev}"),
        )
    few = [label(r) for r, a in rows if a["n"] < max(1, MIN_CONDITIONED * a["seeds"])]
    if few or worst is None:
        return (
            stats.INCONCLUSIVE,
            f"fewer than half the replicas are conditioned at {', '.join(few)}: a smaller "
            "eta_scale or fewer steps keep the trajectories away from chaos and would decide",
            stats.several(
                few,
                "under half the replicas conditioned at {}",
                "under half the replicas conditioned at {} sizes",
            )
            if few
            else "fewer than half the replicas are conditioned",
        )
    weak = min(judged, key=lambda p: p[1]["control"][0])
    top = worst[1]["max_dev"][0]
    control = f"{weak[1]['control'][0]:.2g}"
    if top > TOLERANCE:
        return (
            stats.INCONCLUSIVE,
            f"the largest deviation {top:.2g} (at {label(worst[0])}) is above {TOLERANCE:g} but "
            f"not above {MISMATCH:g}",
            f"largest deviation {top:.2g} > {TOLERANCE:g} but not > {MISMATCH:g}",
        )
    if weak[1]["control"][0] <= MISMATCH:
        return (
            stats.INCONCLUSIVE,
            f"deviations stay <= {top:.2g}, but the control deviates by only {control} at "
            f"{label(weak[0])}: the steps there could not show a mismatch; a smaller eta_scale "
            "or more steps would",
            stats.fitting(
                f"control deviates by only {control} at {label(weak[0])}",
                f"the control deviates by only {control} <= {MISMATCH:g}",
            ),
        )
    return (
        stats.REPRODUCED,
        f"on {sum(a['n'] for _, a in judged)} conditioned replicas over {len(rows)} sizes and "
        f"losses the largest deviation of loss and attention is {top:.2g} <= {TOLERANCE:g}, "
        f"while the control (W_Q and W_K trained) deviates by >= {control}",
        f"largest deviation {top:.2g} <= {TOLERANCE:g}; control's >= {control}",
    )


def verdict(records: list[Record], config: Config) -> dict:
    rows = [(r, analyse(r)) for r in sorted(records, key=lambda r: (r["loss"], r["d"]))]
    estimates = [e for r, a in rows for e in estimates_of(r, a)]
    measured = "; ".join(
        f"{label(r)}: {a['n']}/{a['seeds']} conditioned"
        + ("" if a["chaotic_max_dev"] is None else f" (chaotic max D {a['chaotic_max_dev']:.2g})")
        for r, a in rows
    )
    measured += "; " + "; ".join(
        stats.fmt_estimate(e) for e in estimates if "share" not in e["name"]
    )
    verdict_, reason, summary = _decide(rows)
    criterion = CRITERION + f" ({config.steps} steps of eta = {config.eta_scale:g} d^2 ln d)"
    return stats.claim(verdict_, reason, measured, criterion, estimates, summary=summary)
