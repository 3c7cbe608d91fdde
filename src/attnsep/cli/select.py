"""``attnsep select ...``: sparse token selection — training and the closed-form bounds (SPEC B)."""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from typing import Any

import torch
import typer
from rich.console import Console
from rich.table import Table

from ..device import torch_threads
from ..exact.selection import fcn_loss_floor, uniform_attention_loss, zero_predictor_loss
from ..io import save_npz, writable_target
from ..metrics.ensemble import summary
from ..metrics.selection import EVAL_SIZE, LengthEval, cos_to_ground_truth, evaluate_lengths
from ..positional import FixedPE
from ..tasks.selection import TokenSelection
from ..train.selection import SelectionTrainConfig, SelectionTrainResult, train
from ..validate import int_at_least, require
from .common import emit_json, print_table

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


def _mean(values: torch.Tensor) -> float:
    return float(values.mean())


def eval_record(row: LengthEval, T: int, q: int) -> dict[str, Any]:
    """One ``eval`` entry: replica means and the per-replica values.

    ``stderr`` of a mean is ``sqrt(Σ_e se_e²) / E``: the evaluation-set sampling error of the
    replica average (replicas have independent evaluation sets). ``exact_*`` is ``None`` when
    the exact-over-tokens form does not apply (content block of ``W`` nonzero).
    """
    n = row.loss.shape[0]
    exact = None if row.exact is None else row.exact.tolist()
    exact_se = None if row.exact_stderr is None else row.exact_stderr.tolist()
    return {
        "T": row.length,
        "in_distribution": row.length == T,
        "loss": _mean(row.loss),
        "loss_per_coord": _mean(row.loss_per_coord),
        "stderr": float(row.stderr.pow(2).sum().sqrt()) / n,
        "exact_loss": None if exact is None else _mean(row.exact),
        "exact_stderr": None
        if exact_se is None
        else float(row.exact_stderr.pow(2).sum().sqrt()) / n,
        "uniform_attention_loss": float(uniform_attention_loss(row.length, q, row.d)),
        "per_replica": {
            "loss": row.loss.tolist(),
            "stderr": row.stderr.tolist(),
            "exact_loss": exact,
            "exact_stderr": exact_se,
        },
    }


def save_run(path: str, result: SelectionTrainResult, rows: list[LengthEval], size: int) -> None:
    """``--save``: ``W`` (E x D x D), ``P`` for fixed PE, and what recomputes the eval losses."""
    c = result.config
    arrays: dict[str, Any] = {
        "W": result.W.numpy(),
        "train_losses": result.losses.numpy(),
        "seed": c.seed,
        "d": c.d,
        "T": c.T,
        "q": c.q,
        "pe_dim": c.pe_dim,
        "pe": c.pe,
        "pe_kind": c.pe_kind,
        "eval_size": size,
        "config": json.dumps(asdict(c)),
        "eval_lengths": [row.length for row in rows],
        "eval_loss": torch.stack([row.loss for row in rows], dim=1).numpy(),
        "eval_stderr": torch.stack([row.stderr for row in rows], dim=1).numpy(),
    }
    exact = [row.exact for row in rows if row.exact is not None]
    if len(exact) == len(rows):
        arrays["eval_exact"] = torch.stack(exact, dim=1).numpy()
    if isinstance(result.encodings, FixedPE):
        arrays["P"] = result.encodings.table.numpy()
    save_npz(path, **arrays)


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
    d: int = typer.Option(SelectionTrainConfig.d, "--d", help="token dimension"),
    T: int = typer.Option(SelectionTrainConfig.T, "--T", help="training sequence length"),
    q: int = typer.Option(SelectionTrainConfig.q, "--q", help="subset size"),
    pe: str = typer.Option(SelectionTrainConfig.pe, "--pe", help="stochastic | fixed"),
    pe_dim: int = typer.Option(
        SelectionTrainConfig.pe_dim, "--pe-dim", help="positional encoding width m_p"
    ),
    pe_kind: str = typer.Option("sphere", "--pe-kind", help="sphere | gaussian"),
    steps: int = typer.Option(SelectionTrainConfig.steps, "--steps"),
    batch: int = typer.Option(
        SelectionTrainConfig.batch, "--batch", help="fresh sequences per SGD step"
    ),
    lr: float = typer.Option(
        SelectionTrainConfig.lr, "--lr", help="SGD rate, decays linearly to 0"
    ),
    seeds: int = typer.Option(1, "--seeds", help="replicas E, trained at once"),
    seed: int = typer.Option(0, "--seed"),
    eval_lengths: str | None = typer.Option(None, "--eval-lengths", help="default T,2T,4T,8T"),
    eval_size: int = typer.Option(EVAL_SIZE, "--eval-size", help="sequences per eval length"),
    trainable: str = typer.Option(
        SelectionTrainConfig.trainable, "--trainable", help="full | position"
    ),
    json_out: bool = typer.Option(False, "--json", help="one JSON object on stdout"),
    save: str | None = typer.Option(None, "--save", help="write W (and P) to FILE.npz"),
) -> None:
    """Train the selector with SGD; evaluate at several lengths (SPEC B3, B5.1, B5.3).

    A fixed PE is drawn once for positions 1..max(T, eval lengths): positions beyond T get
    encodings that training never saw, which is why fixed PE fails out of distribution.
    """
    TokenSelection(d, T, q)  # size errors first
    lengths = parse_lengths(eval_lengths, T, q)
    int_at_least("--eval-size", eval_size, 2)
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
        fixed_positions=max([T, *lengths]) if pe == "fixed" else None,
    )
    if save is not None:
        writable_target(save, ".npz")
    start = time.perf_counter()
    with torch_threads(1):
        result = train(config)
        rows = evaluate_lengths(result.W, config.task, result.encodings, lengths, seed, eval_size)
    exact_ok = all(row.exact is not None for row in rows)
    report = {
        **{k: v for k, v in asdict(config).items() if k != "replicas"},
        "seeds": seeds,
        "optimizer": "sgd, lr linear decay to 0",
        "eval_size": eval_size,
        "train_loss": summary(result.train_loss.tolist()),
        "cos_to_ground_truth": summary(cos_to_ground_truth(result.W, d).tolist()),
        "exact_over_tokens": "applies (content block of W is zero)"
        if exact_ok
        else "not applicable: the content block of W is nonzero, so logits depend on the tokens",
        "eval": [eval_record(row, T, q) for row in rows],
        "seconds": time.perf_counter() - start,
    }
    if save is not None:
        save_run(save, result, rows, eval_size)
    if json_out:
        emit_json(report)
    else:
        print_train(report)


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
