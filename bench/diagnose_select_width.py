"""Why B5.2's criterion missed its power goal at the full preset with an unguarded width search
(SPEC B5.2, Part E): a diagnosis printed beside the pre-registered rates, not a benchmark and not
a verdict.

From the exploratory run's records (the fit ``bench/preregister.py`` makes) it simulates runs
from the paper's law, as the pre-registration does, and tallies per ``(q, d)`` series which of
the criterion's two rules left the series undecided, and how many of those series held a
*loose* threshold: the search's answer ``m_p*`` passed with fewer than all replicas (15 of 16
against the 0.9 target) and neither ``m_p*`` nor ``m_p* + 1`` passed with all, so that the
bootstrap draws that resample two failing replicas (about a quarter of them) move to the next
probed size that does, which the doubling grid can put up to twice as far, or past every probe.

The search is guarded since select-width's version 5 (``search.smallest_passing(...,
guard=True)``: for a loose threshold ``m_p* + 1, + 2, + 4, …`` probed until one passes with
every replica, as SPEC A7.5a's guard probe closes every interval), in the real runs and in the
simulated ones alike. The script measures the rates as searched and again with the simulated
search unguarded, as version 4 searched: at the full preset 0.545 without the guard, 1.00 with
it on master seed 0's version-4 records, where the guard was first measured.

Usage: ``.venv/bin/python bench/diagnose_select_width.py [--preset full] [--seed 0]
[--store results/published/full.sqlite] [--simulations 200]`` (one JSON object; the full
preset's 2 x 200 simulations per variant take about a minute).
"""

from __future__ import annotations

import argparse
import functools
import json
from collections import Counter
from typing import Any

import numpy as np

from attnsep.engine.jobs import jobs_for
from attnsep.engine.store import Store
from attnsep.experiments import base
from attnsep.experiments.select_width import calibration as laws
from attnsep.experiments.select_width import verdict
from attnsep.metrics import calibration
from attnsep.report.claims import config_for, finished_records
from attnsep.train import search

NAME = "select-width"


def is_loose(record: dict[str, Any]) -> bool:
    """``search.loose`` on a stored record."""
    passed_by_all = [p["size"] for p in record["probes"] if all(p["outcomes"])]
    return search.loose(record["m_star"], passed_by_all)


def tally(hypotheses: calibration.Hypotheses, config: Any, runs: int) -> dict[str, Any]:
    """Per series, over ``runs`` runs from the paper's law: each rule's decision, how often the
    series was left undecided, and how often an undecided series held a loose threshold."""
    rng = np.random.default_rng([config.seed, 4051])
    counts: dict[str, Counter] = {}
    with calibration.simulating():
        for _ in range(runs):
            records = hypotheses.paper(config, rng)  # each draw redraws the laws itself
            for (q, d), s in verdict.analyse(records).items():
                g, key = s["growth"], f"q={q}, d={d}"
                series = [r for r in records if (r["q"], r["d"]) == (q, d)]
                count = counts.setdefault(key, Counter())
                count[f"curvature {g['curvature']['decided']}"] += 1
                count[f"held-out {g['side']}"] += 1
                if g["decided"] != "paper":
                    count["undecided"] += 1
                    count["undecided with a loose threshold"] += any(map(is_loose, series))
    return {key: dict(sorted(c.items())) for key, c in counts.items()}


def rates(hypotheses: calibration.Hypotheses, config: Any, simulations: int) -> dict[str, Any]:
    """Power, false pass and false fail as the pre-registration measures them (the simulated
    search is looked up at each draw, so one fit of the laws serves both variants)."""
    verdict_of = base.get(NAME).verdict
    found = calibration.calibrate(verdict_of, hypotheses, config, (), simulations, config.seed)
    return {k: found[k] for k in ("power", "false_pass", "false_fail", "intervals")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="full", choices=("quick", "standard", "full"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--store", default="results/published/full.sqlite")
    parser.add_argument("--simulations", type=int, default=calibration.SIMULATIONS)
    args = parser.parse_args()
    try:
        config = config_for(NAME, args.preset, args.seed)
        jobs, db = jobs_for(NAME, config), Store.open_read(args.store)
    except ValueError as err:
        parser.exit(2, f"error: {err}\n")
    done, _ = finished_records(db, NAME, jobs)
    db.close()
    if len(done) < len(jobs):
        parser.exit(2, f"error: {args.store} holds {len(done)} of the run's {len(jobs)} jobs\n")
    records = [rec for row in done for rec in row["records"]]
    hypotheses = calibration.redrawable(base.get(NAME).hypotheses, records, config)
    out: dict[str, Any] = {"preset": args.preset, "seed": args.seed}
    out["real run's loose thresholds"] = sum(map(is_loose, records))
    out["as searched"] = rates(hypotheses, config, args.simulations)
    out["as searched, per series"] = tally(hypotheses, config, args.simulations)
    laws.simulated_search = functools.partial(laws.simulated_search, guard=False)
    out["unguarded, as version 4 searched"] = rates(hypotheses, config, args.simulations)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
