"""The API's sparse-XOR computations: one step, training, the authors' earlier model (SPEC A5,
A6; ``attnsep xor ...``)."""

from __future__ import annotations

import dataclasses
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..configs import (
    OneStepConfig,
    V1Config,
    XorTrainConfig,
    default,
)
from ..core.io import writable_folder
from ..train.memory import one_step_peak, v1_peak, xor_train_peak

if TYPE_CHECKING:
    from ..results import (
        XorStepResult,
        XorTrainResult,
    )

from .guard import Progress, config_of, guarded_run


def xor_one_step(
    d: int,
    m: int = default(OneStepConfig, "m"),
    seeds: int = default(OneStepConfig, "seeds"),
    *,
    seed: int = 0,
    attention: str = default(OneStepConfig, "attention"),
    keep_embeddings: bool = False,
    save: str | Path | None = None,
    force: bool = False,
    **options: Any,
) -> XorStepResult:
    """One gradient step of the k-head attention model on sparse XOR (SPEC A5, A6).

    The computation of ``attnsep xor one-step``: ``seeds`` independent replicas, replica ``e``
    drawing its embeddings, support and initialization from the streams ``(seed, e, ...)``.

    Parameters
    ----------
    d
        Input length (positions).
    m
        Embedding width; trainable parameters = heads x ``m``.
    seeds
        Number of replicas.
    seed
        Base seed.
    attention
        Attention map (``softmax``, ``linear``, ``erf``, ... see ``attnsep.attention``).
    keep_embeddings
        Keep ``V`` (``E x d x m``) so that ``result.attention()`` can give the weights.
    save
        An ``.npz`` file to write the state and metrics into (checked before computing).
    force
        Run even when the step needs more memory than is available or is priced above an
        hour (``core.resources``); otherwise such a call raises ``ValueError`` at once.
    **options
        Any other field of ``attnsep.train.one_step.OneStepConfig`` (``eta``, ``samples``,
        ``support``, ``k``, ...; ``attnsep xor one-step --help`` lists each with its help).

    Returns
    -------
    XorStepResult
        Per-replica losses, certified errors, success, specialization and collapse;
        ``report()`` is the command's JSON object.
    """
    named = {"d": d, "m": m, "seeds": seeds, "seed": seed, "attention": attention}
    config = config_of(OneStepConfig, named, options)
    keep = keep_embeddings or save is not None
    from ..engine.published import price
    from ..experiments.costs import one_step_work

    # an empirical step also runs its samples through each replica's k heads: priced as
    # k x samples more embedding columns (rough, but it grows as the step does)
    width = m + config.k * (config.samples or 0)
    seconds = price("one-step", {"": one_step_work(d, width, seeds)})
    knobs = "seeds, m or d" + (" (or keep no embeddings: no save)" if keep else "")
    what = f"one step at d={d}, m={m}, {seeds} seeds"
    guard = (what, one_step_peak(config, keep), seconds, knobs)
    return guarded_run(partial(_one_step, config, keep), guard, force, save=save)


def _one_step(config: OneStepConfig, keep: bool) -> XorStepResult:
    from ..results import XorStepResult
    from ..train.one_step import run_one_step

    return XorStepResult(run_one_step(config, keep_embeddings=keep))


def xor_train(
    d: int,
    m: int = default(XorTrainConfig, "m"),
    seeds: int = default(XorTrainConfig, "seeds"),
    *,
    steps: int = default(XorTrainConfig, "steps"),
    seed: int = 0,
    attention: str = default(XorTrainConfig, "attention"),
    progress: Progress | None = None,
    save: str | Path | None = None,
    figures: str | Path | None = None,
    force: bool = False,
    **options: Any,
) -> XorTrainResult:
    """Many training steps of the k-head model on sparse parity (SPEC A2, A4, A6).

    The computation of ``attnsep xor train`` (``attnsep.train.xor_train.train_xor``, on one
    torch thread): exact population gradient descent by default, or SGD / Adam on samples.

    Parameters
    ----------
    d
        Input length (positions).
    m
        Embedding width; trainable parameters = heads x ``m``.
    seeds
        Number of replicas, trained at once.
    steps
        Training steps, at most: the run stops early when it diverges or, with
        ``stop_at_success=True``, once every replica has succeeded.
    seed
        Base seed: replica ``e`` draws from the streams ``(seed, e, ...)``, as in
        [`xor_one_step`][attnsep.api.xor_one_step].
    attention
        Attention map (``softmax``, ``linear``, ``erf``, ... see ``attnsep.attention``).
    progress
        Called as ``progress(step, steps)``: with 0 before the first step, then after each.
    save
        An ``.npz`` file for the trajectories and the state (``attnsep.load`` reads it).
    figures
        A folder to draw ``train_loss.png`` and ``train_attention.png`` into.
    force
        Run even when training needs more memory than is available (else ``ValueError``).
    **options
        Any other field of ``attnsep.train.xor_train.XorTrainConfig`` (``k``, ``gradient``,
        ``optimizer``, ``eta``, ...; ``attnsep xor train --help`` lists each with its help).

    Returns
    -------
    XorTrainResult
        Trajectories (``raw``); ``report()``: the command's JSON, ``to_frame()``: rows per step.
    """
    named = {"d": d, "m": m, "seeds": seeds, "steps": steps, "seed": seed, "attention": attention}
    config = config_of(XorTrainConfig, named, options)
    if figures is not None:
        writable_folder(figures)
    what = f"xor training at d={d}, m={m}, {seeds} seeds, {steps} steps"
    guard = (what, xor_train_peak(config), None, "seeds, steps, m or d")
    given = {"save": save, "progress": progress, "steps": config.steps}
    return guarded_run(partial(_train, config, progress, figures), guard, force, **given)


def _train(
    config: XorTrainConfig, progress: Progress | None, figures: str | Path | None
) -> XorTrainResult:
    from ..core.device import torch_threads
    from ..results import XorTrainResult
    from ..train.xor_train import train_xor

    with torch_threads(1):  # many small tensors: one thread
        result = XorTrainResult(train_xor(config, progress=progress))
    if figures is None:
        return result
    drawn = tuple(str(path) for path in xor_train_figures(result, figures))
    return dataclasses.replace(result, figures=drawn)


def xor_train_figures(result: XorTrainResult, folder: str | Path) -> list[Path]:
    """The figures of a training run (``attnsep xor train --figures``) written into
    ``folder``: their paths.

    Parameters
    ----------
    result
        A run of [`xor_train`][attnsep.api.xor_train].
    folder
        The folder to draw ``train_loss.png`` and ``train_attention.png`` into: an existing
        one, or a new one in a folder that exists.
    """
    from ..report.xor_train_figures import figures

    return figures(result.raw, writable_folder(folder))


def xor_train_v1(
    n: int = default(V1Config, "n"),
    k: int = default(V1Config, "k"),
    seeds: int = default(V1Config, "seeds"),
    *,
    seed: int = 0,
    progress: Progress | None = None,
    force: bool = False,
    **options: Any,
) -> dict[str, Any]:
    """Train the authors' earlier k-parity model, as they describe (``attnsep xor train-v1``):
    4x4 attention matrices with two trainable entries and a fixed ReLU read-out
    (``attnsep.models.kparity_v1``), full-batch Adam on every replica at once.

    Parameters
    ----------
    n
        Input length (the whole cube of ``2^n`` inputs is split into train and test).
    k
        Support size = number of heads.
    seeds
        Number of replicas, trained at once.
    seed
        Base seed (the same split and support as [`xor_train`][attnsep.api.xor_train]).
    progress
        Called as ``progress(epoch, epochs)``: with 0 before the first epoch, then after each.
    force
        Run even when training needs more memory than is available (else ``ValueError``).
    **options
        Any other field of ``attnsep.configs.V1Config``: ``epochs``, ``lr``,
        ``train_fraction``, ``target``.

    Returns
    -------
    dict
        The command's JSON object: the config, the median test accuracy at marked epochs,
        each replica's final test accuracy and epochs to test accuracy 0.95.
    """
    config = config_of(V1Config, {"n": n, "k": k, "seeds": seeds, "seed": seed}, options)
    what = f"v1 training at n={n}, {seeds} seeds, {config.epochs} epochs"
    guard = (what, v1_peak(config), None, "seeds, epochs or n")

    def compute() -> dict[str, Any]:
        from ..core.device import torch_threads
        from ..results import v1_report
        from ..train.kparity_v1 import train_v1

        with torch_threads(1):
            return v1_report(config, train_v1(config, progress=progress))

    given = {"progress": progress, "steps": config.epochs}
    return guarded_run(compute, guard, force, **given)
