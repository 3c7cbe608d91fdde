"""``attnsep select ...``: sparse token selection — training and the closed-form bounds (SPEC B)."""

from __future__ import annotations

from typing import Any

import typer

from ..configs import EVAL_SIZE, SelectionTrainConfig, require
from .common import FORCE, QUIET, config_options, output, steps_bar
from .parse import parse_lengths

app = typer.Typer(no_args_is_help=True)  # its help: ``cli.COMMANDS``
BOUND_D_HELP = "token dimension for the reference losses; default 1 = per coordinate"


@app.command("train")
@config_options(
    SelectionTrainConfig,
    "d T q pe pe_dim pe_kind steps batch lr replicas seed trainable",
    flags={"replicas": "--seeds"},
)
def train_command(
    config: dict[str, Any],
    eval_lengths: str | None = typer.Option(None, "--eval-lengths", help="default T,2T,4T,8T"),
    eval_size: int = typer.Option(EVAL_SIZE, "--eval-size", help="sequences per eval length"),
    json_out: bool = typer.Option(False, "--json", help="one JSON object on stdout"),
    save: str | None = typer.Option(None, "--save", help="write W (and P) to FILE.npz"),
    quiet: bool = QUIET,
    force: bool = FORCE,
) -> None:
    """Train the selector with SGD; evaluate at several lengths (SPEC B3, B5.1, B5.3).

    A fixed PE is drawn once for positions 1..max(T, eval lengths): positions beyond T get
    encodings that training never saw, which is why fixed PE fails out of distribution.
    """
    from .. import api

    SelectionTrainConfig(**config)  # the fields first, then the lengths
    T, q, seeds = config["T"], config["q"], config.pop("replicas")
    config.update(
        m_p=config.pop("pe_dim"), eval_lengths=parse_lengths("--eval-lengths", eval_lengths, T, q)
    )
    require(eval_size >= 2, f"--eval-size must be an integer >= 2, got {eval_size}")
    with steps_bar(f"select train (T={T}, q={q})", quiet) as bar:
        run = api.train_selector(
            **config, seeds=seeds, eval_size=eval_size, save=save, progress=bar, force=force
        )
    output("select train", run.report(), json_out)


@app.command("bound")
def bound_command(
    T: int = typer.Option(..., "--T", help="sequence length"),
    q: int = typer.Option(..., "--q", help="subset size"),
    d: int | None = typer.Option(None, "--d", help=BOUND_D_HELP),
    width: int | None = typer.Option(None, "--width", help="FCN first-layer width (needs --d)"),
    json_out: bool = typer.Option(False, "--json", help="one JSON object on stdout"),
) -> None:
    """FCN loss floor and reference losses, exact (SPEC B4)."""
    from .. import api

    needs = "--width needs --d (the floor is (Td-w)(T-q)/(qT(T-1)))"
    require(width is None or d is not None, needs)
    output("select bound", api.selection_bounds(T, q, d, width), json_out)
