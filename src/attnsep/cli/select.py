"""``attnsep select ...``: sparse token selection — training and the closed-form bounds (SPEC B)."""

from __future__ import annotations

import typer

from ..configs import EVAL_SIZE, SelectionTrainConfig, parse_lengths, require
from .common import FORCE, QUIET, fields, option, output, steps_bar

app = typer.Typer(
    help="Sparse token selection (q-sparse averaging): one-layer selector vs the FCN bound.",
    no_args_is_help=True,
)
BOUND_D_HELP = "token dimension for the reference losses; default 1 = per coordinate"


@app.command("train")
def train_command(
    d: int = option(SelectionTrainConfig, "d"),
    T: int = option(SelectionTrainConfig, "T"),
    q: int = option(SelectionTrainConfig, "q"),
    pe: str = option(SelectionTrainConfig, "pe"),
    pe_dim: int = option(SelectionTrainConfig, "pe_dim"),
    pe_kind: str = option(SelectionTrainConfig, "pe_kind"),
    steps: int = option(SelectionTrainConfig, "steps"),
    batch: int = option(SelectionTrainConfig, "batch"),
    lr: float = option(SelectionTrainConfig, "lr"),
    seeds: int = option(SelectionTrainConfig, "replicas", "--seeds"),
    seed: int = option(SelectionTrainConfig, "seed"),
    eval_lengths: str | None = typer.Option(None, "--eval-lengths", help="default T,2T,4T,8T"),
    eval_size: int = typer.Option(EVAL_SIZE, "--eval-size", help="sequences per eval length"),
    trainable: str = option(SelectionTrainConfig, "trainable"),
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

    given = fields(SelectionTrainConfig, locals())
    SelectionTrainConfig(**given, replicas=seeds)  # the fields first, then the lengths
    given.update(
        m_p=given.pop("pe_dim"), eval_lengths=parse_lengths("--eval-lengths", eval_lengths, T, q)
    )
    require(eval_size >= 2, f"--eval-size must be an integer >= 2, got {eval_size}")
    with steps_bar(f"select train (T={T}, q={q})", quiet) as bar:
        run = api.train_selector(
            **given, seeds=seeds, eval_size=eval_size, save=save, progress=bar, force=force
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
