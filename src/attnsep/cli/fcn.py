"""``attnsep fcn ...``: the fully-connected baselines (SPEC A7.6, B4, B5.4)."""

from __future__ import annotations

import typer

from ..results import fcn_selection_report, fcn_xor_report
from ..train.fcn import (
    OPTIMIZERS,
    XOR_LOSSES,
    SelectionFCNConfig,
    XorFCNConfig,
    train_selection,
    train_xor,
)
from .common import emit_json, print_table

app = typer.Typer(
    help="Fully-connected ReLU baselines on sparse XOR and token selection.", no_args_is_help=True
)


@app.command("xor")
def xor(
    d: int = typer.Option(..., "--d", help="Input length."),
    width: int = typer.Option(
        XorFCNConfig.width, "--width", help="Hidden width; parameters = width*(d+2)+1."
    ),
    seeds: int = typer.Option(XorFCNConfig.replicas, "--seeds", help="Independent replicas."),
    steps: int = typer.Option(
        XorFCNConfig.steps,
        "--steps",
        help="Most steps (a replica stops once perfect on validation).",
    ),
    batch: int = typer.Option(XorFCNConfig.batch, "--batch", help="Fresh samples per step."),
    lr: float | None = typer.Option(
        None, "--lr", help="Learning rate [default: sgd min(0.1, 25/width), adam 0.01]."
    ),
    optimizer: str = typer.Option(
        XorFCNConfig.optimizer, "--optimizer", help=" or ".join(OPTIMIZERS)
    ),
    loss: str = typer.Option(XorFCNConfig.loss, "--loss", help=" or ".join(XOR_LOSSES)),
    seed: int = typer.Option(0, "--seed", help="Base seed; replica e uses streams (seed, e, ...)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Train two-layer ReLU nets on sparse XOR; success = test sign error <= 0.01 (SPEC A7.6)."""
    cfg = XorFCNConfig(
        d=d,
        width=width,
        replicas=seeds,
        steps=steps,
        batch=batch,
        lr=lr,
        optimizer=optimizer,
        loss=loss,
        seed=seed,
    )
    out = fcn_xor_report(cfg, train_xor(cfg))
    if as_json:
        emit_json(out)
        return
    print_table(
        "sparse XOR: two-layer ReLU net",
        [
            ("d, width (params)", f"{d}, {width} ({out['params']})"),
            ("replicas (seed)", f"{seeds} ({seed})"),
            ("optimizer, loss, lr", f"{optimizer}, {loss}, {cfg.rate:g}"),
            (
                "steps run (median / max)",
                f"{out['steps_run']['median']:g} / {max(out['steps_run']['values']):g}",
            ),
            (
                "test error (mean / median)",
                f"{out['test_error']['mean']:.4f} / {out['test_error']['median']:.4f}",
            ),
            ("final test loss (mean)", f"{out['final_loss']['mean']:.4g}"),
            (
                "success rate (95% CI)",
                f"{out['success_rate']:.3f} "
                f"({out['success_interval'][0]:.2f}-{out['success_interval'][1]:.2f})",
            ),
        ],
    )


@app.command("select")
def select(
    d: int = typer.Option(SelectionFCNConfig.d, "--d", help="Token dimension."),
    T: int = typer.Option(SelectionFCNConfig.T, "--T", help="Sequence length."),
    q: int = typer.Option(SelectionFCNConfig.q, "--q", help="Subset size."),
    width: int = typer.Option(SelectionFCNConfig.width, "--width", help="First-layer width."),
    seeds: int = typer.Option(SelectionFCNConfig.replicas, "--seeds", help="Replicas."),
    steps: int = typer.Option(SelectionFCNConfig.steps, "--steps", help="Training steps."),
    batch: int = typer.Option(SelectionFCNConfig.batch, "--batch", help="Sequences per step."),
    lr: float = typer.Option(SelectionFCNConfig.lr, "--lr", help="Adam learning rate."),
    seed: int = typer.Option(0, "--seed", help="Base seed; replica e uses streams (seed, e, ...)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Train an MLP on the concatenation (vec X, 1_y) for q-sparse averaging (SPEC B4, B5.4)."""
    cfg = SelectionFCNConfig(
        d=d, T=T, q=q, width=width, replicas=seeds, steps=steps, batch=batch, lr=lr, seed=seed
    )
    out = fcn_selection_report(cfg, train_selection(cfg))
    if as_json:
        emit_json(out)
        return
    print_table(
        "token selection: MLP on (vec X, 1_y)",
        [
            ("d, T, q", f"{d}, {T}, {q}"),
            ("width (Td), params", f"{width} ({T * d}), {out['params']}"),
            ("replicas (seed)", f"{seeds} ({seed})"),
            (
                "eval loss (mean / median)",
                f"{out['loss']['mean']:.4g} / {out['loss']['median']:.4g}",
            ),
            ("stderr (mean)", f"{out['stderr']['mean']:.2g}"),
            ("train loss (mean)", f"{out['train_loss']['mean']:.4g}"),
            ("FCN floor (SPEC B4)", f"{out['fcn_loss_floor']:.4g} = {out['fcn_loss_floor_exact']}"),
        ],
    )
