"""A7.3b, the attention-maps experiment's finding beyond the papers, from its records (SPEC
Part E): which property of the attention map decides whether GD learns sparse XOR. Per map its
expressivity ceiling, steps to the target and specialization with their intervals, and one
sentence naming the property (or pair of properties) that separates the maps that learn from
those that fail, with softmax's temperature sweep beside it. The properties are the ones each map
declares where it is registered (``attention.Properties``: normalized, shift-invariant, tails)
and one measured at the run's ``(d, m)``: whether the map's expressivity ceiling reaches the
weight on one position that the target needs.
"""

from __future__ import annotations

import itertools
import math

from ...metrics import stats
from ..base import Record
from .config import PAPER_MAPS
from .stats import DESCRIBED, TABLE, describe

PHRASES = {
    "normalized": ("normalized weights", "unnormalized weights"),
    "shift-invariant": ("shift invariance", "no shift invariance"),
    "light tails": ("light tails", "heavy tails"),
    "full support": ("full support", "sparse support"),
    "ceiling >= needed": ("a ceiling that reaches the needed weight", "a ceiling below it"),
}
"""Each tested property in words: (had, lacked)."""
TERSE = {
    "normalized": ("normalized", "unnormalized"),
    "ceiling >= needed": ("ceiling >= needed", "ceiling < needed"),
}
"""Shorter words for a summary, where ``PHRASES``' are long."""

FINDING_RULE = (
    "a finding, not a verdict on the papers: per map (the papers' and the others run) its "
    "expressivity ceiling, median steps to the target, specialization and collapse with 95% "
    "intervals; a map learns when its median steps' upper end is finite (the target reached "
    "in most replicas), fails when the lower end is infinite (never reached), else is "
    "undecided; among the maps at their own scale (softmax at other temperatures aside), a "
    "property (normalized, shift-invariant, light tails, full support, as each map declares "
    "them, or a ceiling whose lower end reaches the weight the target needs) singles out the "
    "maps that learn when every map that learns has it and every map that fails lacks it, or "
    "the reverse; when no single property does, the pairs of conditions (each property had or "
    "lacked) that every map that learns meets and every map that fails misses are named; when "
    "none is, the property or pair with the fewest exceptions, with its exceptions; each "
    "temperature of softmax is compared with softmax at its own scale (learns or not, and its "
    "steps interval separated above or below softmax's)"
)

Condition = tuple[str, bool]
"""One property and the value a description asks of it."""


def learns(s: dict | None) -> bool | None:
    """True (reaches the target, interval-wise), False (never does), ``None`` undecided."""
    if s is None:
        return False
    if math.isfinite(s["steps"][2]):
        return True
    return False if math.isinf(s["steps"][1]) else None


def declared(name: str) -> dict[str, bool]:
    """The properties map ``name`` declares (``attention.PROPERTIES``), as the table's booleans;
    empty for a name the registry does not hold."""
    from ... import attention

    props = attention.PROPERTIES.get(name)
    if props is None:
        return {}
    return {
        "normalized": props.normalized,
        "shift-invariant": props.shift_invariant,
        "light tails": props.tails != "heavy",
        "full support": props.tails != "zero",
    }


def base_of(name: str) -> str | None:
    """The map whose scores ``name`` rescales (a temperature of it), ``None`` for a map at its
    own scale."""
    from ... import attention

    props = attention.PROPERTIES.get(name)
    return None if props is None else props.base


def traits(name: str, s: dict | None, needed: float) -> dict[str, bool | None]:
    """The properties A7.3b tests for map ``name``: those it declares and whether its ceiling
    reaches the weight the target needs (``None`` when its interval straddles it)."""
    out: dict[str, bool | None] = dict(declared(name))
    if s is not None and "ceiling" in s:
        reaches = s["ceiling"][1] >= needed
        out["ceiling >= needed"] = (
            True if reaches else (False if s["ceiling"][2] < needed else None)
        )
    return out


def exceptions(
    desc: tuple[Condition, ...], groups: dict[bool, list[str]], table: dict[str, dict]
) -> list[str]:
    """The maps ``desc`` misplaces: a learner lacking one of its values (or undecided on it), a
    failer that does not definitely lack one."""

    def has(name: str) -> bool:
        return all(table[name].get(p) is v for p, v in desc)

    def lacks(name: str) -> bool:
        return any(table[name].get(p) is (not v) for p, v in desc)

    return [n for n in groups[True] if not has(n)] + [n for n in groups[False] if not lacks(n)]


def phrase(desc: tuple[Condition, ...], words: dict[str, tuple[str, str]] = PHRASES) -> str:
    return " and ".join(
        words.get(p, PHRASES.get(p, (p, f"no {p}")))[0 if v else 1] for p, v in desc
    )


def singled_out(groups: dict[bool, list[str]], table: dict[str, dict]) -> list[str]:
    """The properties (in words) that every map of one group has and no map of the other has."""
    names = {p for name in groups[True] + groups[False] for p in table[name]}
    return [
        phrase(((p, have),))
        for p in sorted(names)
        for have in (True, False)
        if not exceptions(((p, have),), groups, table)
    ]


def separation(groups: dict[bool, list[str]], table: dict[str, dict]) -> tuple[str, str]:
    """What separates the maps that learn (``groups[True]``) from those that fail, in words
    (``FINDING_RULE``): single properties, else pairs, else the closest with its exceptions;
    and the same in short (a summary)."""
    found = singled_out(groups, table)
    if len(found) == 1:
        return f"{found[0]} singles them out", stats.fitting(
            f"{found[0]} singles out the maps that learn", f"{found[0]} singles them out"
        )
    if found:
        return (
            f"{' and '.join(found)} single them out (confounded in these maps: the data cannot "
            "tell them apart)",
            stats.fitting(
                f"{' and '.join(found)} single them out",
                "confounded properties single out the maps that learn",
            ),
        )
    names = sorted({p for name in groups[True] + groups[False] for p in table[name]})
    conditions = [(p, v) for p in names for v in (True, False)]
    pairs = [(a, b) for a, b in itertools.combinations(conditions, 2) if a[0] != b[0]]
    exact = [pair for pair in pairs if not exceptions(pair, groups, table)]
    if exact:
        which = " or ".join(phrase(pair) for pair in exact)
        return (
            f"no single property separates them; together {which} single out the maps that learn"
            + (" (confounded in these maps)" if len(exact) > 1 else ""),
            stats.fitting(
                f"together {which} single them out",
                *([f"{phrase(exact[0], TERSE)} single them out"] if len(exact) == 1 else []),
                "a pair of properties singles out the maps that learn",
            ),
        )
    ranked: list[tuple[int, int, tuple[Condition, ...]]] = [
        (len(exceptions(d, groups, table)), len(d), d) for d in [(a,) for a in conditions]
    ]
    ranked += [(len(exceptions(d, groups, table)), 2, d) for d in pairs]
    fewest = min(r[0] for r in ranked)
    closest = [d for n, _, d in sorted(ranked, key=lambda r: r[:2]) if n == fewest][:2]
    text = "; ".join(
        f"{phrase(d)} holds for the maps that learn and not for those that fail except "
        f"{', '.join(exceptions(d, groups, table))}"
        for d in closest
    )
    return (
        f"no single property or pair of properties separates them; the closest: {text}",
        "no single property or pair separates learners from failers",
    )


def temperatures(names: list[str], summaries: dict[str, dict | None]) -> str:
    """One clause per temperature run of a map: learns or not and how fast against the map at
    its own scale (``FINDING_RULE``); empty when none was run."""
    parts = []
    for name in names:
        base = base_of(name)
        if base is None:
            continue
        s, ref = summaries[name], summaries.get(base)
        outcome = {True: "learns", False: "fails", None: "is undecided"}[learns(s)]
        steps = "" if s is None else f" (steps {stats.fmt_interval(*s['steps'])})"
        if base not in summaries or learns(s) is None or learns(ref) is None:
            parts.append(f"{name} {outcome}{steps}")
            continue
        if learns(s) != learns(ref):
            relation = f"unlike {base}, whose properties it shares"
        elif s is not None and ref is not None and s["steps"][1] > ref["steps"][2]:
            relation = f"more slowly than {base}"
        elif s is not None and ref is not None and s["steps"][2] < ref["steps"][1]:
            relation = f"faster than {base}"
        else:
            relation = f"as {base} does"
        parts.append(f"{name} {outcome}{steps} {relation}")
    return "; ".join(parts)


def finding(
    records: list[Record], summaries: dict[str, dict | None], needed: float, where: str
) -> dict:
    """A7.3b (SPEC Part E, beyond the papers): the table per map at one size (``where``, in
    words) and one sentence naming the property the data single out, then the temperature
    sweep."""
    names = [r["attention"] for r in records]
    undeclared = [n for n in names if not declared(n)]  # registered without ``Properties``
    own = [n for n in names if base_of(n) is None and n not in undeclared]
    decided = {name: learns(summaries[name]) for name in own}
    groups = {side: [n for n in own if decided[n] is side] for side in (True, False)}
    table = {name: traits(name, summaries[name], needed) for name in names}
    undecided = [n for n in own if decided[n] is None]
    rest = aside(names, undecided, undeclared, summaries)
    reason, summary = outcome(groups, table, summaries, rest, where, records[0]["target"])
    judged = stats.claim(
        stats.FINDING,
        reason,
        measured(records, summaries, needed, where),
        FINDING_RULE,
        table_estimates(names, summaries),
        summary=summary,
    )
    judged.update(
        claim="A7.3b",
        title="Which property of the attention map matters (beyond the papers)",
        paper="Beyond the papers: substitutes for softmax that keep some of its properties and "
        "drop others (normalized or not, shift-invariant or not, light, heavy or zero tails), "
        "and softmax at other temperatures; which property, or the expressivity ceiling, "
        "decides whether GD learns sparse XOR.",
        section="beyond the papers",
        properties=table,
    )
    return judged


def measured(
    records: list[Record], summaries: dict[str, dict | None], needed: float, where: str
) -> str:
    """What A7.3b measured: the maps beyond the papers at ``where``, and the weight needed."""
    extra = [r for r in records if r["attention"] not in PAPER_MAPS]
    text = f"at {where}: " + "; ".join(describe(r, summaries[r["attention"]]) for r in extra)
    return text + f"; the weight on one position that the target needs: {needed:.3g}"


def table_estimates(names: list[str], summaries: dict[str, dict | None]) -> list[dict]:
    """A7.3b's table as estimates: each map's numbers of ``TABLE``."""
    return [
        stats.estimate(f"{name}: {DESCRIBED[key]}", *s[key])
        for name in names
        if (s := summaries[name]) is not None
        for key in TABLE
    ]


def brief(names: list[str], summaries: dict[str, dict | None]) -> str:
    """The maps ``names`` in short: steps and ceiling each (or diverged)."""

    def one(name: str) -> str:
        s = summaries[name]
        if s is None:
            return f"{name} (diverged)"
        ceiling = stats.fmt_interval(*s["ceiling"]) if "ceiling" in s else "not measured"
        return f"{name} (steps {stats.fmt_interval(*s['steps'])}, ceiling {ceiling})"

    return ", ".join(map(one, names))


def aside(
    names: list[str],
    undecided: list[str],
    undeclared: list[str],
    summaries: dict[str, dict | None],
) -> str:
    """The reason's tail: the undecided maps, the temperature sweep and the maps left out."""
    rest = f"; undecided: {brief(undecided, summaries)}" if undecided else ""
    swept = temperatures(names, summaries)
    rest += f"; at other temperatures: {swept}" if swept else ""
    if undeclared:
        rest += f"; left out (no properties declared): {brief(undeclared, summaries)}"
    return rest


def outcome(
    groups: dict[bool, list[str]],
    table: dict[str, dict],
    summaries: dict[str, dict | None],
    rest: str,
    where: str,
    target: float,
) -> tuple[str, str]:
    """A7.3b's reason and summary: what separates the maps that learn from those that fail, or
    that every decided map falls on one side."""
    if not groups[True] or not groups[False]:
        side = "reaches" if groups[True] else "fails to reach"
        reason = (
            f"At {where} every decided map {side} loss <= {target:g}, so no property separates "
            "them: "
            f"{brief(groups[True] + groups[False], summaries)}{rest}."
        )
        return reason, f"every decided map {side} loss <= {target:g}"
    learners, failers = groups[True], groups[False]
    separates, summary = separation(groups, table)
    reason = (
        f"At {where} {brief(learners, summaries)} "
        f"reach{'es' if len(learners) == 1 else ''} loss "
        f"<= {target:g} and {brief(failers, summaries)} never "
        f"do{'es' if len(failers) == 1 else ''}: {separates}{rest}."
    )
    return reason, summary
