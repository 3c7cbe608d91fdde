"""``attnsep fcn ...`` and ``attnsep frontier ...``: the fully-connected baselines, alone
(SPEC A7.6, B4, B5.4) and against the transformer: trainable parameters needed vs problem size
(SPEC A7.6, Part C, through the ``separation-xor`` and ``separation-select`` experiments)."""

from __future__ import annotations

from typing import Any

import typer

from .. import api
from ..configs import SelectionFCNConfig, XorFCNConfig
from .common import FORCE, JSON, QUIET, output, print_result, steps_bar
from .options import options_of

fcn = typer.Typer(no_args_is_help=True)  # its help: ``cli.app``
frontier = typer.Typer(no_args_is_help=True)


@fcn.command("xor")
@options_of(XorFCNConfig, skip="first_replica")
def fcn_xor(
    config: dict[str, Any], as_json: bool = JSON, quiet: bool = QUIET, force: bool = FORCE
) -> None:
    """Train two-layer ReLU nets on sparse XOR; success: test sign error <= --success-tol (SPEC
    A7.6)."""
    with steps_bar(f"fcn xor (d={config['d']}, width={config['width']})", quiet) as bar:
        run = api.train_fcn("xor", progress=bar, force=force, **config)
    output("fcn xor", run.report(), as_json)


@fcn.command("select")
@options_of(SelectionFCNConfig, skip="first_replica")
def fcn_select(
    config: dict[str, Any], as_json: bool = JSON, quiet: bool = QUIET, force: bool = FORCE
) -> None:
    """Train an MLP on the concatenation (vec X, 1_y) for q-sparse averaging (SPEC B4, B5.4)."""
    with steps_bar(f"fcn select (T={config['T']}, width={config['width']})", quiet) as bar:
        run = api.train_fcn("select", progress=bar, force=force, **config)
    output("fcn select", run.report(), as_json)


@frontier.command("xor")
@options_of(api.frontier_xor, "d_values seeds seed store", flags={"d_values": "--d"})
def frontier_xor(given: dict[str, Any], as_json: bool = JSON) -> None:
    """One-step transformer against two-layer ReLU nets on sparse XOR.

    Success: test sign error <= 1% on fresh samples, in >= 90% of the replicas. The jobs are
    the separation-xor experiment's: stored in --store, and never computed twice.
    """
    print_result(api.frontier_xor(**given), as_json)


@frontier.command("select")
@options_of(
    api.frontier_select,
    "T_values q_values d seeds seed solver store",
    flags={"T_values": "--T", "q_values": "--q"},
)
def frontier_select(given: dict[str, Any], as_json: bool = JSON) -> None:
    """Selector width d + m_p* against the FCN's proven minimum first-layer width.

    m_p*: the smallest PE width whose selectors (position block, m_p*^2 parameters), run by
    population gradient descent from W = 0, reach loss <= 0.2 x the uniform-attention loss in
    >= 90% of the replicas. The descent stays on W = alpha I (rotation symmetry); --solver law
    evaluates its loss through the law of the encodings' products, at a cost independent of T.
    FCN: the least first-layer width any net on (vec X, 1_y) needs for that loss (SPEC B4).
    The jobs are the separation-select experiment's: stored in --store, never computed twice.
    """
    print_result(api.frontier_select(**given), as_json)
