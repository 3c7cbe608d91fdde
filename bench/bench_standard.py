"""Target 8b: the whole standard preset, every experiment, from an empty store (SPEC Part D);
goal at most 10 minutes on 2 cores with the process executor, so that five master seeds take
an hour. Opt-in (``bench/run.py --only standard``): it takes about 25 minutes today.
"""

from __future__ import annotations

from bench_reproduce import reproduction


def run() -> list[dict]:
    return reproduction("8b standard, every experiment: wall time", "standard", limit=600.0)


if __name__ == "__main__":
    for r in run():
        print(r)
