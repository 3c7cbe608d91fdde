"""Pre-register criteria's error rates into the package (``experiments/calibrations/*.json``):
the preset run on the exploratory master seed (``configs.PREREGISTRATION_SEED``, 3; its missing
jobs computed into the store), each claim's laws fitted to it and redrawn in every simulated run
(``report.preregistration``). Run it when a criterion changes, before any confirmatory run.

Usage: ``python bench/preregister.py --quick|--standard [--only NAME,...] [--store PATH]
[--workers N]``
"""

from __future__ import annotations

import argparse
import time

from attnsep.configs import PREREGISTRATION_SEED
from attnsep.report.preregistration import preregister


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", dest="preset", action="store_const", const="quick")
    parser.add_argument("--standard", dest="preset", action="store_const", const="standard")
    parser.add_argument("--only", type=lambda s: s.split(","), default=None)
    parser.add_argument("--store", default="results/attnsep.sqlite")
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args()
    if args.preset is None:
        parser.error("give --quick or --standard")
    started = time.perf_counter()
    written = preregister(
        args.preset, args.only, seed=PREREGISTRATION_SEED, store=args.store, workers=args.workers
    )
    for name, path in written.items():
        print(f"{name}: {path}")
    print(f"{len(written)} files written in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
