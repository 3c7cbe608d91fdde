"""A7.5b's multi-step measurement (SPEC A7.5, Part F; beyond the papers): ``n*(d)`` when the
model takes a few gradient-descent steps on ``n`` fixed samples instead of one, by exact
sampling (``sample_steps.SampleDescent``), with the one-step case's search and success
definitions (``search``), fitted as ``c d`` against ``c d^2``.

The paper's "empirically ``O(d)``" concerns trained models; one large step needing ``n ~ d^2`` is
known behaviour of one-step learning, so this is where the remark can be measured. Records are
the one-step ones' with ``"steps"`` set (``search.series(..., steps=...)`` picks them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...configs import MAX_DATA_ELEMENTS, OneStepConfig
from ...metrics import growth, stats
from ...metrics.laws import FixedPower
from ...metrics.stats import fmt_interval
from ..base import Record
from .search import OUTCOMES, analyse, search_record, series

LINEAR, QUADRATIC = FixedPower(1.0), FixedPower(2.0)
"""The two laws fitted to the multi-step ``n*``: ``c d`` (the paper's remark) and ``c d^2``."""
REPORTED = "test"
"""The success definition the finding leads with (A7.5b's: test accuracy); certified beside."""
MIN_SIZES = 3
"""Fewest values of ``d`` for the held-out comparison (one fitted, two judged at least)."""


@dataclass(frozen=True)
class Search:
    """What ``search`` reads for the multi-step searches (``SearchConfig``)."""

    target: float
    n_start_per_d: float
    seed: int
    seeds: int
    n_max: int
    d_values: list[int] = field(default_factory=list)

    def n_limit(self, d: int) -> int:
        """``n_max``, and at most ``MAX_DATA_ELEMENTS / d`` (one replica's set is held)."""
        return max(1, min(self.n_max, MAX_DATA_ELEMENTS // d))


def seeds_at(config: Any, d: int) -> int:
    """Replicas of the multi-step search at ``d``: ``multistep_seeds_by_d`` where given."""
    return int(config.multistep_seeds_by_d.get(d, config.multistep_seeds))


def search_of(config: Any, d: int) -> Search:
    return Search(
        target=config.target,
        n_start_per_d=config.multistep_n_start_per_d,
        seed=config.seed,
        seeds=seeds_at(config, d),
        n_max=config.multistep_n_max,
        d_values=[d],
    )


def run(config: Any) -> list[Record]:
    """Per ``d`` of ``multistep_d_values``: the population steps and one search per success
    definition on ``multistep_steps`` steps at the fixed width, their probes shared."""
    from ...train.sample_steps import SampleDescent

    records = []
    for d in config.multistep_d_values:
        one = OneStepConfig(
            d=d, m=config.m, seeds=seeds_at(config, d), seed=config.seed, device=config.device
        )
        descent = SampleDescent(
            one, config.multistep_steps, config.test_samples, config.test_accuracy
        )
        seen: dict[int | None, dict[str, np.ndarray]] = {}

        def at(n: int | None, descent=descent, seen=seen) -> dict[str, np.ndarray]:
            if n not in seen:
                seen[n] = descent.outcomes(n)
            return seen[n]

        record: Record = {
            "d": d,
            "m": one.m,
            "width": "fixed",
            "steps": config.multistep_steps,
            "eta": descent.eta,
            "gradient": "exact-samples",
        }
        for outcome in OUTCOMES:

            def evaluate(n: int, o: str = outcome, at=at) -> np.ndarray:
                return at(n)[o]

            record[outcome] = search_record(evaluate, at(None)[outcome], d, search_of(config, d))
        records.append(record)
    return records


def steps_of(records: list[Record]) -> int | None:
    """The steps of the run's multi-step records (``None``: it has none)."""
    return next((int(r["steps"]) for r in records if r.get("steps", 1) > 1), None)


def fit(records: list[Record], config: Any, outcome: str = REPORTED) -> dict[str, Any] | None:
    """``n*`` per ``d`` of the multi-step searches (``search.analyse``: stuck replicas
    apart), the exponent of ``n* = c d^alpha`` with its bootstrap interval, and, from
    ``MIN_SIZES`` values of ``d``, the held-out relative errors of ``c d`` and ``c d^2`` fitted on
    the smaller half and their difference (``growth.held_out_errors``); ``None`` without
    multi-step records."""
    steps = steps_of(records)
    if steps is None:
        return None
    a = analyse(series(records, "fixed", outcome, steps), config)
    a["steps"] = steps
    a["held_out"] = None
    if len(a["d"]) >= MIN_SIZES:
        draws = np.column_stack(a["draws"])
        a["held_out"] = growth.held_out_errors(LINEAR, QUADRATIC, a["d"], a["n"], draws)
    return a


def estimates(a: dict[str, Any], outcome: str) -> list[dict]:
    """The fit's numbers as report estimates."""
    label = f"{a['steps']} GD steps, {outcome}"
    out = [
        stats.estimate(f"n* ({label}, d={int(d)})", n, lo, hi)
        for d, n, lo, hi in zip(a["d"], a["n"], a["low"], a["high"], strict=True)
    ]
    out += [
        stats.rate_estimate(f"stuck rate ({label}, d={int(d)})", s["stuck"], s["trials"])
        for d, s in zip(a["d"], a["stuck"], strict=True)
        if s["trials"]
    ]
    out.append(stats.estimate(f"exponent alpha ({label})", *a["alpha"]))
    held = a["held_out"]
    if held and held["paper"] is not None:
        out += [
            {**held["paper"], "name": f"c d held-out relative error ({label})"},
            {**held["rival"], "name": f"c d^2 held-out relative error ({label})"},
            {**held["difference"], "name": f"c d^2 minus c d held-out error ({label})"},
        ]
    return out


def describe(a: dict[str, Any], outcome: str) -> str:
    """One clause of the finding's ``measured``: ``n*`` by ``d``, the stuck counts, the exponent
    and the held-out errors."""
    values = ", ".join(
        f"{int(d)}: {fmt_interval(n, lo, hi)} ({s['stuck']}/{s['trials']} stuck)"
        for d, n, lo, hi, s in zip(a["d"], a["n"], a["low"], a["high"], a["stuck"], strict=True)
    )
    text = (
        f"{a['steps']} GD steps ({outcome}): n* by d {values}; alpha = {fmt_interval(*a['alpha'])}"
    )
    held = a["held_out"]
    if held and held["paper"] is not None:
        text += (
            f"; held-out relative error (fitted on d <= {held['fitted_on'][-1]:g}) c d "
            f"{interval_text(held['paper'])}, c d^2 {interval_text(held['rival'])}"
        )
    return text


def interval_text(e: dict[str, Any]) -> str:
    return fmt_interval(e["value"], e["low"], e["high"])


def panel(ax, records: list[Record], config: Any) -> None:
    """``n*(d)`` after the steps (test and certified, bootstrap bars), the one-step certified
    ``n*`` at the fixed width for comparison, and ``c d`` and ``c d^2`` fitted on the smaller half
    of the ``d``'s (the held-out comparison), drawn over every ``d``."""
    from .. import plotting

    a = None
    for outcome, marker in (("test", "o"), ("certified", "s")):
        a = fit(records, config, outcome)
        if a is None:
            return
        ds, n = np.array(a["d"]), np.array(a["n"])
        found = np.isfinite(n)
        high = np.where(np.isinf(a["high"]), 2 * n, a["high"])
        ax.errorbar(
            ds[found],
            n[found],
            yerr=plotting.bar_lengths(n[found], np.array(a["low"])[found], high[found]),
            fmt=marker + "-",
            capsize=2,
            label=f"{a['steps']} steps, {outcome}",
        )
    one = analyse(series(records, "fixed", "certified"), config)
    shown = [(d, n) for d, n in zip(one["d"], one["n"], strict=True) if np.isfinite(n)]
    if shown:
        ax.plot(*zip(*shown, strict=True), "x:", color="grey", label="one step, certified")
    a = fit(records, config, REPORTED)
    if a is not None and a["held_out"] is not None:
        ds, n = np.array(a["d"]), np.array(a["n"])
        half = len(a["held_out"]["fitted_on"])
        if np.isfinite(n[:half]).all():
            grid = np.geomspace(ds.min(), ds.max(), 32)
            for law, style in ((LINEAR, "--"), (QUADRATIC, "-.")):
                params = law.fit(ds[:half], n[:half])
                ax.plot(
                    grid,
                    law.predict(params, grid),
                    style,
                    color="k",
                    lw=0.8,
                    label=f"{law.formula.replace('x', 'd')} fitted on d <= {ds[half - 1]:g}",
                )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("d")
    ax.set_ylabel("n* after a few GD steps, bootstrap 95%")
    ax.legend(fontsize=7)


def work(c: dict[str, Any], n_star) -> float:
    """The multi-step jobs' work (``costs``): per ``d`` and replica, each probe draws its ``n d``
    inputs once (about ``DRAW_PASSES`` gradient passes, measured) and takes ``steps`` passes
    over them; the probes near ``n*`` (about ``3 n*``, ``n_star(d)`` capped at the limit) and
    the guard at the limit, which a few stuck replicas make the search take."""
    units = 0.0
    for d in c.get("multistep_d_values", []):
        limit = min(c["multistep_n_max"], MAX_DATA_ELEMENTS // d)
        seeds = c["multistep_seeds_by_d"].get(str(d), c["multistep_seeds_by_d"].get(d))
        seeds = seeds or c["multistep_seeds"]
        per_probe = seeds * d * (DRAW_PASSES + c["multistep_steps"])
        units += per_probe * (3 * min(limit, n_star(d)) + limit)
    return units


DRAW_PASSES = 6
"""Drawing ``n d`` inputs costs about six passes of the held gradient over them (0.17 s against
0.03 s at ``d = 256``, ``n = 2^16``, one thread)."""
