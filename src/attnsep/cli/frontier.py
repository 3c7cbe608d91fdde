"""``attnsep frontier xor|select``: trainable parameters needed vs problem size (SPEC Part C)."""

from __future__ import annotations

import math
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from ..engine.store import DEFAULT_PATH
from ..io import writable_folder
from ..validate import int_at_least, require
from .common import emit_json
from .options import lazy

torch_threads = lazy("attnsep.device", "torch_threads")

app = typer.Typer(
    help="Parameters needed vs problem size, transformer against FCN.", no_args_is_help=True
)


GROUPS_HELP = (
    "Independent groups of --seeds replicas (base seeds seed + 1000 g); "
    "shows the median group and the range."
)


def parse_sizes(name: str, text: str, low: int) -> list[int]:
    """``16,32,64`` as increasing integers ``>= low``."""
    parts = [p.strip() for p in text.split(",")]
    ok = bool(parts) and all(p.isdigit() and int(p) >= low for p in parts)
    require(ok, f"{name} must be comma-separated integers >= {low}, got {text!r}")
    sizes = [int(p) for p in parts]
    require(sizes == sorted(set(sizes)), f"{name} must be increasing without repeats, got {text!r}")
    return sizes


def show(result: dict, size: str) -> None:
    from .. import frontier

    groups = result["transformer"][0]["groups"]
    title = f"parameters needed vs {size}"
    if groups > 1:
        title += f" (median of {groups} seed groups, range in brackets)"
    table = Table(title=title)
    for column in (size, "transformer knob", "params", "success", "FCN width", "params", "success"):
        table.add_column(column, justify="right")
    for t, f in zip(result["transformer"], result["fcn"], strict=True):

        def rate(p: dict) -> str:
            return "-" if p["success_rate"] is None else f"{p['success_rate']:.2f}"

        table.add_row(
            str(t[size]),
            str(t["m_star"]),
            frontier.params_span(t),
            rate(t),
            str(f["width_star"]),
            frontier.params_span(f),
            rate(f),
        )
    Console().print(table)
    fit = result["fit"]
    ratio = fit["param_ratio_at_largest"]
    Console().print(
        f"log-log slope of params vs {size}: "
        f"transformer {frontier.fmt(fit['transformer']['loglog_slope'])}, "
        f"FCN {frontier.fmt(fit['fcn']['loglog_slope'])}; "
        f"FCN/transformer params at {size}={ratio[size]}: {frontier.fmt(ratio['ratio'])}"
    )


def show_xor(result: dict) -> None:
    """Thresholds and parameters per ``d`` with their bootstrap intervals, and the exponents."""
    from ..metrics.stats import fmt_estimate, fmt_interval

    def span(p: dict, key: str) -> str:
        high = math.inf if p[f"{key}_high"] is None else p[f"{key}_high"]
        return fmt_interval(p[key], p[f"{key}_low"], high, digits=6)

    def rate(p: dict) -> str:
        return "-" if p["success_rate"] is None else f"{p['success_rate']:.2f}"

    table = Table(title="parameters needed vs d (95% bootstrap intervals over the replicas)")
    for column in ("d", "transformer m*", "params", "success", "FCN width*", "params", "success"):
        table.add_column(column, justify="right")
    for t, f in zip(result["transformer"], result["fcn"], strict=True):
        table.add_row(
            str(t["d"]),
            span(t, "m_star"),
            span(t, "params"),
            rate(t),
            span(f, "width_star"),
            span(f, "params"),
            rate(f),
        )
    Console().print(table)
    fit = result["fit"]
    Console().print(
        "exponent of params vs d: "
        f"transformer {fmt_estimate(fit['transformer']['exponent'])}, "
        f"FCN {fmt_estimate(fit['fcn']['exponent'])}"
    )


@app.command("xor")
def xor(
    d: str = typer.Option("16,32,64,128", "--d", help="Input lengths, comma-separated."),
    seeds: int = typer.Option(8, "--seeds", help="Replicas per probe."),
    seed: int = typer.Option(0, "--seed", help="Base seed."),
    store: Path = typer.Option(DEFAULT_PATH, "--store", help="Results database."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """One-step transformer against two-layer ReLU nets on sparse XOR.

    Success: test sign error <= 1% on fresh samples, in >= 90% of the replicas. The jobs are
    the separation-xor experiment's: stored in --store, and never computed twice.
    """
    ds = parse_sizes("--d", d, 2)
    int_at_least("seeds", seeds, 1)
    int_at_least("seed", seed, 0)
    writable_folder(store.parent)
    from .. import frontier
    from ..api import run_experiment

    config = {"d_values": ds, "fcn_d_values": ds, "seeds": seeds, "seed": seed}
    ran = run_experiment("separation-xor", config=config, store=store)
    failed = [row["error"].splitlines()[0] for row in ran.rows if row["status"] != "done"]
    require(not failed, f"a job failed ({failed[0] if failed else ''}); rerun to retry it")
    result = frontier.xor_summary(ran.records)
    if as_json:
        emit_json(result)
    else:
        show_xor(result)


@app.command("select")
def select(
    T: str = typer.Option("8,16,32", "--T", help="Sequence lengths, comma-separated."),
    d: int = typer.Option(4, "--d", help="Token dimension."),
    q: int = typer.Option(2, "--q", help="Subset size."),
    seeds: int = typer.Option(4, "--seeds", help="Replicas per probe."),
    groups: int = typer.Option(1, "--groups", help=GROUPS_HELP),
    seed: int = typer.Option(0, "--seed", help="Base seed."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Selector (position block, m_p^2 parameters) against MLPs on [vec X ; 1_y].

    Target: loss <= 0.2 x the uniform-attention loss.
    """
    Ts = parse_sizes("--T", T, 2)
    int_at_least("d", d, 1)
    int_at_least("q", q, 1)
    require(q <= Ts[0], f"q must be <= every T, got q={q} and T={Ts[0]}")
    int_at_least("seeds", seeds, 1)
    int_at_least("groups", groups, 1)
    int_at_least("seed", seed, 0)
    from .. import frontier

    with torch_threads(1):
        result = frontier.select_frontier(Ts, d, q, seeds, seed, groups)
    if as_json:
        emit_json(result)
    else:
        show(result, "T")
