"""A7.3's verdict: the papers' maps judged at the sizes with ``m >= d`` by the criterion of
``Config`` (SPEC A7.3, Parts E-F), with A7.3b and A7.3c as its companion findings."""

from __future__ import annotations

import math

from ...metrics import stats
from ..base import Record
from .ceiling import expressivity_bound, needed_weight, represents
from .config import PAPER_MAPS, RIVALS, SOFTMAX, Config, Size
from .expressivity import expressivity_finding
from .finding import finding
from .stats import by_size, describe, judged, size_text, summarize

CRITERION = " ".join((Config.__doc__ or "").split("    Criterion ")[1].split())
"""The rule exactly as the config's docstring states it."""

Outcome = tuple[str, str, str]
"""A7.3's outcome at one size, its reason and its summary."""


def grid_text(config: Config, records: list[Record]) -> str:
    grid = f"eta in 10^{{{', '.join(f'{e:g}' for e in config.eta_exponents)}}}"
    screen = records[0]["screen_steps"] if records else config.budget
    budget = records[0]["budget"] if records else config.budget
    if screen < budget:
        return (
            f"{grid}, every point screened for {screen} steps, the budget of {budget} steps "
            f"run at the {config.refine} best-ranked"
        )
    return f"{grid}, every point run for the budget of {budget} steps"


def steps_text(s: dict) -> str:
    return "never" if math.isinf(s["steps"][0]) else f"{s['steps'][0]:g}"


def rate_text(s: dict) -> str:
    return stats.fmt_interval(*s["specialized"])


def label(name: str, size: Size) -> str:
    return f"{name} ({size_text(size)})"


def verdict(records: list[Record], config: Config) -> dict:
    """A7.3 on the papers' maps at the sizes with ``m >= d`` (``Config``'s criterion), with
    A7.3b and A7.3c as its companions."""
    target = records[0]["target"] if records else config.target
    groups = by_size(records)
    summaries = {
        size: {r["attention"]: summarize(r, label(r["attention"], size)) for r in group}
        for size, group in groups.items()
    }
    needed = {size: needed_weight(size[0], target) for size in groups}
    sizes_judged = [size for size in groups if judged(size)]
    measured = measured_text(groups, summaries, needed, sizes_judged)
    measured += f"; {grid_text(config, records)}"
    estimates = [
        e
        for size in sizes_judged
        for name in PAPER_MAPS
        if (s := summaries[size].get(name)) is not None
        for e in s["estimates"]
    ]
    companions = companion_findings(config, groups, summaries, needed)
    judged_at = {size: judge(summaries[size], needed[size], target) for size in sizes_judged}
    outcome, reason = combine({size: (v, why) for size, (v, why, _) in judged_at.items()})
    best_eta = {
        size_text(size): {n: (s := summaries[size].get(n)) and s["eta"] for n in PAPER_MAPS}
        for size in sizes_judged
    }
    return stats.claim(
        outcome,
        reason,
        measured,
        CRITERION,
        estimates,
        summary=brief(outcome, judged_at, summaries),
        best_eta=best_eta,
        needed_weight={size_text(size): needed[size] for size in groups},
        companions=companions,
    )


def measured_text(
    groups: dict[Size, list[Record]],
    summaries: dict[Size, dict[str, dict | None]],
    needed: dict[Size, float],
    sizes_judged: list[Size],
) -> str:
    """The papers' maps at each size judged: the weight the target needs and each map's numbers."""
    parts = []
    for size in sizes_judged:
        paper = [r for r in groups[size] if r["attention"] in PAPER_MAPS]
        parts.append(
            f"at {size_text(size)} (the target needs a weight of {needed[size]:.3g} on one "
            f"position): " + "; ".join(describe(r, summaries[size][r["attention"]]) for r in paper)
        )
    return "; ".join(parts) or "no size with m >= d was run"


def companion_findings(
    config: Config,
    groups: dict[Size, list[Record]],
    summaries: dict[Size, dict[str, dict | None]],
    needed: dict[Size, float],
) -> list[dict]:
    """A7.3b when maps beyond the papers ran at ``(d, m)``, A7.3c when a size with ``m < d``
    ran."""
    companions = []
    main = (config.d, config.m)
    if any(r["attention"] not in PAPER_MAPS for r in groups.get(main, [])):
        companions.append(finding(groups[main], summaries[main], needed[main], size_text(main)))
    shallow = {size: groups[size] for size in groups if not judged(size)}
    if shallow:
        companions.append(expressivity_finding(shallow, summaries, needed))
    return companions


def combine(outcomes: dict[Size, tuple[str, str]]) -> tuple[str, str]:
    """A7.3 over the sizes judged: not reproduced when any size is, reproduced when every size
    is, inconclusive otherwise (``Config``'s criterion)."""
    if not outcomes:
        return stats.INCONCLUSIVE, (
            "No size with m >= d was run: A7.3 is judged only where every map can put on one "
            "position all the weight its form allows (e.g. d = 64, m = 128)."
        )

    def at(verdict: str) -> list[str]:
        return [f"at {size_text(s)}: {text}" for s, (v, text) in outcomes.items() if v == verdict]

    for verdict in (stats.NOT_REPRODUCED, stats.INCONCLUSIVE):
        if at(verdict):
            also = at(stats.REPRODUCED)
            rest = (
                f" (reproduced {'; '.join(also)})" if verdict == stats.INCONCLUSIVE and also else ""
            )
            return verdict, capital("; ".join(at(verdict)) + rest)
    return stats.REPRODUCED, capital("; ".join(at(stats.REPRODUCED)))


def brief(
    outcome: str,
    judged_at: dict[Size, tuple[str, str, str]],
    summaries: dict[Size, dict[str, dict | None]],
) -> str:
    """``combine``'s reason in short: the first size that decides, or, when every size is
    reproduced, softmax's lowest specialization rate over them."""
    if not judged_at:
        return "no size with m >= d was run"
    if outcome != stats.REPRODUCED:
        (d, m), (_, _, short) = next((k, v) for k, v in judged_at.items() if v[0] == outcome)
        return stats.fitting(f"d={d}, m={m}: {short}", short)
    if len(judged_at) == 1:
        return next(iter(judged_at.values()))[2]
    lowest = min(
        s["specialized"][0] for size in judged_at if (s := summaries[size][SOFTMAX]) is not None
    )
    rivals = [name for name in RIVALS if any(name in summaries[size] for size in judged_at)]
    return stats.fitting(
        f"softmax 1 step, rate >= {lowest:.3g}; {', '.join(rivals)} >= 10x steps",
        f"softmax 1 step, rate >= {lowest:.3g}; rivals >= 10x steps",
    )


def capital(text: str) -> str:
    text = text.rstrip(".")
    return text[:1].upper() + text[1:] + "."


def judge(summaries: dict[str, dict | None], needed: float, target: float) -> Outcome:
    """A7.3's outcome at one size, its reason and its summary (``Config``'s criterion): the
    first of its cases that applies, in the criterion's order."""
    soft = summaries.get(SOFTMAX)
    rivals = {name: summaries[name] for name in RIVALS if name in summaries}
    if soft is None or not rivals:
        missing = "softmax diverged at every eta or was not run" if soft is None else "no rival"
        short = "softmax diverged or not run" if soft is None else "no rival"
        return stats.INCONCLUSIVE, f"nothing to compare: {missing}", f"nothing to compare: {short}"
    return (
        matched(soft, rivals)
        or softmax_missed(soft)
        or undecided_rival(soft, rivals, needed, target)
        or unrepresented(rivals, needed)
        or reproduced(soft, rivals, needed, target)
    )


def rate(s: dict) -> str:
    """A specialization rate in short."""
    return f"{s['specialized'][0]:.3g}"


def fast(s: dict, soft: dict) -> bool:
    """Median steps below 10x softmax's."""
    return s["steps"][0] < 10 * soft["steps"][0]


def separated(s: dict, soft: dict) -> bool:
    """A specialization Wilson interval wholly below softmax's."""
    return s["specialized"][2] < soft["specialized"][1]


def ceiling_text(s: dict) -> str:
    return stats.fmt_interval(*s["ceiling"]) if "ceiling" in s else "not measured"


def cause(name: str, s: dict, needed: float, target: float) -> str:
    """Why a rival fails: by expressivity, by learning, or either (its ceiling beside the weight
    the target needs)."""
    ceiling = ceiling_text(s)
    if "ceiling" in s and expressivity_bound(s, needed):
        return (
            f"{name} cannot reach the target by expressivity (ceiling {ceiling}, below "
            f"half the {needed:.2g} that loss <= {target:g} needs)"
        )
    if "ceiling" in s and represents(s, needed):
        return f"{name} by learning (its ceiling {ceiling} reaches the {needed:.2g} needed)"
    return (
        f"{name} by learning or expressivity (its ceiling {ceiling} does not clearly "
        f"reach the {needed:.2g} needed)"
    )


def matched(soft: dict, rivals: dict[str, dict | None]) -> Outcome | None:
    """Not reproduced: a rival as fast as softmax within 10x that specializes as often."""
    for name, s in rivals.items():
        if s is not None and fast(s, soft) and not separated(s, soft):
            return (
                stats.NOT_REPRODUCED,
                f"{name} reaches the target in a median of {steps_text(s)} steps (< 10x "
                f"softmax's {steps_text(soft)}) and specializes as often: {rate_text(s)} vs "
                f"softmax's {rate_text(soft)}",
                stats.fitting(
                    f"{name} {steps_text(s)} steps (< 10x), rate {rate(s)} vs {rate(soft)}",
                    f"{name} < 10x softmax's steps, specializes as often",
                ),
            )
    return None


def softmax_missed(soft: dict) -> Outcome | None:
    """Inconclusive: softmax itself needs more than one step or specializes below 0.9."""
    if soft["steps"][0] == 1 and soft["specialized"][0] >= 0.9:
        return None
    return (
        stats.INCONCLUSIVE,
        f"softmax misses its own part (median steps {steps_text(soft)}, specialization "
        f"{rate_text(soft)}) while neither linear nor erf matches it: more seeds would "
        "decide a rate whose interval holds 0.9, a larger step budget a median beyond it",
        f"softmax misses: median steps {steps_text(soft)}, rate {rate(soft)}",
    )


def undecided_rival(
    soft: dict, rivals: dict[str, dict | None], needed: float, target: float
) -> Outcome | None:
    """Inconclusive: a rival diverged everywhere, or only one of the rule's two parts holds."""
    for name, s in rivals.items():
        if s is None:
            return (
                stats.INCONCLUSIVE,
                f"{name} diverged at every eta of the grid: smaller step sizes would decide",
                f"{name} diverged at every eta of the grid",
            )
        if not separated(s, soft):
            return (
                stats.INCONCLUSIVE,
                f"{name} needs a median of {steps_text(s)} steps (>= 10x softmax's; "
                f"{cause(name, s, needed, target)}) but its specialization {rate_text(s)} "
                f"overlaps softmax's {rate_text(soft)}: more seeds, or a larger step budget if "
                "it is still converging, would decide",
                stats.fitting(
                    f"{name} >= 10x steps, but rate {rate(s)} overlaps {rate(soft)}",
                    f"{name} >= 10x steps, but its rate overlaps softmax's",
                ),
            )
        if fast(s, soft):
            return (
                stats.INCONCLUSIVE,
                f"{name} reaches the target in a median of {steps_text(s)} steps (< 10x "
                "softmax's) yet specializes less often with separated intervals: the rule's two "
                "parts disagree, and neither more seeds nor a larger step budget would decide",
                stats.fitting(
                    f"{name} {steps_text(s)} steps (< 10x) yet specializes less often",
                    f"{name} < 10x softmax's steps yet specializes less often",
                ),
            )
    return None


def unrepresented(rivals: dict[str, dict | None], needed: float) -> Outcome | None:
    """Inconclusive: no rival can be shown to represent the target (expressivity, not
    learning)."""
    if any(s is not None and "ceiling" in s and represents(s, needed) for s in rivals.values()):
        return None
    return (
        stats.INCONCLUSIVE,
        f"{' and '.join(rivals)} fail, but none can be shown to represent the target here "
        f"(ceilings {', '.join(f'{n} {ceiling_text(s)}' for n, s in rivals.items() if s)}; "
        f"needed {needed:.2g}): the comparison measures expressivity, not learning; a "
        "larger m would decide",
        f"no rival's ceiling shown to reach the {needed:.2g} needed",
    )


def reproduced(soft: dict, rivals: dict[str, dict | None], needed: float, target: float) -> Outcome:
    """Reproduced: softmax in one step, every rival slower by 10x and separated below it."""
    failing = "; ".join(
        f"{cause(name, s, needed, target)}: steps {steps_text(s)}, specialization {rate_text(s)}"
        for name, s in rivals.items()
        if s is not None
    )
    return (
        stats.REPRODUCED,
        f"softmax reaches loss <= {target:g} in one step and specializes at a rate of "
        f"{rate_text(soft)}, while {' and '.join(rivals)} need >= 10x the steps or never get "
        f"there and specialize less often with separated intervals: {failing}",
        stats.fitting(
            f"softmax 1 step, rate {rate(soft)}; {', '.join(rivals)} >= 10x steps",
            f"softmax 1 step, rate {rate(soft)}; rivals >= 10x steps",
        ),
    )
