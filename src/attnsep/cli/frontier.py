"""``attnsep frontier xor|select``: trainable parameters needed vs problem size (SPEC A7.6,
Part C), through the ``separation-xor`` and ``separation-select`` experiments and the store."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import typer

from ..core.io import writable_folder
from ..core.validate import int_at_least, require
from ..engine.store import DEFAULT_PATH
from .common import console, emit_json, table
from .options import int_list

if TYPE_CHECKING:
    from ..report.frontier_tables import TextTable
    from ..results import ExperimentResult

app = typer.Typer(
    help="Parameters needed vs problem size, transformer against FCN.", no_args_is_help=True
)

STORE_HELP = "Results database; its stored jobs are read back, not computed again."
SOLVERS = ("law", "population", "sgd")
"""``frontier select``'s solvers (``experiments.select_width``)."""


def run_stored(name: str, config: dict[str, Any], store: Path) -> ExperimentResult:
    """Experiment ``name`` at ``config`` (over its quick preset) through the engine, every job
    stored in ``store``; a failed job is one error line."""
    from ..api import run_experiment

    ran = run_experiment(name, config=config, store=store)
    failed = [row["error"].splitlines()[0] for row in ran.rows if row["status"] != "done"]
    require(not failed, f"a job failed ({failed[0] if failed else ''}); rerun to retry it")
    return ran


def show(text: TextTable) -> None:
    """Print a :class:`~attnsep.report.frontier_tables.TextTable`: the table, then its notes."""
    made = table(text.title, text.columns, "right")
    for row in text.rows:
        made.add_row(*row)
    out = console()
    out.print(made)
    for note in text.notes:
        out.print(note)


@app.command("xor")
def xor(
    d: str = typer.Option("16,32,64,128", "--d", help="Input lengths, comma-separated."),
    seeds: int = typer.Option(8, "--seeds", help="Replicas per probe."),
    seed: int = typer.Option(0, "--seed", help="Base seed."),
    store: Path = typer.Option(DEFAULT_PATH, "--store", help=STORE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """One-step transformer against two-layer ReLU nets on sparse XOR.

    Success: test sign error <= 1% on fresh samples, in >= 90% of the replicas. The jobs are
    the separation-xor experiment's: stored in --store, and never computed twice.
    """
    ds = int_list("--d", d, 2, increasing=True)
    int_at_least("seeds", seeds, 1)
    int_at_least("seed", seed, 0)
    writable_folder(store.parent)
    from ..experiments import xor_thresholds
    from ..report.frontier_tables import xor_table

    config = {"d_values": ds, "fcn_d_values": ds, "seeds": seeds, "seed": seed}
    result = xor_thresholds.summary(run_stored("separation-xor", config, store).records)
    if as_json:
        emit_json(result)
    else:
        show(xor_table(result))


@app.command("select")
def select(
    T: str = typer.Option("8,16,32,64", "--T", help="Sequence lengths, comma-separated."),
    d: int = typer.Option(16, "--d", help="Token dimension."),
    q: str = typer.Option("2", "--q", help="Subset sizes, comma-separated, each < every T."),
    seeds: int = typer.Option(8, "--seeds", help="Replicas per probe."),
    seed: int = typer.Option(0, "--seed", help="Base seed."),
    solver: str = typer.Option(
        "law",
        "--solver",
        help="law (population descent, losses from the products' law: any T), population "
        "(the same, drawn sequences: cost grows with T) or sgd.",
    ),
    store: Path = typer.Option(DEFAULT_PATH, "--store", help=STORE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Selector width d + m_p* against the FCN's proven minimum first-layer width.

    m_p*: the smallest PE width whose selectors (position block, m_p*^2 parameters), run by
    population gradient descent from W = 0, reach loss <= 0.2 x the uniform-attention loss in
    >= 90% of the replicas. The descent stays on W = alpha I (rotation symmetry); --solver law
    evaluates its loss through the law of the encodings' products, at a cost independent of T.
    FCN: the least first-layer width any net on (vec X, 1_y) needs for that loss (SPEC B4).
    The jobs are the separation-select experiment's: stored in --store, never computed twice.
    """
    Ts = int_list("--T", T, 2, increasing=True)
    qs = int_list("--q", q, 1, increasing=True)
    int_at_least("d", d, 1)
    require(qs[-1] < Ts[0], f"--q must be < every T, got q={qs[-1]} and T={Ts[0]}")
    int_at_least("seeds", seeds, 1)
    int_at_least("seed", seed, 0)
    writable_folder(store.parent)
    from ..experiments import separation_select
    from ..report.frontier_tables import select_table

    require(solver in SOLVERS, f"--solver must be one of {', '.join(SOLVERS)}, got {solver!r}")
    config = {
        "d": d,
        "T_values": Ts,
        "q_values": qs,
        "seeds": seeds,
        "seed": seed,
        "solver": solver,
    }
    ran = run_stored("separation-select", config, store)
    result = separation_select.summary(ran.records, cast(separation_select.Config, ran.config))
    if as_json:
        emit_json(result)
    else:
        show(select_table(result))
