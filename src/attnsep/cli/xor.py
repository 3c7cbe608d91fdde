"""``attnsep xor ...``: one gradient step and training of the k-head model on sparse parity
(SPEC A5, A6)."""

from __future__ import annotations

from typing import Any

import typer

from .. import api
from ..configs import OneStepConfig, V1Config, XorTrainConfig
from .common import FORCE, JSON_TABLE, QUIET, output, steps_bar
from .options import options_of

app = typer.Typer(no_args_is_help=True)  # its help: ``cli.app``


@app.command("one-step")
@options_of(OneStepConfig)
@options_of(api.xor_one_step, "save")
def one_step(config: dict[str, Any], as_json: bool = JSON_TABLE, force: bool = FORCE) -> None:
    """One gradient step of the two-head (k-head) attention model on sparse XOR (k-parity)."""
    output("xor one-step", api.xor_one_step(**config, force=force).report(), as_json)


@app.command("train")
@options_of(XorTrainConfig)
@options_of(api.xor_train, "save figures")
def train(config: dict[str, Any], as_json: bool = JSON_TABLE, quiet: bool = QUIET) -> None:
    """Many steps of the k-head model on k-sparse parity: exact population GD, or SGD / Adam on
    samples; all replicas in one batched computation. The authors' earlier 4x4 model:
    'attnsep xor train-v1'."""
    with steps_bar(f"xor train (d={config['d']}, k={config['k']})", quiet) as progress:
        result = api.xor_train(**config, progress=progress)
    report = result.report()
    output("xor train", report, as_json)
    for path in [] if as_json else report.get("figures", []):
        typer.echo(f"figure: {path}")


@app.command("train-v1")
@options_of(V1Config)
def train_v1(config: dict[str, Any], as_json: bool = JSON_TABLE, quiet: bool = QUIET) -> None:
    """The authors' earlier k-parity model (4x4 attention matrices with two trainable entries, a
    fixed ReLU read-out; module attnsep.models.kparity_v1), trained as they describe."""

    with steps_bar(f"xor train-v1 (n={config['n']}, k={config['k']})", quiet) as progress:
        report = api.xor_train_v1(**config, progress=progress)
    output("xor train-v1", report, as_json)
