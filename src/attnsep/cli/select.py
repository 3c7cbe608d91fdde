"""``attnsep select ...``: sparse token selection — training and the closed-form bounds (SPEC B)."""

from __future__ import annotations

from typing import Any

import typer

from .. import api
from ..configs import SelectionTrainConfig
from .common import FORCE, JSON, QUIET, output, steps_bar
from .options import int_list, options_of

app = typer.Typer(no_args_is_help=True)  # its help: ``cli.app``


@app.command("train")
@options_of(SelectionTrainConfig, skip="fixed_positions")
@options_of(api.train_selector, "eval_size save")
def train(
    config: dict[str, Any],
    eval_lengths: str | None = typer.Option(None, "--eval-lengths", help="Default: T,2T,4T,8T."),
    as_json: bool = JSON,
    quiet: bool = QUIET,
    force: bool = FORCE,
) -> None:
    """Train the selector with SGD; evaluate at several lengths (SPEC B3, B5.1, B5.3).

    A fixed PE is drawn once for positions 1..max(T, eval lengths): positions beyond T get
    encodings that training never saw, which is why fixed PE fails out of distribution.
    """
    T, q = config["T"], config["q"]
    given = None if eval_lengths is None else int_list("--eval-lengths", eval_lengths)
    config["eval_lengths"] = [T, 2 * T, 4 * T, 8 * T] if given is None else given
    with steps_bar(f"select train (T={T}, q={q})", quiet) as bar:
        run = api.train_selector(**config, progress=bar, force=force)
    output("select train", run.report(), as_json)


@app.command("bound")
@options_of(api.selection_bounds, "T q d width")
def bound(given: dict[str, Any], as_json: bool = JSON) -> None:
    """FCN loss floor and reference losses, exact (SPEC B4)."""
    output("select bound", api.selection_bounds(**given), as_json)
