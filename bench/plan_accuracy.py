"""A preset's plan against its run so far: per experiment, the finished jobs' measured seconds
over the seconds the plan gives the same jobs (goal 0.67-1.5, target 8c), and the run's wall
time (the union of its jobs' intervals) beside the plan's wall time for the jobs it has
finished; once every job has, the whole run's wall time against the whole plan's. Each ratio
is also given over the experiments' median ratio: the host's speed taken out, what is left is the
error of that experiment's cost model.

    python bench/plan_accuracy.py results/full.sqlite
    python bench/plan_accuracy.py --seed 2 results/full-seed2.sqlite
    python bench/plan_accuracy.py --preset standard --replicate 5 results/replication.sqlite

(``--seed``: the run's master seed, default each preset's own; ``--replicate N``: the N master
seeds of ``attnsep reproduce --replicate N``, from ``--seed`` or the replication's first;
``--speed F``: the published timings times ``F``, the host speed ``--plan`` measured before
the run, ``host_speed`` in its ``--json``. The
published timings price a job of another master seed from the same config's, so its ratio is
how well one seed's seconds foretell another's.)

The plan is made as ``attnsep reproduce --plan`` makes it on an empty store (published timings
and the experiments' cost models, no calibration), so it is the estimate a user sees before
starting; the store is only read.
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict
from pathlib import Path

from attnsep.engine.plan import list_schedule, make_plan
from attnsep.engine.runs import busy_wall
from attnsep.engine.store import Store
from attnsep.report.replication import seeds_for
from attnsep.report.reproduction import planned

GOAL = (0.67, 1.5)
SPEED_HELP = "the host speed the plan measured before the run (host_speed in its --plan --json)"


def main(
    path: str,
    preset: str = "full",
    seed: int | None = None,
    replicate: int | None = None,
    speed: float = 1.0,
) -> None:
    seeds = seeds_for(seed, None, replicate)
    _, groups, engine = planned(preset, None, seed, "process", seeds)
    plan = make_plan(groups, None, "process", engine.workers, budget=0)
    planned_seconds = {c.job.key: speed * (c.seconds or 0.0) for c in plan.to_run}
    db = Store(Path(path))
    try:
        rows = [r for r in db.rows(keys=list(planned_seconds)) if r["status"] == "done"]
    finally:
        db.close()
    by_experiment: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for r in rows:
        by_experiment[r["experiment"]].append((r["seconds"], planned_seconds[r["config_hash"]]))
    print(f"{len(rows)} of {len(planned_seconds)} {preset} jobs finished in {path}")
    sums = {
        name: [sum(c) for c in zip(*pairs, strict=True)]
        for name, pairs in sorted(by_experiment.items())
    }
    ratios = {name: m / p if p else float("nan") for name, (m, p) in sums.items()}
    host = statistics.median(ratios.values()) if ratios else float("nan")
    header = f"{'experiment':<22} {'jobs':>4} {'measured s':>11} {'planned s':>10} {'ratio':>6}"
    print(f"{header} {'/ median':>8}")
    for name, (measured, estimate) in sums.items():
        ratio, jobs = ratios[name], len(by_experiment[name])
        flag = "" if GOAL[0] <= ratio <= GOAL[1] else "  outside 0.67-1.5"
        numbers = f"{measured:>11.0f} {estimate:>10.0f} {ratio:>6.2f} {ratio / host:>8.2f}"
        print(f"{name:<22} {jobs:>4} {numbers}{flag}")
    print(f"'/ median': over the experiments' median ratio, {host:.2f}, the host's speed against")
    print("the published machine's if the typical experiment's model is right")
    done_plan = sorted((planned_seconds[r["config_hash"]] for r in rows), reverse=True)
    wall, _ = busy_wall([(r["started"], r["finished"]) for r in rows])
    scheduled = list_schedule(done_plan, engine.workers)
    everything = sorted(planned_seconds.values(), reverse=True)
    whole = (plan.startup or 0.0) + list_schedule(everything, engine.workers)  # plan.wall, scaled
    print(
        f"wall: {wall:.0f} s measured (union of the jobs' intervals), {scheduled:.0f} s planned "
        f"for these jobs on {engine.workers} workers: ratio {wall / scheduled:.2f}; whole plan "
        f"{whole:.0f} s wall, {sum(everything):.0f} s CPU"
    )
    if len(rows) == len(planned_seconds) and whole:  # the whole run
        ratio = wall / whole
        within = "within" if GOAL[0] <= ratio <= GOAL[1] else "outside"
        totals = f"{wall:.0f} s wall / {whole:.0f} s planned = {ratio:.2f}"
        print(f"the whole run: {totals}, {within} {GOAL[0]}-{GOAL[1]}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="A preset's plan against its run.")
    parser.add_argument("store", nargs="?", default="results/full.sqlite")
    parser.add_argument("--preset", default="full", help="quick, standard or full")
    parser.add_argument("--seed", type=int, default=None, help="the run's (first) master seed")
    parser.add_argument("--replicate", type=int, default=None, help="master seeds replicated")
    parser.add_argument("--speed", type=float, default=1.0, help=SPEED_HELP)
    args = parser.parse_args()
    main(args.store, args.preset, args.seed, args.replicate, args.speed)
