"""Target 7: the whole quick reproduction, wall time and where it goes (goal at most 30 s on 2
cores, no ratio); and the same command run again on the full store (7b): nothing to compute,
the judged entries and their figures reused from the report folder (``report.judged``), the
error rates read from the package (``experiments.preregistered``). Target: the second run at
most 5 s, reported as its ratio to the first. Each row also compares the plan made before the
run (``--plan --json`` on the empty store) with it (:func:`plan_accuracy`).

``attnsep reproduce --quick --store <tmp>/s.sqlite --out <tmp>/report --quiet`` in a child
process, from an empty store (``reproduction(preset, only)`` runs any
preset: targets 8 and 8b); then the store's per-job ``seconds``, summed by experiment
(``attnsep.engine.store.Store(path).rows()``), name the five most expensive experiments.
The summed job seconds exceed the wall time when the process executor runs jobs in parallel.
"""

from __future__ import annotations

import json
import math
import shutil
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

from common import ROOT, VENV_BIN, fmt_bytes, row, run_child

from attnsep.engine.store import Store


def reproduction(
    label: str, preset: str, only: str | None = None, limit: float | None = None
) -> list[dict]:
    """``attnsep reproduce --PRESET [--only ONLY]`` from an empty store: one row, met when the
    wall time is at most ``limit`` seconds (no target without one)."""
    with tempfile.TemporaryDirectory(prefix="attnsep-bench-") as tmp:
        store_path = Path(tmp) / "s.sqlite"
        args = [str(VENV_BIN / "attnsep"), "reproduce", f"--{preset}", "--store", str(store_path)]
        args += ["--out", str(Path(tmp) / "report"), "--quiet"]
        args += [] if only is None else ["--only", only]
        plan = json.loads(run_child([*args, "--plan", "--json"], timeout=600)[3])
        code, wall, peak, out = run_child(args, timeout=4 * 3600)
        again = run_child(args, timeout=600) if preset == "quick" and code == 0 else None
        seconds: Counter[str] = Counter()
        jobs: defaultdict[str, int] = defaultdict(int)
        failed = 0
        if store_path.exists():
            store = Store.open_read(store_path)
            for r in store.rows():
                seconds[r["experiment"]] += r["seconds"]
                jobs[r["experiment"]] += 1
                failed += r["status"] != "done"
            store.close()
            # kept (results/ is not versioned): its timings can be published
            # (bench/publish_timings.py) without running the preset again
            kept = ROOT / "results" / f"bench-{preset}.sqlite"
            kept.parent.mkdir(exist_ok=True)
            shutil.copyfile(store_path, kept)
    total_jobs = sum(seconds.values())
    top = ", ".join(
        f"{name} {secs:.1f} s ({jobs[name]} jobs)" for name, secs in seconds.most_common(5)
    )
    note = (
        f"exit {code}; {sum(jobs.values())} jobs ({failed} failed), summed job time "
        f"{total_jobs:.1f} s; top 5 by job seconds: {top}; largest process peak RSS "
        f"{fmt_bytes(peak)}"
    )
    note += "; " + plan_accuracy(plan, wall, seconds)
    if code != 0:
        note += "; " + (out.strip().splitlines()[-1] if out.strip() else "")
    target, met = ("report", None) if limit is None else (f"<= {limit:.0f} s", wall <= limit)
    rows = [row(label, f"{wall:.1f} s", f"jobs {total_jobs:.1f} s", None, target, met, note)]
    if again is not None:
        second = again[1]
        rows.append(
            row(
                "7b quick reproduction again, on the full store",
                f"{second:.1f} s",
                f"first run {wall:.1f} s",
                second / wall,
                "<= 5 s",
                again[0] == 0 and second <= 5.0,
                f"exit {again[0]}; the same command, store and report folder",
            )
        )
    return rows


PLAN_GOAL = (0.67, 1.5)
"""Measured / planned job seconds an experiment's plan should stay within."""


def plan_accuracy(plan: dict, wall: float, seconds: Counter[str]) -> str:
    """The plan made before the run (``--plan --json`` on the empty store, the published timings
    in this machine's seconds when it measured its speed) against it: measured / planned wall
    time, and per experiment measured / planned job seconds (goal ``PLAN_GOAL``)."""
    ratios = {
        e["experiment"]: seconds[e["experiment"]] / e["cpu_seconds"]
        for e in plan["experiments"]
        if e["cpu_seconds"] > 0 and e["experiment"] in seconds
    }
    outside = {name: r for name, r in ratios.items() if not PLAN_GOAL[0] <= r <= PLAN_GOAL[1]}
    listed = ", ".join(f"{name} {r:.2f}" for name, r in sorted(outside.items()))
    low, high = (min(ratios.values()), max(ratios.values())) if ratios else (math.nan, math.nan)
    speed = "" if plan.get("host_speed") is None else f" (published x {plan['host_speed']:.2f})"
    return (
        f"plan{speed}: wall {plan['wall_seconds']:.0f} s planned, measured / planned "
        f"{wall / plan['wall_seconds']:.2f}; job seconds measured / planned per experiment "
        f"{low:.2f}-{high:.2f}, {len(ratios) - len(outside)} of {len(ratios)} within "
        f"{PLAN_GOAL[0]}-{PLAN_GOAL[1]}x" + (f" (outside: {listed})" if outside else "")
    )


def run() -> list[dict]:
    return reproduction("7 quick reproduction: wall time", "quick", limit=30.0)


if __name__ == "__main__":
    for r in run():
        print(r)
