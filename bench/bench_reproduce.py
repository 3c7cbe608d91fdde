"""Target 7: the whole quick reproduction, wall time and where it goes (no target ratio); and
the same command run again on the full store (7b): nothing to compute, the judged entries and
their figures reused from the report folder (``report.judged``), the error rates read from the
package (``experiments.preregistered``). Target: the second run at most 5 s, reported as its
ratio to the first.

``attnsep reproduce --quick --store <tmp>/s.sqlite --out <tmp>/report --quiet`` in a child
process, from an empty store (``reproduction(preset, only)`` runs any
preset: target 8); then the store's per-job ``seconds``, summed by experiment
(``attnsep.engine.store.Store(path).rows()``), name the five most expensive experiments.
The summed job seconds exceed the wall time when the process executor runs jobs in parallel.
"""

from __future__ import annotations

import tempfile
from collections import Counter, defaultdict
from pathlib import Path

from common import VENV_BIN, fmt_bytes, row, run_child

from attnsep.engine.store import Store


def reproduction(label: str, preset: str, only: str | None = None) -> list[dict]:
    """``attnsep reproduce --PRESET [--only ONLY]`` from an empty store: one row."""
    with tempfile.TemporaryDirectory(prefix="attnsep-bench-") as tmp:
        store_path = Path(tmp) / "s.sqlite"
        args = [str(VENV_BIN / "attnsep"), "reproduce", f"--{preset}", "--store", str(store_path)]
        args += ["--out", str(Path(tmp) / "report"), "--quiet"]
        args += [] if only is None else ["--only", only]
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
    total_jobs = sum(seconds.values())
    top = ", ".join(
        f"{name} {secs:.1f} s ({jobs[name]} jobs)" for name, secs in seconds.most_common(5)
    )
    note = (
        f"exit {code}; {sum(jobs.values())} jobs ({failed} failed), summed job time "
        f"{total_jobs:.1f} s; top 5 by job seconds: {top}; largest process peak RSS "
        f"{fmt_bytes(peak)}"
    )
    if code != 0:
        note += "; " + (out.strip().splitlines()[-1] if out.strip() else "")
    rows = [row(label, f"{wall:.1f} s", f"jobs {total_jobs:.1f} s", None, "report", None, note)]
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


def run() -> list[dict]:
    return reproduction("7 quick reproduction: wall time", "quick")


if __name__ == "__main__":
    for r in run():
        print(r)
