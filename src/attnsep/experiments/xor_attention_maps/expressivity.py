"""A7.3c, the attention-maps experiment's finding on expressivity, from its records (SPEC Parts
E-F): the papers' maps at the sizes with ``m < d`` (A7.3's sizes before criterion version 3),
where linear and erf cannot put on one position the weight the target needs: each map's ceiling
beside its dynamics, a comparison of expressivity rather than learning.
"""

from __future__ import annotations

import math

from ...metrics import stats
from ..base import Record
from .ceiling import expressivity_bound
from .config import PAPER_MAPS, Size
from .stats import describe, size_text

Short = tuple[bool, tuple[str, str]]
"""One size in short: whether a map is capped there by expressivity, and two summaries."""

EXPRESSIVITY_RULE = (
    "a finding, not a verdict on the papers: the papers' maps at the sizes with m < d, where "
    "the scores V theta span only an m-dimensional subspace of R^d; per map its expressivity "
    "ceiling (the largest weight on one position per unit of total weight) beside its median "
    "steps to the target, specialization and collapse with 95% intervals, and the weight the "
    "target needs; a map whose ceiling's upper end is below half of it cannot reach the "
    "target at any step size (expressivity, not learning)"
)


def expressivity_finding(
    groups: dict[Size, list[Record]],
    summaries: dict[Size, dict[str, dict | None]],
    needed: dict[Size, float],
) -> dict:
    """A7.3c (SPEC Parts E-F): the papers' maps at the sizes with ``m < d``: which of them
    cannot reach the target there by expressivity, each ceiling beside its dynamics."""
    parts: list[str] = []
    sentences: list[str] = []
    estimates: list[dict] = []
    shorts: list[Short] = []  # per size: any map capped, two summaries
    for size, group in groups.items():
        paper = [r for r in group if r["attention"] in PAPER_MAPS]
        parts.append(
            f"at {size_text(size)} (the target needs a weight of {needed[size]:.3g} on one "
            "position): " + "; ".join(describe(r, summaries[size][r["attention"]]) for r in paper)
        )
        estimates += [
            e for r in paper if (s := summaries[size][r["attention"]]) for e in s["estimates"]
        ]
        sentence, short = size_sentence(size, paper, summaries[size], needed[size])
        sentences.append(sentence)
        shorts.append(short)
    reason = "; ".join(sentences)
    # the first size where a map is capped by expressivity leads, else the first size
    lead = next((texts for capped_here, texts in shorts if capped_here), shorts[0][1])
    judged = stats.claim(
        stats.FINDING,
        reason[:1].upper() + reason[1:] + ". A7.3 is judged at m >= d instead.",
        "; ".join(parts),
        EXPRESSIVITY_RULE,
        estimates,
        summary=stats.fitting(*lead, "ceilings < half the weight needed: expressivity"),
    )
    judged.update(
        claim="A7.3c",
        title="Softmax, linear and erf where linear and erf cannot represent the target (m < d)",
        paper="Beyond the papers: softmax, linear and erf at embedding widths m < d, where linear "
        "and erf cannot put on one position the weight the target needs; the papers' claim that "
        "they fail to learn is judged at m >= d (A7.3).",
        section="beyond the papers",
    )
    return judged


def ceiling_texts(
    paper: list[Record], summaries: dict[str, dict | None], needed: float
) -> tuple[list[str], list[str], list[str]]:
    """Each map with a ceiling, its ceiling beside its dynamics in words: those capped by
    expressivity (``ceiling.expressivity_bound``), the others, and the capped maps' names."""
    capped: list[str] = []
    able: list[str] = []
    bound: list[str] = []
    for r in paper:
        s = summaries[r["attention"]]
        if s is None or "ceiling" not in s:
            continue
        n = s["steps"][0]
        steps = "never" if math.isinf(n) else f"{n:g} step{'' if n == 1 else 's'}"
        text = (
            f"{r['attention']} (ceiling {stats.fmt_interval(*s['ceiling'])}; {steps}, "
            f"specialization {stats.fmt_interval(*s['specialized'])})"
        )
        if expressivity_bound(s, needed):
            capped.append(text)
            bound.append(r["attention"])
        else:
            able.append(text)
    return capped, able, bound


def size_sentence(
    size: Size, paper: list[Record], summaries: dict[str, dict | None], needed: float
) -> tuple[str, Short]:
    """A7.3c at one size: which maps cannot reach the target by expressivity and which can, in
    a sentence and in short."""
    capped, able, bound = ceiling_texts(paper, summaries, needed)
    sentence = f"at {size_text(size)}, "
    if capped:
        sentence += (
            f"{' and '.join(capped)} cannot put on one position half the "
            f"{needed:.2g} the target needs: their failure there is one of "
            "expressivity, not learning"
        )
    if able:
        sentence += f"{'; ' if capped else ''}{' and '.join(able)} can"
    half = f"half the {needed:.2g} needed"
    short = f"{', '.join(bound)} ceilings < {half}" if bound else f"no ceiling below {half}"
    return sentence, (bool(bound), (f"d={size[0]}, m={size[1]}: {short}", short))
