"""Run the benchmarks and print one table of ratios (``make bench``).

Every benchmark module ``bench_<name>.py`` exposes ``run() -> list[dict]`` with rows
``{benchmark, ours, baseline, ratio, target, met, note}`` (and ``profile``, the top functions,
where a target is missed or the number needs explaining). Results go to ``bench/results.json``.
The exit status is 0 even when targets are missed: benchmarks report, they do not assert.

    .venv/bin/python bench/run.py                   # everything (about 10 minutes, 2 cores)
    .venv/bin/python bench/run.py --only fcn,selection
    .venv/bin/python bench/run.py --only standard_xor   # opt-in: about 30 minutes
    .venv/bin/python bench/run.py --only standard       # opt-in: every experiment, ~25 min
    .venv/bin/python bench/run.py --only calibration_reality   # opt-in: about 10 minutes
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import torch  # noqa: E402
from common import THREADS, row  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

BENCHMARKS = {
    "huge_d": "target 1: exact one step at d=1e7 (memory) and d=1e6 (vs floor)",
    "ensemble": "target 2: 256 replicas batched vs looped",
    "exact_vs_sampled": "target 3: exact population step vs sampled autograd step",
    "empirical": "target 4: streamed empirical step, memory and throughput",
    "fcn": "target 5: FCN ensembles, 32 at once vs looped",
    "selection": "target 6: token-selection training step",
    "reproduce": "target 7: the whole quick reproduction",
    "standard_xor": "target 8: the standard preset of the XOR claims (opt-in, ~30 min)",
    "standard": "target 8b: the whole standard preset, every experiment, from an empty store "
    "(opt-in, ~25 min)",
    "kparity": "target 9: k-parity n=16 k=3, ours vs the authors' 4x4 model, time to 0.95 test "
    "accuracy (opt-in, ~3 min)",
    "cli_startup": "target 10: attnsep --help, list and a bad-input error vs python -c pass "
    "(CPU <= 0.5 s)",
    "surrogate": "target 11: Gaussian surrogate vs exact sampling, one empirical step at d=256",
    "kparity_steps": "target 12: a kparity-steps job (k=3, d=1024, the full grid of step sizes), "
    "grid descent vs the loop it replaced (~1.5 min)",
    "select_convergence": "target 13: select-convergence training (B5.1, B5.1b), workspace vs "
    "fresh arrays, and against its matmul bound",
    "attention_maps": "target 14: an attention-maps job (softmax, d=1024, the full grid of step "
    "sizes), step sizes together vs one Descent each (~1 min)",
    "sign_error": "target 16: the sign error rate of one-step replicas at d=8192 and 65536, one "
    "table per head (numpy.take) vs one torch table of all heads",
    "calibration_reality": "target 17: pre-registered power and false fail vs the verdicts of 24 "
    "fresh master seeds, quick preset (opt-in, ~10 min; its store is reused on a rerun)",
    "full_jobs": "target 15: each experiment's largest full job, planned (from the smaller "
    "presets' timings) vs measured (its published timing; bench/run_full_job.py runs it)",
    "worker_gc": "target 18: a pool worker's garbage collection after a job, what outlived the "
    "earlier jobs frozen vs the whole heap scanned",
}
OPT_IN = {"standard_xor", "standard", "kparity", "calibration_reality"}


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help=f"comma-separated names out of: {', '.join(BENCHMARKS)}")
    parser.add_argument("--out", default=str(HERE / "results.json"), help="results JSON path")
    args = parser.parse_args(argv)
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        bad = [n for n in names if n not in BENCHMARKS]
        if bad:
            parser.error(f"--only: unknown {', '.join(bad)}; allowed: {', '.join(BENCHMARKS)}")
        args.names = names
    else:
        args.names = [name for name in BENCHMARKS if name not in OPT_IN]
    return args


def run_one(name: str, console: Console) -> tuple[list[dict], float]:
    console.print(f"[bold]{name}[/bold]: {BENCHMARKS[name]} ...")
    start = time.perf_counter()
    try:
        rows = importlib.import_module(f"bench_{name}").run()
    except Exception as err:  # one broken benchmark must not hide the others
        rows = [
            row(
                name,
                "error",
                "",
                None,
                "",
                None,
                f"{type(err).__name__}: {err}",
                traceback.format_exc(limit=6).splitlines(),
            )
        ]
    elapsed = time.perf_counter() - start
    console.print(f"  done in {elapsed:.1f} s")
    return rows, elapsed


def table(rows: list[dict]) -> Table:
    out = Table(title="attnsep benchmarks (ratios measured side by side in one run)")
    for column in ("benchmark", "ours", "baseline", "ratio", "target", "met?"):
        out.add_column(column, overflow="fold")
    for r in rows:
        ratio = "" if r["ratio"] is None else f"{r['ratio']:.3g}"
        met = {True: "[green]yes[/green]", False: "[red]NO[/red]", None: "-"}[r["met"]]
        out.add_row(r["benchmark"], r["ours"], r["baseline"], ratio, r["target"], met)
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    console = Console(width=160)
    started = time.perf_counter()
    load_before = os.getloadavg()
    rows: list[dict] = []
    seconds: dict[str, float] = {}
    for name in args.names:
        got, seconds[name] = run_one(name, console)
        rows.extend(got)
    total = time.perf_counter() - started
    console.print(table(rows))
    console.print("[bold]notes[/bold]")
    for r in rows:
        console.print(f"- {r['benchmark']}: {r['note']}", highlight=False)
    for r in rows:
        if r.get("profile"):
            console.print(f"[bold]profile[/bold] {r['benchmark']}:")
            for line in r["profile"]:
                console.print(f"    {line}", highlight=False, markup=False)
    # The machine's load beside the numbers: a ratio is read against how busy the cores were.
    load = {"before": load_before, "after": os.getloadavg()}
    console.print(
        f"total {total:.1f} s (" + ", ".join(f"{k} {v:.0f} s" for k, v in seconds.items()) + ")"
    )
    console.print(
        f"{time.strftime('%Y-%m-%d %H:%M')}; load average (1, 5, 15 min) before "
        + ", ".join(f"{v:.2f}" for v in load["before"])
        + ", after "
        + ", ".join(f"{v:.2f}" for v in load["after"])
    )
    result = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "torch_threads": THREADS,
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
        "load_average": load,
        "total_seconds": total,
        "seconds": seconds,
        "rows": rows,
    }
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    console.print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
