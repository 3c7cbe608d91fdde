"""Add the finished jobs' seconds of the given stores to the package's published timings
(``engine/published_timings.json``), which ``--plan`` uses for jobs no local store has timed.

Usage: ``python bench/publish_timings.py results/standard.sqlite results/quick.sqlite ...``
"""

from __future__ import annotations

import sys
from pathlib import Path

from attnsep.engine.plan import PUBLISHED_TIMINGS, write_published_timings
from attnsep.engine.store import Store


def main(paths: list[str]) -> None:
    missing = [p for p in paths if not Path(p).exists()]
    if not paths or missing:
        sys.exit(f"error: give existing store files; missing: {', '.join(missing) or 'none given'}")
    stores = [Store(p) for p in paths]
    print(f"{write_published_timings(stores, PUBLISHED_TIMINGS)} jobs written")


if __name__ == "__main__":
    main(sys.argv[1:])
