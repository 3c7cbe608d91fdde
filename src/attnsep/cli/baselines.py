"""``attnsep fcn ...`` and ``attnsep frontier ...``: the fully-connected baselines, alone
(SPEC A7.6, B4, B5.4) and against the transformer: trainable parameters needed vs problem size
(SPEC A7.6, Part C, through the ``separation-xor`` and ``separation-select`` experiments)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from ..api import FRONTIER_SOLVERS, frontier_select, frontier_xor
from ..configs import SelectionFCNConfig, XorFCNConfig, require
from .common import FORCE, JSON, QUIET, argument_of, config_options, output, print_result, steps_bar
from .parse import int_list

fcn = typer.Typer(no_args_is_help=True)  # its help: ``cli.COMMANDS``
frontier = typer.Typer(no_args_is_help=True)
Q_HELP = "Subset sizes, comma-separated, each < every T."
STORE_HELP = "Results database; its stored jobs are read back, not computed again."
SOLVER_HELP = (
    "law (population descent, losses from the products' law: any T), population "
    "(the same, drawn sequences: cost grows with T) or sgd."
)


@fcn.command("xor")
@config_options(
    XorFCNConfig, "width replicas steps batch lr optimizer loss seed", flags={"replicas": "--seeds"}
)
def fcn_xor(
    config: dict[str, Any],
    d: int = typer.Option(..., "--d", help="Input length."),
    as_json: bool = JSON,
    quiet: bool = QUIET,
    force: bool = FORCE,
) -> None:
    """Train two-layer ReLU nets on sparse XOR; success = test sign error <= 0.01 (SPEC A7.6)."""
    from .. import api

    seeds = config.pop("replicas")
    with steps_bar(f"fcn xor (d={d}, width={config['width']})", quiet) as bar:
        run = api.train_fcn("xor", d=d, seeds=seeds, progress=bar, force=force, **config)
    output("fcn xor", run.report(), as_json)


@fcn.command("select")
@config_options(
    SelectionFCNConfig, "d T q width replicas steps batch lr seed", flags={"replicas": "--seeds"}
)
def fcn_select(
    config: dict[str, Any], as_json: bool = JSON, quiet: bool = QUIET, force: bool = FORCE
) -> None:
    """Train an MLP on the concatenation (vec X, 1_y) for q-sparse averaging (SPEC B4, B5.4)."""
    from .. import api

    seeds = config.pop("replicas")
    with steps_bar(f"fcn select (T={config['T']}, width={config['width']})", quiet) as bar:
        run = api.train_fcn("select", seeds=seeds, progress=bar, force=force, **config)
    output("fcn select", run.report(), as_json)


@frontier.command("xor")
def frontier_xor_command(
    d: str = argument_of(frontier_xor, "d_values", "--d", "Input lengths, comma-separated."),
    seeds: int = argument_of(frontier_xor, "seeds", "--seeds", "Replicas per probe."),
    seed: int = argument_of(frontier_xor, "seed", "--seed", "Base seed."),
    store: Path = argument_of(frontier_xor, "store", "--store", STORE_HELP),
    as_json: bool = JSON,
) -> None:
    """One-step transformer against two-layer ReLU nets on sparse XOR.

    Success: test sign error <= 1% on fresh samples, in >= 90% of the replicas. The jobs are
    the separation-xor experiment's: stored in --store, and never computed twice.
    """
    from .. import api

    ds = int_list("--d", d, 2, increasing=True)
    result = api.frontier_xor(ds, seeds=seeds, seed=seed, store=store)
    print_result(result, as_json)


@frontier.command("select")
def frontier_select_command(
    T: str = argument_of(frontier_select, "T_values", "--T", "Sequence lengths, comma-separated."),
    d: int = argument_of(frontier_select, "d", "--d", "Token dimension."),
    q: str = argument_of(frontier_select, "q_values", "--q", Q_HELP),
    seeds: int = argument_of(frontier_select, "seeds", "--seeds", "Replicas per probe."),
    seed: int = argument_of(frontier_select, "seed", "--seed", "Base seed."),
    solver: str = argument_of(frontier_select, "solver", "--solver", SOLVER_HELP),
    store: Path = argument_of(frontier_select, "store", "--store", STORE_HELP),
    as_json: bool = JSON,
) -> None:
    """Selector width d + m_p* against the FCN's proven minimum first-layer width.

    m_p*: the smallest PE width whose selectors (position block, m_p*^2 parameters), run by
    population gradient descent from W = 0, reach loss <= 0.2 x the uniform-attention loss in
    >= 90% of the replicas. The descent stays on W = alpha I (rotation symmetry); --solver law
    evaluates its loss through the law of the encodings' products, at a cost independent of T.
    FCN: the least first-layer width any net on (vec X, 1_y) needs for that loss (SPEC B4).
    The jobs are the separation-select experiment's: stored in --store, never computed twice.
    """
    from .. import api

    Ts, qs = int_list("--T", T, 2, increasing=True), int_list("--q", q, 1, increasing=True)
    require(qs[-1] < Ts[0], f"--q must be < every T, got q={qs[-1]} and T={Ts[0]}")
    allowed = ", ".join(FRONTIER_SOLVERS)
    require(solver in FRONTIER_SOLVERS, f"--solver must be one of {allowed}, got {solver!r}")
    given: dict[str, Any] = {"d": d, "seeds": seeds, "seed": seed, "solver": solver, "store": store}
    result = api.frontier_select(Ts, qs, **given)
    print_result(result, as_json)
