"""A claim judged on several master seeds, and the one verdict published for it (SPEC Part E).

``attnsep reproduce --replicate N`` (or ``--seeds``) judges every entry on each seed on its own.
:func:`combine` publishes, per entry, the verdict reached on at least ``REPLICATION_SHARE`` of
the seeds (4 of 5); a claim reaching none is ``unstable``, and its reason names the seeds of
each verdict, the opening of each dissenting seed's reason and the estimate that varies most
between them. A check publishes its agreed outcome, else the worst one (``check failed`` before
``not checked``). Each entry keeps ``replication``: the seeds, their verdicts and the agreement.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..configs import REPLICATION_FIRST_SEED, REPLICATION_MAX, REPLICATION_SHARE
from ..core.validate import require, shown

INCOMPLETE = "incomplete"
REASON_CHARS = 240
"""How much of a dissenting seed's reason an unstable entry quotes."""


def seeds_for(
    seed: int | None, seeds: Sequence[int] | None, replicate: int | None
) -> list[int] | None:
    """The master seeds a replicated reproduction judges: ``seeds`` as given, or ``replicate``
    consecutive ones from ``seed`` (default ``REPLICATION_FIRST_SEED``); ``None``: one run."""
    if seeds is None and replicate is None:
        return None
    require(seeds is None or replicate is None, "give seeds or replicate, not both")
    if seeds is not None:
        listed = isinstance(seeds, list | tuple) and all(
            isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds
        )
        require(listed, f"seeds must be a list of whole numbers >= 0, got {shown(seeds)}")
        require(seed is None, "give seed or seeds, not both")
        distinct = len(set(seeds)) == len(seeds)
        require(
            distinct and 2 <= len(seeds) <= REPLICATION_MAX,
            f"seeds must be 2 to {REPLICATION_MAX} distinct master seeds, got {shown(seeds)}",
        )
        return list(seeds)
    valid = isinstance(replicate, int) and not isinstance(replicate, bool)
    require(
        valid and 2 <= replicate <= REPLICATION_MAX,  # type: ignore[operator]
        f"replicate must be a whole number from 2 to {REPLICATION_MAX}, got {shown(replicate)}",
    )
    start = REPLICATION_FIRST_SEED if seed is None else seed
    return list(range(start, start + replicate))  # type: ignore[operator]


def needed(n: int) -> int:
    """Seeds that must agree for a verdict to be published: ``REPLICATION_SHARE`` of ``n``."""
    return math.ceil(REPLICATION_SHARE * n - 1e-9)


def combine(runs: Sequence[tuple[int, list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    """One published entry per claim id from each seed's entries (``(seed, claims)`` in the
    seeds' order; every seed judges the same entries)."""
    from ..metrics import stats  # numpy: not for the command line's start-up

    seeds = [seed for seed, _ in runs]
    out = []
    for ident in [entry["claim"] for entry in runs[0][1]]:
        entries = [next(e for e in claims if e["claim"] == ident) for _, claims in runs]
        verdicts = [e["verdict"] for e in entries]
        published, agreeing = publish(verdicts, entries[0]["kind"])
        base = next((e for e in entries if e["verdict"] == published), entries[0])
        entry = {**base, "verdict": published, "kind": stats.kind_of(published)}
        if published == stats.UNSTABLE:
            entry["kind"] = "claim"
            entry["reason"] = unstable_reason(seeds, entries)
            entry["summary"] = unstable_summary(verdicts)
        entry["replication"] = {
            "seeds": seeds,
            "verdicts": verdicts,
            "agreement": f"{agreeing}/{len(seeds)}",
            "agreeing": agreeing,
            "needed": needed(len(seeds)),
        }
        out.append(entry)
    return out


def publish(verdicts: list[str], kind: str) -> tuple[str, int]:
    """The published verdict of an entry of ``kind`` reached as ``verdicts`` on the seeds, and
    how many seeds reached it."""
    from ..metrics import stats

    if INCOMPLETE in verdicts:
        return INCOMPLETE, verdicts.count(INCOMPLETE)
    top, count = Counter(verdicts).most_common(1)[0]
    if count >= needed(len(verdicts)) or kind == "finding":
        return top, count
    if kind == "check":
        worst = next(v for v in (stats.CHECK_FAILED, stats.NOT_CHECKED) if v in verdicts)
        return worst, verdicts.count(worst)
    return stats.UNSTABLE, count


def unstable_summary(verdicts: list[str]) -> str:
    """An unstable entry in short: how many seeds reached each verdict (``reproduced 2,
    inconclusive 3 of 5 seeds``)."""
    from ..metrics.stats import SUMMARY_CHARS, clipped

    counts = ", ".join(f"{v} {n}" for v, n in Counter(verdicts).most_common())
    return clipped(f"{counts} of {len(verdicts)} seeds", SUMMARY_CHARS)


def unstable_reason(seeds: list[int], entries: list[dict[str, Any]]) -> str:
    """Which seeds reached which verdict, the opening of each reason that differs from the most
    common verdict's (the size and quantity that decided that seed), and the estimate varying
    most between the seeds."""
    from ..metrics.stats import clipped

    by_verdict: dict[str, list[int]] = {}
    for seed, entry in zip(seeds, entries, strict=True):
        by_verdict.setdefault(entry["verdict"], []).append(seed)
    shown_seeds = "; ".join(
        f"{verdict} on seed{'s' if len(s) > 1 else ''} {', '.join(map(str, s))}"
        for verdict, s in by_verdict.items()
    )
    text = f"unstable: {shown_seeds} (a verdict needs {needed(len(seeds))} of {len(seeds)} seeds)"
    common = max(by_verdict, key=lambda verdict: len(by_verdict[verdict]))
    for seed, entry in zip(seeds, entries, strict=True):
        if entry["verdict"] != common:
            text += f"; seed {seed} ({entry['verdict']}): {clipped(entry['reason'], REASON_CHARS)}"
    varying = most_varying(entries)
    if varying:
        name, values = varying
        listed = ", ".join(f"{v:.3g}" for v in values)
        text += f"; varies most: {name} ({listed} on seeds {', '.join(map(str, seeds))})"
    return text


def most_varying(entries: list[dict[str, Any]]) -> tuple[str, list[float]] | None:
    """The estimate every one of ``entries`` reports whose values differ most between them,
    relative to their intervals' mean half-width (else to their mean size)."""
    best: tuple[float, str, list[float]] | None = None
    by_name = [{x["name"]: x for x in e.get("estimates", [])} for e in entries]
    for name in by_name[0]:
        found = [estimates.get(name) for estimates in by_name]
        values = [_number(x and x.get("value")) for x in found]
        if any(v is None for v in values):
            continue
        kept = [v for v in values if v is not None]
        widths = [_half_width(x) for x in found if x is not None]
        scale = sum(widths) / len(widths) or sum(map(abs, kept)) / len(kept) or 1.0
        spread = (max(kept) - min(kept)) / scale
        if spread > 0 and (best is None or spread > best[0]):
            best = (spread, name, kept)
    return None if best is None else (best[1], best[2])


def _half_width(estimate: dict[str, Any]) -> float:
    """Half the width of an estimate's interval (0 without a finite one)."""
    low, high = _number(estimate.get("low")), _number(estimate.get("high"))
    return (high - low) / 2 if low is not None and high is not None else 0.0


def _number(value: Any) -> float | None:
    """``value`` as a finite float, else ``None``."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None
