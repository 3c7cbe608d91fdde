"""``attnsep select ...``: sparse token selection — training and the closed-form bounds (SPEC B)."""

from __future__ import annotations

from typing import Any

import typer

from ..configs import EVAL_SIZE, SelectionTrainConfig
from ..core.io import writable_target
from ..core.validate import int_at_least, require
from .common import console, emit_json, print_table, table
from .options import int_list, lazy, option

train = lazy("attnsep.api", "train_selector")

app = typer.Typer(
    help="Sparse token selection (q-sparse averaging): one-layer selector vs the FCN bound.",
    no_args_is_help=True,
)


def parse_lengths(text: str | None, T: int, q: int) -> list[int]:
    """``20,40,80`` -> ``[20, 40, 80]`` (each an integer >= q); ``None`` -> ``[T, 2T, 4T, 8T]``."""
    if text is None:
        return [T, 2 * T, 4 * T, 8 * T]
    lengths = int_list("--eval-lengths", text, 1)
    require(min(lengths) >= q, f"--eval-lengths must be integers >= q={q}, got {text!r}")
    return lengths


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
    columns = ("T'", "loss ± stderr", "per coord", "exact ± stderr", "uniform attention")
    made = table("length generalization (replica means)", columns, "right", header_style="bold")
    for row in report["eval"]:
        exact = (
            "n/a"
            if row["exact_loss"] is None
            else f"{row['exact_loss']:.4g} ± {row['exact_stderr']:.2g}"
        )
        made.add_row(
            str(row["T"]),
            f"{row['loss']:.4g} ± {row['stderr']:.2g}",
            f"{row['loss_per_coord']:.4g}",
            exact,
            f"{row['uniform_attention_loss']:.4g}",
        )
    console().print(made)


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
    fields: dict[str, Any] = {
        "d": d,
        "pe": pe,
        "pe_kind": pe_kind,
        "trainable": trainable,
        "steps": steps,
        "batch": batch,
        "lr": lr,
        "seed": seed,
    }
    SelectionTrainConfig(T=T, q=q, pe_dim=pe_dim, replicas=seeds, **fields)  # checked first
    lengths = parse_lengths(eval_lengths, T, q)
    int_at_least("--eval-size", eval_size, 2)
    if save is not None:
        writable_target(save, ".npz")
    run = train(T, q, pe_dim, seeds=seeds, eval_lengths=lengths, eval_size=eval_size, **fields)
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
    from ..exact.selection_bounds import selection_bounds_report

    require(
        width is None or d is not None, "--width needs --d (the floor is (Td-w)(T-q)/(qT(T-1)))"
    )
    report = selection_bounds_report(T, q, d, width)
    if json_out:
        emit_json(report)
        return

    def exact(name: str) -> str:
        return f"{report[name + '_fraction']} = {report[name]:.6g}"

    print_table(
        f"select bound (T={T}, q={q})",
        [
            ("FCN loss floor", f"{exact('fcn_loss_floor')}  [{report['fcn_loss_floor_form']}]"),
            ("uniform attention (W = 0)", exact("uniform_attention_loss")),
            ("predicting zero", exact("zero_predictor_loss")),
            ("reference losses are", report["reference_losses"]),
        ],
    )
