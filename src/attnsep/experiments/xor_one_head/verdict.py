"""A7.10's finding from the records: success rates, losses and best reachable losses per model,
with their intervals (SPEC A7.10; Part G, item 8)."""

from __future__ import annotations

import numpy as np

from ...metrics import stats
from ..base import Record
from .config import NAMES, Config

RULE = (
    "A7.10, a finding (no verdict): per d on A7.1's replicas and width schedule, the two-head "
    "model, one head used twice (tied) and one head, each after SPEC A5's one population step and "
    "after the step budget (later steps capped in the scores): certified success rate (SPEC A6) "
    "with Wilson 95%, mean population loss with a bootstrap 95% interval over replicas, the share "
    "of first heads on a support bit after the step, and each model's best reachable loss (tied "
    "1/2, one head 1 + 1/d, two heads 0)"
)


def mean_estimate(name: str, values: list[float]) -> dict:
    """The mean over replicas with its bootstrap 95% interval."""
    x = np.asarray(values, dtype=float)
    draws = stats.bootstrap([x], lambda s: float(s[0].mean()))
    return stats.estimate(name, *stats.holding(float(x.mean()), *stats.interval(draws)))


def best_loss(arm: str, d: int) -> float:
    """The lowest population loss the model can reach at all (the module docstring of
    ``train.tied_heads``)."""
    from ...train.tied_heads import TIED_BEST_LOSS

    return {"two": 0.0, "tied": TIED_BEST_LOSS, "one": 1 + 1 / d}[arm]


def arm_estimates(r: Record, arm: str) -> list[dict]:
    a, n, tag = r["arms"][arm], r["seeds"], f"{NAMES[arm]}, d={r['d']}"
    out = [
        stats.rate_estimate(f"success after one step ({tag})", sum(a["success1"]), n),
        stats.rate_estimate(f"success after the budget ({tag})", sum(a["success_final"]), n),
        stats.rate_estimate(
            f"first head on a support bit after one step ({tag})", sum(a["on_support1"]), n
        ),
    ]
    out += [
        mean_estimate(f"mean loss {when} ({tag})", a[key])
        for when, key in (
            ("before", "loss0"),
            ("after one step", "loss1"),
            ("after the budget", "loss_final"),
        )
    ]
    low = min(a["loss_final"])
    out.append(stats.estimate(f"lowest final loss ({tag})", low, low, low))
    best = best_loss(arm, r["d"])
    out.append(stats.estimate(f"best reachable loss ({tag})", best, best, best))
    return out


def _count(r: Record, arm: str, key: str) -> str:
    return f"{sum(r['arms'][arm][key])}/{r['seeds']}"


def _summary(rows: list[Record], solved: int) -> str:
    """The finding in short: two heads' one-step successes (the lowest and highest rate over the
    ``d``'s) against the runs the tied and the single head solve."""
    ranked = sorted(rows, key=lambda r: sum(r["arms"]["two"]["success1"]) / r["seeds"])
    low, high = (_count(r, "two", "success1") for r in (ranked[0], ranked[-1]))
    two = low if low == high else f"{low}-{high}"
    limit = stats.SUMMARY_CHARS
    texts = (
        f"two heads: {two} after one step; one head: {solved} runs",
        f"two heads: {two}; one head: {solved} runs",
    )
    return next((t for t in texts if len(t) <= limit), stats.clipped(texts[-1], limit))


def verdict(records: list[Record], config: Config) -> dict:
    rows = sorted(records, key=lambda r: r["d"])
    estimates = [e for r in rows for arm in NAMES for e in arm_estimates(r, arm)]
    measured = "; ".join(stats.fmt_estimate(e) for e in estimates)
    two = ", ".join(f"d={r['d']}: {_count(r, 'two', 'success1')}" for r in rows)
    tied_low = min(min(r["arms"]["tied"]["loss_final"]) for r in rows)
    one_after = max(float(np.mean(r["arms"]["one"]["loss1"])) for r in rows)
    solved = sum(sum(r["arms"][a]["success_final"]) for r in rows for a in ("tied", "one"))
    reason = (
        f"two heads succeed after one step in {two} replicas (m = ceil({config.schedule_scale:g} "
        f"(ln d)^2)); on the same replicas the tied head and the single head succeed in "
        f"{solved} runs after {config.budget} steps: the tied head's loss cannot fall below 1/2 "
        f"(its lowest here {tied_low:.3g}) and one head's below 1 + 1/d, and A5's step moves the "
        f"single head's weights onto one position (mean loss after it up to {one_after:.3g}), "
        "its label term having no gradient (odd moments vanish)"
    )
    summary = _summary(rows, solved)
    return stats.claim(stats.FINDING, reason, measured, RULE, estimates, summary=summary)
