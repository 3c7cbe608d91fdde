"""The hypotheses that measure A7.3's criterion's error rates by simulating records at the sizes
it is judged at (SPEC Parts E-F): the paper's statement and the rival at the measured effect
sizes."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...metrics import calibration
from ..base import Record
from .ceiling import needed_weight, represents
from .config import PAPER_MAPS, RIVALS, SOFTMAX, Config, Size
from .stats import by_size, judged, size_text, summarize

Law = dict[str, dict]
"""Each map's rates at one size (``measured_rates``' keys)."""


def hypotheses(records: list[Record], config: Config) -> calibration.Hypotheses:
    """The paper's statement and the rival at the measured effect sizes, at every size A7.3 is
    judged at (``judged``), to measure the criterion's error rates (SPEC Part E).

    Paper: softmax reaches the target in one step and specializes at its measured rates (raised
    to 0.9, the SPEC's "with high probability", where the run fell short); linear and erf never
    reach the target and specialize at their measured rates (at 0 where the run measured them at
    or above softmax's: the paper's "collapse"). Rival, at each size: of linear and erf, one
    that can represent the target there (``ceiling.represents``; erf, whose weights stay
    below ``1 / d``, never can) draws like softmax, the one with the higher measured
    specialization rate when both can or neither (erf on a tie); the other as in the paper.
    Noise: per replica, one-step arrival and specialization / collapse are drawn at these rates
    (binomial noise at ``config``'s seeds); a replica that misses one step takes a steps count
    resampled from the map's measured ones beyond 1 (never when there are none); each replica's
    expressivity ceiling is resampled from the measured ones.
    """
    laws: dict[Size, tuple[Law, Law]] = {}
    matching: dict[Size, str] = {}
    for size, group in by_size(records).items():
        if judged(size):
            laws[size], matching[size] = size_laws(size, group)
    present = {r["attention"] for r in records}
    maps = [n for n in PAPER_MAPS if n in present]
    rivals = sorted(set(matching.values()))
    return calibration.Hypotheses(
        paper=simulator(laws, maps, 0),
        rival=simulator(laws, maps, 1),
        paper_law=f"softmax learns in one step, linear and erf do not ({law_text(laws, maps, 0)})",
        rival_law=f"{' or '.join(rivals) or 'a rival'} draws like softmax "
        f"({law_text(laws, maps, 1)})",
        noise="per replica: Bernoulli one-step arrival, specialization and collapse at these "
        "rates; later arrivals and expressivity ceilings resampled from the measured ones",
    )


def size_laws(size: Size, group: list[Record]) -> tuple[tuple[Law, Law], str]:
    """The paper's and the rival's laws at one judged size, and the rival that draws like
    softmax there (``hypotheses``)."""
    by_name = {r["attention"]: r for r in group if r["best"] is not None}
    rates = {name: measured_rates(by_name.get(name)) for name in PAPER_MAPS}
    paper = paper_laws(rates)
    rival_name = matching_rival(size, group, by_name, rates)
    rival = {**paper, rival_name: {**paper[SOFTMAX], "ceiling": rates[rival_name]["ceiling"]}}
    return (paper, rival), rival_name


def paper_laws(rates: Law) -> Law:
    """The paper's statement: softmax in one step at a rate of at least 0.9, linear and erf
    never, specializing below softmax (``hypotheses``)."""
    soft = rates[SOFTMAX]
    paper = {SOFTMAX: {**soft, "one": max(soft["one"], 0.9), "spec": max(soft["spec"], 0.9)}}
    for name in RIVALS:
        r = rates[name]
        spec = r["spec"] if r["spec"] < paper[SOFTMAX]["spec"] else 0.0
        coll = min(r["coll"], 1 - spec)
        paper[name] = {**r, "one": 0.0, "later": [], "spec": spec, "coll": coll}
    return paper


def matching_rival(size: Size, group: list[Record], by_name: dict[str, Record], rates: Law) -> str:
    """The rival that draws like softmax at ``size``: one that can represent the target there,
    the higher measured specialization rate among equals, erf on a tie (``hypotheses``)."""
    needed = needed_weight(size[0], group[0]["target"])
    summaries = {name: summarize(by_name[name]) for name in RIVALS if name in by_name}
    can = {
        n: s is not None and "ceiling" in s and represents(s, needed) for n, s in summaries.items()
    }
    return max(RIVALS, key=lambda n: (can.get(n, False), rates[n]["spec"], n == "erf"))


def simulator(
    laws: dict[Size, tuple[Law, Law]], maps: list[str], which: int
) -> calibration.Simulate:
    """Records drawn from the paper's (``which = 0``) or the rival's (1) laws at every size."""

    def draw(cfg: Config, rng: np.random.Generator) -> list[Record]:
        return [
            simulated_record(name, size, law[which][name], cfg, rng)
            for size, law in laws.items()
            for name in maps
        ]

    return draw


def law_text(laws: dict[Size, tuple[Law, Law]], maps: list[str], which: int) -> str:
    """The paper's (``which = 0``) or the rival's (1) rates in words, per size."""
    return "; ".join(
        f"{size_text(size)}: "
        + ", ".join(
            f"{n} one step {law[which][n]['one']:.3g}, specialization {law[which][n]['spec']:.3g}"
            for n in maps
        )
        for size, law in laws.items()
    )


def measured_rates(record: Record | None) -> dict[str, Any]:
    """A map's measured per-replica rates: reached in one step, specialized, collapsed, and
    its steps counts beyond 1 (``None``: never reached); a map that diverged everywhere never
    reaches the target and never specializes."""
    if record is None:
        return {"one": 0.0, "spec": 0.0, "coll": 0.0, "later": [None], "ceiling": []}
    best = record["best"]
    n = len(best["steps"])
    return {
        "one": sum(s == 1 for s in best["steps"]) / n,
        "spec": sum(best["specialized"]) / n,
        "coll": sum(best["collapsed"]) / n,
        "later": [s for s in best["steps"] if s != 1],
        "ceiling": list(record.get("ceiling") or []),
    }


def simulated_record(
    name: str, size: Size, law: dict[str, Any], config: Config, rng: np.random.Generator
) -> Record:
    """One map's record at ``size`` and ``config``'s seeds, budget and target, drawn from
    ``law``'s rates."""
    n = config.seeds
    later = law["later"] or [None]
    steps = [1 if u < law["one"] else later[int(rng.integers(len(later)))] for u in rng.random(n)]
    steps = [None if s is None or s > config.budget else s for s in steps]
    kind = rng.random(n)
    specialized = (kind < law["spec"]).tolist()
    collapsed = ((kind >= law["spec"]) & (kind < law["spec"] + law["coll"])).tolist()
    final = [0.0 if s is not None else 1.0 for s in steps]
    best = {
        "exponent": 0.0,
        "eta": 1.0,
        "steps": steps,
        "final_loss": final,
        "one_step_losses": [0.0 if s == 1 else 1.0 for s in steps],
        "specialized": specialized,
        "collapsed": collapsed,
        "one_step_specialized": specialized,
        "one_step_collapsed": collapsed,
    }
    ceiling = law["ceiling"]
    return {
        "attention": name,
        "d": size[0],
        "m": size[1],
        "ceiling": [ceiling[int(i)] for i in rng.integers(len(ceiling), size=n)] if ceiling else [],
        "budget": config.budget,
        "screen_steps": min(config.screen_steps or config.budget, config.budget),
        "target": config.target,
        "curve": [],
        "best": best,
    }
