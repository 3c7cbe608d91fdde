"""``attnsep xor ...``: one gradient step and training of the k-head model on sparse parity
(SPEC A5, A6)."""

from __future__ import annotations

import typer

from ..configs import ADAM_LR, OneStepConfig, V1Config, XorTrainConfig
from ..core.io import writable_folder, writable_target
from ..core.validate import require
from .common import emit_json, print_table, progress_bar
from .options import choices, int_list, lazy, option

run_one_step = lazy("attnsep.train.one_step", "run_one_step")
summarize = lazy("attnsep.train.one_step", "summarize")
train_xor = lazy("attnsep.train.xor_train", "train_xor")
train_v1 = lazy("attnsep.train.kparity_v1", "train_v1")
torch_threads = lazy("attnsep.core.device", "torch_threads")

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
        text.isdecimal() and int(text) >= 1,
        f"--samples must be 'population' or an integer >= 1, got {text!r}",
    )
    return int(text)


def parse_support(text: str | None) -> tuple[int, ...] | None:
    """``I,J[,...]`` as a tuple of integers (the config checks them against ``d`` and ``k``)."""
    return None if text is None else tuple(int_list("--support", text, None))


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
    d: int = option(OneStepConfig, "d"),
    m: int = option(OneStepConfig, "m"),
    seeds: int = option(OneStepConfig, "seeds"),
    seed: int = option(OneStepConfig, "seed"),
    attention_map: str = option(OneStepConfig, "attention"),
    eta: str = typer.Option("auto", "--eta", help="Step size, or 'auto' = eta-scale * d^2 * ln d."),
    eta_scale: float = option(OneStepConfig, "eta_scale"),
    samples: str = typer.Option(
        "population",
        "--samples",
        help="'population' (exact gradient) or a sample count N (empirical).",
    ),
    gradient: str = option(OneStepConfig, "gradient"),
    support: str | None = typer.Option(
        None, "--support", help="Fixed support I,J (default: uniform per replica)."
    ),
    k: int = option(OneStepConfig, "k"),
    noise: float = option(OneStepConfig, "noise"),
    init: str = option(OneStepConfig, "init"),
    success_tol: float = option(OneStepConfig, "success_tol"),
    dtype: str = option(OneStepConfig, "dtype"),
    device: str = option(OneStepConfig, "device"),
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
        eta=parse_eta(eta),
        eta_scale=eta_scale,
        samples=parse_samples(samples),
        support=parse_support(support),
        k=k,
        noise=noise,
        success_tol=success_tol,
        **choices(
            attention=attention_map, gradient=gradient, init=init, dtype=dtype, device=device
        ),
    )
    if save is not None:
        writable_target(save, ".npz")
    result = run_one_step(config, keep_embeddings=save is not None)
    if save is not None:
        result.save(save)
    summary = summarize(result)
    if as_json:
        emit_json(summary)
    else:
        human_summary(summary)


def train_rows(summary: dict) -> list[tuple[str, str]]:
    steps = summary["steps_to_success"]
    reached = [s for s in steps["values"] if s is not None]
    median = "not reached by half" if steps["median"] is None else f"{steps['median']:g}"
    spread = f" (range {min(reached)}-{max(reached)})" if reached else ""
    data = summary["gradient"]
    if summary["cube_fraction"] is not None:
        data += f", {summary['cube_fraction']:g} of the cube"
    elif summary["samples"] is not None:
        data += f", n={summary['samples']}"
    if summary["batch"] is not None:
        data += f", batch {summary['batch']}"
    rows = [
        ("d, m, heads", f"{summary['d']}, {summary['m']}, {summary['k']}"),
        ("replicas (seed)", f"{summary['seeds']} ({summary['seed']})"),
        ("attention", summary["attention"]),
        ("gradient", data),
        ("optimizer, step size", f"{summary['optimizer']}, {summary['eta']:.6g}"),
        ("steps run", f"{summary['steps_run']} of {summary['steps']}"),
        ("wall time", f"{summary['seconds']:.2f} s"),
        (
            "population loss initial / final (median)",
            f"{summary['loss_initial']['median']:.4g} / {summary['loss_final']['median']:.4g}",
        ),
        (
            "success rate (final)",
            f"{summary['success_rate']:.3f}  (certified error <= {summary['success_tol']:g})",
        ),
        ("reached success at some step", f"{summary['reached_rate']:.3f}"),
        ("steps to success (median)", median + spread),
        (
            "specialization / collapse (final)",
            f"{summary['specialization_rate']:.3f} / {summary['collapse_rate']:.3f}",
        ),
    ]
    if "test_accuracy_final" in summary:
        rows.append(("test accuracy (median)", f"{summary['test_accuracy_final']['median']:.4f}"))
    return rows


@app.command("train")
def train(
    d: int = option(XorTrainConfig, "d"),
    m: int = option(XorTrainConfig, "m"),
    k: int = option(XorTrainConfig, "k"),
    seeds: int = option(XorTrainConfig, "seeds"),
    seed: int = option(XorTrainConfig, "seed"),
    steps: int = option(XorTrainConfig, "steps"),
    attention_map: str = option(XorTrainConfig, "attention"),
    gradient: str = option(XorTrainConfig, "gradient"),
    samples: int | None = option(XorTrainConfig, "samples"),
    cube_fraction: float | None = option(XorTrainConfig, "cube_fraction"),
    batch: int | None = option(XorTrainConfig, "batch"),
    optimizer: str = option(XorTrainConfig, "optimizer"),
    eta: str = typer.Option(
        "auto",
        "--eta",
        help=f"Step size, or 'auto' (gd: eta-scale * d^k * ln d; adam: {ADAM_LR:g}).",
    ),
    eta_scale: float = option(XorTrainConfig, "eta_scale"),
    init: str = option(XorTrainConfig, "init"),
    noise: float = option(XorTrainConfig, "noise"),
    success_tol: float = option(XorTrainConfig, "success_tol"),
    stop_at_success: bool = option(XorTrainConfig, "stop_at_success"),
    dtype: str = option(XorTrainConfig, "dtype"),
    device: str = option(XorTrainConfig, "device"),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of a table."),
    save: str | None = typer.Option(
        None, "--save", help="Write trajectories and state to FILE.npz (xor_train.load_result)."
    ),
    figures_dir: str | None = typer.Option(
        None, "--figures", help="Draw train_loss.png and train_attention.png into this folder."
    ),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
) -> None:
    """Many steps of the k-head model on k-sparse parity: exact population GD, or SGD / Adam on
    samples; all replicas in one batched computation. The authors' earlier 4x4 model:
    'attnsep xor train-v1'."""
    config = XorTrainConfig(
        d=d,
        m=m,
        k=k,
        seeds=seeds,
        seed=seed,
        steps=steps,
        samples=samples,
        cube_fraction=cube_fraction,
        batch=batch,
        eta=parse_eta(eta),
        eta_scale=eta_scale,
        noise=noise,
        success_tol=success_tol,
        stop_at_success=stop_at_success,
        **choices(
            attention=attention_map,
            gradient=gradient,
            optimizer=optimizer,
            init=init,
            dtype=dtype,
            device=device,
        ),
    )
    if save is not None:
        writable_target(save, ".npz")
    if figures_dir is not None:
        writable_folder(figures_dir)
    with progress_bar(quiet) as bar, torch_threads(1):  # many small tensors: one thread
        task = bar.add_task(f"xor train (d={d}, k={k})", total=steps)
        result = train_xor(config, progress=lambda done, total: bar.update(task, completed=done))
    if save is not None:
        result.save(save)
    summary = result.summary()
    if figures_dir is not None:
        from ..api import xor_train_figures

        summary["figures"] = [str(p) for p in xor_train_figures(result, figures_dir)]
    if as_json:
        emit_json(summary)
    else:
        print_table("sparse parity: training", train_rows(summary))
        for path in summary.get("figures", []):
            typer.echo(f"figure: {path}")


@app.command("train-v1")
def train_v1_command(
    n: int = option(V1Config, "n"),
    k: int = option(V1Config, "k"),
    seeds: int = option(V1Config, "seeds"),
    seed: int = option(V1Config, "seed", help="Base seed (same split and support as xor train)."),
    epochs: int = option(V1Config, "epochs"),
    lr: float = option(V1Config, "lr"),
    train_fraction: float = option(V1Config, "train_fraction"),
    target: float | None = option(V1Config, "target"),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of a table."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
) -> None:
    """The authors' earlier k-parity model (4x4 attention matrices with two trainable entries, a
    fixed ReLU read-out; module attnsep.models.kparity_v1), trained as they describe."""
    config = V1Config(
        n=n,
        k=k,
        seeds=seeds,
        seed=seed,
        epochs=epochs,
        lr=lr,
        train_fraction=train_fraction,
        target=target,
    )
    with progress_bar(quiet) as bar, torch_threads(1):
        task = bar.add_task(f"xor train-v1 (n={n}, k={k})", total=epochs)
        result = train_v1(config, progress=lambda done, total: bar.update(task, completed=done))
    from ..results import V1_ACCURACY, v1_report

    report = v1_report(config, result)
    if as_json:
        emit_json(report)
        return
    reached = report[f"epochs_to_{V1_ACCURACY}"]
    rows = [
        ("n, heads, trainable parameters", f"{n}, {k}, {report['trainable_params']}"),
        ("replicas (seed)", f"{seeds} ({seed})"),
        ("epochs run, wall time", f"{result.epochs_run}, {result.seconds:.2f} s"),
        *[
            (f"median test accuracy, epoch {t}", f"{a:.4f}")
            for t, a in report["median_test_accuracy"].items()
        ],
        (
            f"epochs to test accuracy {V1_ACCURACY}",
            ", ".join("never" if r is None else str(r) for r in reached),
        ),
    ]
    print_table("k-parity, the 4x4 model (v1)", rows)
