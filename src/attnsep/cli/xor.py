"""``attnsep xor ...``: one gradient step and training of the k-head model on sparse parity
(SPEC A5, A6)."""

from __future__ import annotations

import typer

from ..configs import (
    ADAM_LR,
    OneStepConfig,
    V1Config,
    XorTrainConfig,
    auto_or_positive,
    int_list,
    population_or_count,
)
from .common import FORCE, JSON_TABLE, QUIET, fields, option, output, steps_bar

app = typer.Typer(
    help="Sparse XOR / k-sparse parity with the query-vector attention model.", no_args_is_help=True
)
SAMPLES_HELP = "'population' (exact gradient) or a sample count N (empirical)."
SUPPORT_HELP = "Fixed support I,J (default: uniform per replica)."
STEP_SAVE_HELP = "Write the state and metrics to FILE.npz."
TRAIN_SAVE_HELP = "Write trajectories and state to FILE.npz (attnsep.load reads it)."
FIGURES_HELP = "Draw train_loss.png and train_attention.png into this folder."
TRAIN_ETA_HELP = f"Step size, or 'auto' (gd: eta-scale * d^k * ln d; adam: {ADAM_LR:g})."


@app.command("one-step")
def one_step(
    d: int = option(OneStepConfig, "d"),
    m: int = option(OneStepConfig, "m"),
    seeds: int = option(OneStepConfig, "seeds"),
    seed: int = option(OneStepConfig, "seed"),
    attention: str = option(OneStepConfig, "attention"),
    eta: str = typer.Option("auto", "--eta", help="Step size, or 'auto' = eta-scale * d^2 * ln d."),
    eta_scale: float = option(OneStepConfig, "eta_scale"),
    samples: str = typer.Option("population", "--samples", help=SAMPLES_HELP),
    gradient: str = option(OneStepConfig, "gradient"),
    support: str | None = typer.Option(None, "--support", help=SUPPORT_HELP),
    k: int = option(OneStepConfig, "k"),
    noise: float = option(OneStepConfig, "noise"),
    init: str = option(OneStepConfig, "init"),
    success_tol: float = option(OneStepConfig, "success_tol"),
    dtype: str = option(OneStepConfig, "dtype"),
    device: str = option(OneStepConfig, "device"),
    as_json: bool = JSON_TABLE,
    save: str | None = typer.Option(None, "--save", help=STEP_SAVE_HELP),
    force: bool = FORCE,
) -> None:
    """One gradient step of the two-head (k-head) attention model on sparse XOR (k-parity)."""
    from .. import api

    given = fields(OneStepConfig, locals())
    given.update(
        eta=auto_or_positive("--eta", eta), samples=population_or_count("--samples", samples)
    )
    given["support"] = None if support is None else tuple(int_list("--support", support, None))
    output("xor one-step", api.xor_one_step(**given, save=save, force=force).report(), as_json)


@app.command("train")
def train(
    d: int = option(XorTrainConfig, "d"),
    m: int = option(XorTrainConfig, "m"),
    k: int = option(XorTrainConfig, "k"),
    seeds: int = option(XorTrainConfig, "seeds"),
    seed: int = option(XorTrainConfig, "seed"),
    steps: int = option(XorTrainConfig, "steps"),
    attention: str = option(XorTrainConfig, "attention"),
    gradient: str = option(XorTrainConfig, "gradient"),
    samples: int | None = option(XorTrainConfig, "samples"),
    cube_fraction: float | None = option(XorTrainConfig, "cube_fraction"),
    batch: int | None = option(XorTrainConfig, "batch"),
    optimizer: str = option(XorTrainConfig, "optimizer"),
    eta: str = typer.Option("auto", "--eta", help=TRAIN_ETA_HELP),
    eta_scale: float = option(XorTrainConfig, "eta_scale"),
    init: str = option(XorTrainConfig, "init"),
    noise: float = option(XorTrainConfig, "noise"),
    success_tol: float = option(XorTrainConfig, "success_tol"),
    stop_at_success: bool = option(XorTrainConfig, "stop_at_success"),
    dtype: str = option(XorTrainConfig, "dtype"),
    device: str = option(XorTrainConfig, "device"),
    as_json: bool = JSON_TABLE,
    save: str | None = typer.Option(None, "--save", help=TRAIN_SAVE_HELP),
    figures_dir: str | None = typer.Option(None, "--figures", help=FIGURES_HELP),
    quiet: bool = QUIET,
) -> None:
    """Many steps of the k-head model on k-sparse parity: exact population GD, or SGD / Adam on
    samples; all replicas in one batched computation. The authors' earlier 4x4 model:
    'attnsep xor train-v1'."""
    from .. import api

    given = {**fields(XorTrainConfig, locals()), "eta": auto_or_positive("--eta", eta)}
    with steps_bar(f"xor train (d={d}, k={k})", quiet) as progress:
        result = api.xor_train(**given, progress=progress, save=save, figures=figures_dir)
    report = result.report()
    output("xor train", report, as_json)
    for path in [] if as_json else report.get("figures", []):
        typer.echo(f"figure: {path}")


@app.command("train-v1")
def train_v1(
    n: int = option(V1Config, "n"),
    k: int = option(V1Config, "k"),
    seeds: int = option(V1Config, "seeds"),
    seed: int = option(V1Config, "seed", help="Base seed (same split and support as xor train)."),
    epochs: int = option(V1Config, "epochs"),
    lr: float = option(V1Config, "lr"),
    train_fraction: float = option(V1Config, "train_fraction"),
    target: float | None = option(V1Config, "target"),
    as_json: bool = JSON_TABLE,
    quiet: bool = QUIET,
) -> None:
    """The authors' earlier k-parity model (4x4 attention matrices with two trainable entries, a
    fixed ReLU read-out; module attnsep.models.kparity_v1), trained as they describe."""
    from .. import api

    given = fields(V1Config, locals())
    with steps_bar(f"xor train-v1 (n={n}, k={k})", quiet) as progress:
        report = api.xor_train_v1(**given, progress=progress)
    output("xor train-v1", report, as_json)
