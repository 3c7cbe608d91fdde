"""``attnsep select ...``: sparse token selection — training and the closed-form bounds (SPEC B)."""

from __future__ import annotations

import time
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from ..configs import EVAL_SIZE, SelectionTrainConfig
from ..io import writable_target
from ..validate import int_at_least, require
from .common import emit_json, print_table
from .options import lazy, option

train = lazy("attnsep.train.selection", "train")
evaluate_lengths = lazy("attnsep.metrics.selection", "evaluate_lengths")
torch_threads = lazy("attnsep.device", "torch_threads")

app = typer.Typer(
    help="Sparse token selection (q-sparse averaging): one-layer selector vs the FCN bound.",
    no_args_is_help=True,
)


def parse_lengths(text: str | None, T: int, q: int) -> list[int]:
    """``20,40,80`` -> ``[20, 40, 80]`` (each an integer >= q); ``None`` -> ``[T, 2T, 4T, 8T]``."""
    if text is None:
        return [T, 2 * T, 4 * T, 8 * T]
    parts = [part.strip() for part in text.split(",")]
    ok = all(part.isdigit() and int(part) >= max(q, 1) for part in parts)
    require(ok, f"--eval-lengths must be comma-separated integers >= q={q}, got {text!r}")
    return [int(part) for part in parts]


def print_train(report: dict[str, Any]) -> None:
    """The human view of ``select train``: a summary and the length-generalization table."""
    print_table(
        "select train",
        [
            ("d, T, q", f"{report['d']}, {report['T']}, {report['q']}"),
            ("PE (width, kind)", f"{report['pe']} ({report['pe_dim']}, {report['pe_kind']})"),
            ("trainable, optimizer", f"{report['trainable']}, {report['optimizer']}"),
            ("steps, batch, lr", f"{report['steps']}, {report['batch']}, {report['lr']:g}"),
            ("replicas (seed)", f"{report['seeds']} ({report['seed']})"),
            ("train loss (mean)", f"{report['train_loss']['mean']:.4g}"),
            (
                "cos(W, W*) (mean / min)",
                f"{report['cos_to_ground_truth']['mean']:.4f} / "
                f"{min(report['cos_to_ground_truth']['values']):.4f}",
            ),
            ("exact over tokens", report["exact_over_tokens"]),
            ("seconds", f"{report['seconds']:.1f}"),
        ],
    )
    table = Table(title="length generalization (replica means)", header_style="bold")
    for name in ("T'", "loss ± stderr", "per coord", "exact ± stderr", "uniform attention"):
        table.add_column(name, justify="right")
    for row in report["eval"]:
        exact = (
            "n/a"
            if row["exact_loss"] is None
            else f"{row['exact_loss']:.4g} ± {row['exact_stderr']:.2g}"
        )
        table.add_row(
            str(row["T"]),
            f"{row['loss']:.4g} ± {row['stderr']:.2g}",
            f"{row['loss_per_coord']:.4g}",
            exact,
            f"{row['uniform_attention_loss']:.4g}",
        )
    Console().print(table)


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
) -> None:
    """Train the selector with SGD; evaluate at several lengths (SPEC B3, B5.1, B5.3).

    A fixed PE is drawn once for positions 1..max(T, eval lengths): positions beyond T get
    encodings that training never saw, which is why fixed PE fails out of distribution.
    """
    config = SelectionTrainConfig(
        d=d,
        T=T,
        q=q,
        pe=pe,
        pe_dim=pe_dim,
        pe_kind=pe_kind,
        trainable=trainable,
        steps=steps,
        batch=batch,
        lr=lr,
        replicas=seeds,
        seed=seed,
    )
    lengths = parse_lengths(eval_lengths, T, q)
    int_at_least("--eval-size", eval_size, 2)
    if pe == "fixed":
        config = config.replace(fixed_positions=max([T, *lengths]))
    if save is not None:
        writable_target(save, ".npz")
    from ..results import SelectorResult

    start = time.perf_counter()
    with torch_threads(1):
        result = train(config)
        rows = evaluate_lengths(result.W, config.task, result.encodings, lengths, seed, eval_size)
    run = SelectorResult(result, tuple(rows), time.perf_counter() - start, eval_size)
    if save is not None:
        run.save(save)
    if json_out:
        emit_json(run.report())
    else:
        print_train(run.report())


@app.command("bound")
def bound_command(
    T: int = typer.Option(..., "--T", help="sequence length"),
    q: int = typer.Option(..., "--q", help="subset size"),
    d: int | None = typer.Option(
        None, "--d", help="token dimension for the reference losses; default 1 = per coordinate"
    ),
    width: int | None = typer.Option(None, "--width", help="FCN first-layer width (needs --d)"),
    json_out: bool = typer.Option(False, "--json", help="one JSON object on stdout"),
) -> None:
    """FCN loss floor and reference losses, exact (SPEC B4)."""
    from ..exact.selection import fcn_loss_floor, uniform_attention_loss, zero_predictor_loss

    require(
        width is None or d is not None, "--width needs --d (the floor is (Td-w)(T-q)/(qT(T-1)))"
    )
    dims = 1 if d is None else d
    floor = fcn_loss_floor(T, q, d, width)
    uniform, zero = uniform_attention_loss(T, q, dims), zero_predictor_loss(q, dims)
    report = {
        "T": T,
        "q": q,
        "d": dims,
        "width": width,
        "per_coordinate": d is None,
        "fcn_loss_floor": float(floor),
        "fcn_loss_floor_fraction": str(floor),
        "fcn_loss_floor_form": "(T-q)/(qT(T-1)), any first-layer width <= Td-1"
        if width is None
        else "(Td-w)(T-q)/(qT(T-1)), 0 once w >= Td",
        "uniform_attention_loss": float(uniform),
        "uniform_attention_loss_fraction": str(uniform),
        "zero_predictor_loss": float(zero),
        "zero_predictor_loss_fraction": str(zero),
        "reference_losses": "per coordinate (d=1)"
        if d is None
        else f"summed over d={d} coordinates",
    }
    if json_out:
        emit_json(report)
        return
    print_table(
        f"select bound (T={T}, q={q})",
        [
            ("FCN loss floor", f"{floor} = {float(floor):.6g}  [{report['fcn_loss_floor_form']}]"),
            ("uniform attention (W = 0)", f"{uniform} = {float(uniform):.6g}"),
            ("predicting zero", f"{zero} = {float(zero):.6g}"),
            ("reference losses are", report["reference_losses"]),
        ],
    )
