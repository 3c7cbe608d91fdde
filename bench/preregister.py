"""Pre-register criteria's error rates into the package (``experiments/calibrations/*.json``):
the preset run on an exploratory master seed (its missing jobs computed into the store), each
claim's laws fitted to it and redrawn in every simulated run (``report.preregistration``). Run
it when a criterion changes, before any confirmatory run.

Usage: ``python bench/preregister.py --quick|--standard|--full [--seed N] [--only NAME,...]
[--store PATH] [--workers N]``

The quick and standard presets are pre-registered on ``configs.PREREGISTRATION_SEED`` (3). The
full preset is pre-registered on master seed 0, whose paper-scale run is published
(``docs/runs/full.sqlite.gz``; ``make claims-full-page`` unpacks it into ``results/published``):
``--full --seed 0 --store results/published/full.sqlite``. A seed that is confirmatory for an
experiment (not in its ``tuned_on``) is refused.
"""

from __future__ import annotations

import argparse
import time

from attnsep.configs import PREREGISTRATION_SEED
from attnsep.report.preregistration import preregister


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for preset in ("quick", "standard", "full"):
        parser.add_argument(f"--{preset}", dest="preset", action="store_const", const=preset)
    parser.add_argument("--seed", type=int, default=PREREGISTRATION_SEED)
    parser.add_argument("--only", type=lambda s: s.split(","), default=None)
    parser.add_argument("--store", default="results/attnsep.sqlite")
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args()
    if args.preset is None:
        parser.error("give --quick, --standard or --full")
    started = time.perf_counter()
    try:
        written = preregister(
            args.preset, args.only, seed=args.seed, store=args.store, workers=args.workers
        )
    except ValueError as err:
        parser.exit(2, f"error: {err}\n")
    for name, path in written.items():
        print(f"{name}: {path}")
    print(f"{len(written)} files written in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
