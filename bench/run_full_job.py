"""Run experiments' largest ``full`` jobs (the ones ``bench_full_jobs`` compares with the plan)
through a store, one at a time on this process, and print each one's planned and measured
seconds; publish them afterwards with ``bench/publish_timings.py --only NAMES STORE``.

Usage: ``python bench/run_full_job.py [--store results/full.sqlite] EXPERIMENT ...``
(resumable: a job the store holds is not run again).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_full_jobs import largest_full_job  # noqa: E402

from attnsep.engine.jobs import Job  # noqa: E402
from attnsep.engine.sweep import executor_for, run_into  # noqa: E402


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", default="results/full.sqlite", help="the results store")
    parser.add_argument("experiments", nargs="+", help="experiment names")
    args = parser.parse_args(argv)
    for name in args.experiments:
        config, planned, _ = largest_full_job(name)
        _, rows, _ = run_into([Job(name, config)], args.store, executor_for("inline"))
        (stored,) = rows
        line = {"experiment": name, "planned": planned, "measured": stored["seconds"]}
        print(json.dumps({**line, "status": stored["status"]}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
