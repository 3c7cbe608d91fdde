"""``attnsep xor ...``: the sparse-XOR one-step experiment (SPEC A5, A6)."""

from __future__ import annotations

import json
from dataclasses import asdict

import typer

from .. import attention
from ..io import save_npz, writable_target
from ..one_step import OneStepConfig, OneStepResult, run_one_step, summarize
from ..validate import require
from .common import emit_json, print_table

app = typer.Typer(
    help="Sparse XOR / k-sparse parity with the query-vector attention model.", no_args_is_help=True
)


def parse_eta(text: str) -> float | None:
    """``auto`` or a finite positive float."""
    if text == "auto":
        return None
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    require(
        value > 0 and value != float("inf"),
        f"--eta must be 'auto' or a finite number > 0, got {text!r}",
    )
    return value


def parse_samples(text: str) -> int | None:
    """``population`` or a positive integer sample count."""
    if text == "population":
        return None
    require(
        text.isdigit() and int(text) >= 1,
        f"--samples must be 'population' or an integer >= 1, got {text!r}",
    )
    return int(text)


def parse_support(text: str | None) -> tuple[int, ...] | None:
    """``I,J[,...]`` as a tuple of integers."""
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",")]
    ok = all(p.lstrip("-").isdigit() for p in parts)
    require(ok, f"--support must be comma-separated integers like 3,17, got {text!r}")
    return tuple(int(p) for p in parts)


def save_result(path: str, result: OneStepResult) -> None:
    """The ``--save`` archive: V, theta before/after, support, eta and per-replica metrics."""
    require(result.embeddings is not None, "internal: embeddings were not kept")
    save_npz(
        path,
        V=result.embeddings,
        theta_before=result.theta_before,
        theta_after=result.theta_after,
        support=result.support.astype("int64"),
        eta=result.eta,
        loss_before=result.loss_before,
        loss_after=result.loss_after,
        certified_error=result.certified_error,
        config=json.dumps(asdict(result.config)),
    )


def human_summary(summary: dict) -> None:
    rows = [
        ("d, m, heads", f"{summary['d']}, {summary['m']}, {summary['k']}"),
        ("replicas (seed)", f"{summary['seeds']} ({summary['seed']})"),
        ("attention", summary["attention"]),
        (
            "gradient",
            summary["gradient"]
            + ("" if summary["samples"] is None else f" (n={summary['samples']})"),
        ),
        ("eta", f"{summary['eta']:.6g}"),
        ("trainable parameters", str(summary["trainable_params"])),
        (
            "loss before (mean / median)",
            f"{summary['loss_before']['mean']:.4g} / {summary['loss_before']['median']:.4g}",
        ),
        (
            "loss after (mean / median)",
            f"{summary['loss_after']['mean']:.4g} / {summary['loss_after']['median']:.4g}",
        ),
        (
            "success rate",
            f"{summary['success_rate']:.3f}  (certified error <= {summary['success_tol']:g})",
        ),
        ("specialization rate", f"{summary['specialization_rate']:.3f}"),
        ("collapse rate", f"{summary['collapse_rate']:.3f}"),
        (
            "support mass (mean / min)",
            f"{summary['support_mass']['mean']:.4f} / {summary['support_mass']['min']:.4f}",
        ),
        (
            "certified error (median / max)",
            f"{summary['certified_error']['median']:.3g} / {summary['certified_error']['max']:.3g}",
        ),
    ]
    print_table("sparse parity: one gradient step", rows)


@app.command("one-step")
def one_step(
    d: int = typer.Option(..., "--d", help="Input length (number of positions)."),
    m: int = typer.Option(32, "--m", help="Embedding width; trainable parameters = heads * m."),
    seeds: int = typer.Option(64, "--seeds", help="Number of independent replicas."),
    seed: int = typer.Option(0, "--seed", help="Base seed; replica e uses streams (seed, e, ...)."),
    attention_map: str = typer.Option(
        "softmax", "--attention", help=f"Attention map: {', '.join(sorted(attention.ATTENTION))}."
    ),
    eta: str = typer.Option("auto", "--eta", help="Step size, or 'auto' = eta-scale * d^2 * ln d."),
    eta_scale: float = typer.Option(
        16.0, "--eta-scale", help="Constant of the automatic step size."
    ),
    samples: str = typer.Option(
        "population",
        "--samples",
        help="'population' (exact gradient) or a sample count N (empirical).",
    ),
    support: str | None = typer.Option(
        None, "--support", help="Fixed support I,J (default: uniform per replica)."
    ),
    k: int = typer.Option(2, "--k", help="Support size = number of heads (2 = XOR)."),
    noise: float = typer.Option(0.0, "--noise", help="Label-flip probability in [0, 0.5)."),
    init: str = typer.Option("antisymmetric", "--init", help="antisymmetric or independent."),
    success_tol: float = typer.Option(
        0.1, "--success-tol", help="Success: certified error <= this."
    ),
    dtype: str = typer.Option("float64", "--dtype", help="float64 or float32."),
    device: str = typer.Option("auto", "--device", help="auto, cpu or cuda."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of a table."),
    save: str | None = typer.Option(
        None, "--save", help="Write the state and metrics to FILE.npz."
    ),
) -> None:
    """One gradient step of the two-head (k-head) attention model on sparse XOR (k-parity)."""
    config = OneStepConfig(
        d=d,
        m=m,
        seeds=seeds,
        seed=seed,
        attention=attention_map,
        eta=parse_eta(eta),
        eta_scale=eta_scale,
        samples=parse_samples(samples),
        support=parse_support(support),
        k=k,
        noise=noise,
        init=init,
        success_tol=success_tol,
        dtype=dtype,
        device=device,
    )
    if save is not None:
        writable_target(save, ".npz")
    result = run_one_step(config, keep_embeddings=save is not None)
    if save is not None:
        save_result(save, result)
    summary = summarize(result)
    if as_json:
        emit_json(summary)
    else:
        human_summary(summary)
