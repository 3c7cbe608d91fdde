"""Add the finished jobs' seconds of the given stores to the package's published timings
(``engine/published_timings.json``), which ``--plan`` uses for jobs no local store has timed.

Usage: ``python bench/publish_timings.py [--replace] [--keep-startup] [--only NAME,...] STORE ...``
(``--only``: the experiments whose timings to publish; default all; ``--replace`` first, with
``--only``: drop the timings published before for those experiments, after a faster
algorithm). It also measures and publishes a worker's start-up
(``engine.published.measure_startup``), the fixed cost the plan adds per worker, unless
``--keep-startup`` keeps the one published (timings added from a run on another day).
"""

from __future__ import annotations

import sys
from pathlib import Path

from attnsep.engine.published import (
    PUBLISHED_TIMINGS,
    measure_startup,
    published_startup,
    write_published_timings,
)
from attnsep.engine.store import Store


def main(argv: list[str]) -> None:
    replace = argv[:1] == ["--replace"]
    argv = argv[1:] if replace else argv
    keep_startup = argv[:1] == ["--keep-startup"]
    argv = argv[1:] if keep_startup else argv
    only = None
    if argv[:1] == ["--only"] and len(argv) > 1:
        only, argv = argv[1].split(","), argv[2:]
    missing = [p for p in argv if not Path(p).exists()]
    if not argv or missing:
        sys.exit(f"error: give existing store files; missing: {', '.join(missing) or 'none given'}")
    stores = [Store.open_read(p) for p in argv]
    startup = None if keep_startup else measure_startup()
    written = write_published_timings(stores, PUBLISHED_TIMINGS, only, startup, replace)
    print(f"{written} jobs written; a worker's start-up: {published_startup():.2f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
