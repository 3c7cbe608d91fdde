"""Each attention map's numbers with their 95% intervals (SPEC Part D: Wilson for rates, a
bootstrap over replicas for medians), and the hypotheses that measure A7.3's criterion's error
rates by simulating records at the sizes it is judged at (SPEC Parts E-F).
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any, Final, Protocol

import numpy as np

from ..metrics import calibration, stats
from .base import Record

if TYPE_CHECKING:
    from ..configs import AttentionName


class Config(Protocol):
    """What the pieces of A7.3 read of its config (``xor_attention_maps.Config``)."""

    d: int
    m: int
    seeds: int
    budget: int
    screen_steps: int | None
    target: float


SOFTMAX: Final = "softmax"
PAPER_MAPS: tuple[AttentionName, ...] = (SOFTMAX, "linear", "erf")
"""The maps the papers compare (SPEC Part E, A7.3); every other map run belongs to A7.3b."""
RIVALS = PAPER_MAPS[1:]
Size = tuple[int, int]
"""``(d, m)``: the size of a run."""


def size_of(record: Record) -> Size:
    return (record["d"], record["m"])


def size_text(size: Size) -> str:
    return f"d = {size[0]}, m = {size[1]}"


def judged(size: Size) -> bool:
    """A7.3 is judged where every map can put on one position all the weight its form allows:
    ``m >= d``, where the rows of ``V`` span ``R^d`` (SPEC Part F)."""
    return size[1] >= size[0]


def by_size(records: list[Record]) -> dict[Size, list[Record]]:
    """The records grouped by size, in the order the sizes first appear."""
    out: dict[Size, list[Record]] = {}
    for r in records:
        out.setdefault(size_of(r), []).append(r)
    return out


DESCRIBED = {
    "ceiling": "expressivity ceiling (largest weight on one position per unit of total weight)",
    "steps": "median steps to the target",
    "specialized": "specialization rate",
    "collapsed": "collapse rate",
    "final_loss": "median final loss",
    "one_step_losses": "median loss after one step",
    "one_step_specialized": "specialization rate after one step",
    "one_step_collapsed": "collapse rate after one step",
}
"""Each number of a map's summary and its label."""
TABLE = ("ceiling", "steps", "specialized", "collapsed")
"""The numbers of A7.3b's table per map."""


def replica_draws(n: int) -> np.ndarray:
    """``resamples x n`` replica indices for the bootstrap over replicas (the count of
    ``stats.bootstrap``, as ``stats.resampling`` sets it; seed 0), drawn at once and kept, so
    that every median of every map is resampled in one vectorized step."""
    return _draws(n, stats.resample_count())


@functools.lru_cache(maxsize=16)
def _draws(n: int, resamples: int) -> np.ndarray:
    return stats.resample_rows(n, np.random.default_rng(0), resamples)


def median_interval(
    values: stats.Floats, draws: np.ndarray | None = None
) -> tuple[float, float, float]:
    """``stats.median_interval`` on the kept replica draws (``replica_draws``)."""
    rows = replica_draws(len(values)) if draws is None else draws
    return stats.median_interval(values, rows=rows)


def summarize(record: Record, label: str | None = None) -> dict | None:
    """A map's numbers at its best eta with their 95% intervals (Wilson for rates, bootstrap
    over replicas for medians), with its expressivity ceiling (the record's per replica,
    ``xor_maps_ceiling``) when it has one; ``None`` when every eta diverged. ``label`` names the
    estimates (default: the map's name)."""
    best = record["best"]
    if best is None:
        return None
    n = len(best["steps"])
    rows = replica_draws(n)
    numbers = {
        "steps": median_interval([math.inf if s is None else s for s in best["steps"]], rows),
        "final_loss": median_interval(best["final_loss"], rows),
        "one_step_losses": median_interval(best["one_step_losses"], rows),
    }
    ceiling = record.get("ceiling")
    if ceiling:
        numbers["ceiling"] = median_interval(ceiling, rows if len(ceiling) == n else None)
    for key in ("specialized", "collapsed", "one_step_specialized", "one_step_collapsed"):
        numbers[key] = (sum(best[key]) / n, *stats.wilson(sum(best[key]), n))
    name = label or record["attention"]
    return {
        **numbers,
        "eta": best["eta"],
        "exponent": best["exponent"],
        "estimates": [
            stats.estimate(f"{name}: {text}", *numbers[key])
            for key, text in DESCRIBED.items()
            if key in numbers
        ],
    }


def describe(record: Record, summary: dict | None) -> str:
    name = record["attention"]
    diverged = [f"{p['exponent']:g}" for p in record["curve"] if p["diverged"]]
    tail = f" (diverged at eta = 10^{{{', '.join(diverged)}}})" if diverged else ""
    if summary is None:
        return f"{name}: diverged at every eta"
    numbers = ", ".join(
        f"{label} {stats.fmt_interval(*summary[key])}"
        for key, label in DESCRIBED.items()
        if key in summary
    )
    return f"{name} at eta = 10^{summary['exponent']:g}: {numbers}{tail}"


# --- the hypotheses of the comparison (SPEC Part E) -------------------------------------------


def hypotheses(records: list[Record], config: Config) -> calibration.Hypotheses:
    """The paper's statement and the rival at the measured effect sizes, at every size A7.3 is
    judged at (``judged``), to measure the criterion's error rates (SPEC Part E).

    Paper: softmax reaches the target in one step and specializes at its measured rates (raised
    to 0.9, the SPEC's "with high probability", where the run fell short); linear and erf never
    reach the target and specialize at their measured rates (at 0 where the run measured them at
    or above softmax's: the paper's "collapse"). Rival, at each size: of linear and erf, one
    that can represent the target there (``xor_maps_ceiling.represents``; erf, whose weights stay
    below ``1 / d``, never can) draws like softmax, the one with the higher measured
    specialization rate when both can or neither (erf on a tie); the other as in the paper.
    Noise: per replica, one-step arrival and specialization / collapse are drawn at these rates
    (binomial noise at ``config``'s seeds); a replica that misses one step takes a steps count
    resampled from the map's measured ones beyond 1 (never when there are none); each replica's
    expressivity ceiling is resampled from the measured ones.
    """
    from .xor_maps_ceiling import needed_weight, represents

    laws: dict[Size, tuple[dict[str, dict], dict[str, dict]]] = {}
    matching: dict[Size, str] = {}
    for size, group in by_size(records).items():
        if not judged(size):
            continue
        by_name = {r["attention"]: r for r in group if r["best"] is not None}
        rates = {name: measured_rates(by_name.get(name)) for name in PAPER_MAPS}
        soft = rates[SOFTMAX]
        paper = {SOFTMAX: {**soft, "one": max(soft["one"], 0.9), "spec": max(soft["spec"], 0.9)}}
        for name in RIVALS:
            r = rates[name]
            spec = r["spec"] if r["spec"] < paper[SOFTMAX]["spec"] else 0.0
            coll = min(r["coll"], 1 - spec)
            paper[name] = {**r, "one": 0.0, "later": [], "spec": spec, "coll": coll}
        needed = needed_weight(size[0], group[0]["target"])
        summaries = {name: summarize(by_name[name]) for name in RIVALS if name in by_name}
        can = {
            n: s is not None and "ceiling" in s and represents(s, needed)
            for n, s in summaries.items()
        }
        rival_name = max(RIVALS, key=lambda n: (can.get(n, False), rates[n]["spec"], n == "erf"))
        matching[size] = rival_name
        rival = {**paper, rival_name: {**paper[SOFTMAX], "ceiling": rates[rival_name]["ceiling"]}}
        laws[size] = (paper, rival)
    present = {r["attention"] for r in records}
    maps = [n for n in PAPER_MAPS if n in present]

    def simulate(which: int) -> calibration.Simulate:
        def draw(cfg: Config, rng: np.random.Generator) -> list[Record]:
            return [
                simulated_record(name, size, law[which][name], cfg, rng)
                for size, law in laws.items()
                for name in maps
            ]

        return draw

    def text(which: int) -> str:
        return "; ".join(
            f"{size_text(size)}: "
            + ", ".join(
                f"{n} one step {law[which][n]['one']:.3g}, specialization "
                f"{law[which][n]['spec']:.3g}"
                for n in maps
            )
            for size, law in laws.items()
        )

    rivals = sorted(set(matching.values()))
    return calibration.Hypotheses(
        paper=simulate(0),
        rival=simulate(1),
        paper_law=f"softmax learns in one step, linear and erf do not ({text(0)})",
        rival_law=f"{' or '.join(rivals) or 'a rival'} draws like softmax ({text(1)})",
        noise="per replica: Bernoulli one-step arrival, specialization and collapse at these "
        "rates; later arrivals and expressivity ceilings resampled from the measured ones",
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
