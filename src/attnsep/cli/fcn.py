"""``attnsep fcn ...``: the fully-connected baselines (SPEC A7.6, B4, B5.4)."""

from __future__ import annotations

import typer

from ..configs import SelectionFCNConfig, XorFCNConfig
from .common import emit_json, print_table
from .options import choices, lazy, option

train_xor = lazy("attnsep.train.fcn", "train_xor")
train_selection = lazy("attnsep.train.fcn", "train_selection")
fcn_xor_report = lazy("attnsep.results", "fcn_xor_report")
fcn_selection_report = lazy("attnsep.results", "fcn_selection_report")

app = typer.Typer(
    help="Fully-connected ReLU baselines on sparse XOR and token selection.", no_args_is_help=True
)


@app.command("xor")
def xor(
    d: int = typer.Option(..., "--d", help="Input length."),
    width: int = option(XorFCNConfig, "width"),
    seeds: int = option(XorFCNConfig, "replicas", "--seeds"),
    steps: int = option(XorFCNConfig, "steps"),
    batch: int = option(XorFCNConfig, "batch", help="Fresh samples per step."),
    lr: float | None = option(XorFCNConfig, "lr"),
    optimizer: str = option(XorFCNConfig, "optimizer"),
    loss: str = option(XorFCNConfig, "loss"),
    seed: int = option(XorFCNConfig, "seed"),
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
        seed=seed,
        **choices(optimizer=optimizer, loss=loss),
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
    d: int = option(SelectionFCNConfig, "d"),
    T: int = option(SelectionFCNConfig, "T"),
    q: int = option(SelectionFCNConfig, "q"),
    width: int = option(SelectionFCNConfig, "width"),
    seeds: int = option(SelectionFCNConfig, "replicas", "--seeds"),
    steps: int = option(SelectionFCNConfig, "steps"),
    batch: int = option(SelectionFCNConfig, "batch", help="Sequences per step."),
    lr: float = option(SelectionFCNConfig, "lr"),
    seed: int = option(SelectionFCNConfig, "seed"),
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
