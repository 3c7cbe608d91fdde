"""The public API: what ``attnsep``'s commands compute, callable from Python and notebooks.

Every command of the command line is one function here, with the same numbers: the same
configs, streams and seeds give the same values. Every function validates its input first
(bad input raises a one-line ``ValueError`` naming the value and what is allowed) and loads
torch only when it computes, so importing this module is cheap. Results are frozen types
with ``summary()``, ``to_frame()``, ``plot()`` and ``save(path)`` (read back by
``attnsep.load``; ``attnsep.results``) or plain data.

The functions on the results store (``runs``, ``stored_run``, ``load_runs``, ``export_runs``:
``attnsep.engine.runs``), the plans (``plan``, ``sweep_plan``: ``attnsep.engine.planning``) and
the reproduction (``reproduce``, ``reproduce_plan``, ``report``: ``attnsep.report.reproduction``)
are written beside the layer they belong to and imported here: this module is the one door.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel

from .configs import (
    EVAL_SIZE,
    OneStepConfig,
    SelectionFCNConfig,
    SelectionTrainConfig,
    V1Config,
    XorFCNConfig,
    XorTrainConfig,
    default,
)
from .core.io import writable_folder, writable_target
from .core.resources import STEP_SECONDS, check_resources
from .core.validate import callback, int_at_least, int_values, one_of, require, shown
from .engine.planning import plan as plan
from .engine.planning import sweep_plan as sweep_plan
from .engine.runs import export_runs as export_runs
from .engine.runs import load_runs as load_runs
from .engine.runs import runs as runs
from .engine.runs import stored_run as stored_run
from .engine.store import DEFAULT_PATH, check_writable
from .report import reproduction
from .report.reproduction import Reproduction as Reproduction
from .report.reproduction import report as report
from .report.reproduction import reproduce as reproduce
from .report.reproduction import reproduce_plan as reproduce_plan

if TYPE_CHECKING:
    import pandas as pd

    from .engine.calibration import CalibrationFailed as CalibrationFailed
    from .engine.executors import Executor
    from .engine.executors import WorkerDied as WorkerDied
    from .engine.jobs import Job
    from .engine.plan import Plan
    from .report.text_tables import TextTable
    from .results import (
        ExperimentResult,
        FCNResult,
        FrontierResult,
        SelectorResult,
        SweepResult,
        XorStepResult,
        XorTrainResult,
    )

REPORT_FOLDER = reproduction.FOLDER
"""Where [`reproduce`][attnsep.api.reproduce] and [`report`][attnsep.api.report] write the
report unless told."""
FCN_TASKS = ("xor", "select")
FRONTIER_SOLVERS = ("law", "population", "sgd")
"""``frontier_select``'s solvers (``experiments.select_width``)."""

API_FORCE = "force=True from Python (attnsep.api)"
"""How a run the command has no --force for is forced anyway."""
Progress = Callable[[int, int], None]
"""Called as ``progress(done, total)``: once with 0 before the first step, then after each."""
_ERRORS = {"CalibrationFailed": "calibration", "WorkerDied": "executors"}
"""The engine's errors a caller may catch (``api.CalibrationFailed``: a plan's calibration
could not time a job; ``api.WorkerDied``: a worker died with jobs unfinished), by the module
of ``attnsep.engine`` that raises them."""


def __getattr__(name: str) -> Any:
    """The engine's errors (``_ERRORS``), imported when first asked for: their modules load
    the process machinery, which a command that only checks its input or lists does not need."""
    if name in _ERRORS:
        from importlib import import_module

        return getattr(import_module(f".engine.{_ERRORS[name]}", __package__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _config(config_type: type[BaseModel], named: dict[str, Any], options: dict[str, Any]) -> Any:
    """``config_type(**named, **options)``; a repeated field is a one-line ``ValueError``, an
    unknown one too (the config's own check: ``configs.ConfigBase``)."""
    for key in options:
        require(key not in named, f"{key!r} is set by a parameter of this function; give it once")
    return config_type(**named, **options)


# ------------------------------------------------------------------------ sparse XOR


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
        Any other field of ``attnsep.train.one_step.OneStepConfig``: ``eta``, ``eta_scale``,
        ``samples`` (an empirical step on that many samples), ``support``, ``k``, ``noise``,
        ``init``, ``success_tol``, ``dtype``, ``device``, ``replica_batch``.

    Returns
    -------
    XorStepResult
        Per-replica losses, certified errors, success, specialization and collapse;
        ``report()`` is the command's JSON object.
    """
    named = {"d": d, "m": m, "seeds": seeds, "seed": seed, "attention": attention}
    config = _config(OneStepConfig, named, options)
    if save is not None:
        writable_target(save, ".npz")
    keep = keep_embeddings or save is not None
    from .engine.plan import price

    # an empirical step also runs its samples through each replica's k heads: priced as
    # k x samples more embedding columns (rough, but it grows as the step does)
    width = m + config.k * (config.samples or 0)
    job = {"d_values": [d], "m_values": [width], "series": ["fixed"], "seeds": seeds}
    check_resources(
        f"one step at d={d}, m={m}, {seeds} seeds",
        config.peak_bytes(keep),
        price("one-step", job),
        "seeds, m or d" + (" (or keep no embeddings: no save)" if keep else ""),
        force,
    )
    from .results import XorStepResult
    from .train.one_step import run_one_step

    step = XorStepResult(run_one_step(config, keep_embeddings=keep))
    if save is not None:
        step.save(save)
    return step


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
        Any other field of ``attnsep.train.xor_train.XorTrainConfig``: ``k``,
        ``gradient`` (``population``, ``fresh``, ``fixed``), ``samples``, ``cube_fraction``,
        ``batch``, ``optimizer`` (``gd``, ``adam``), ``eta``, ``eta_scale``, ``init``,
        ``noise``, ``success_tol``, ``stop_at_success``, ``dtype``, ``device``.

    Returns
    -------
    XorTrainResult
        Trajectories per replica and step (``raw``); ``report()`` is the command's JSON object
        (with the figures' paths), ``to_frame()`` one row per replica and step.
    """
    named = {"d": d, "m": m, "seeds": seeds, "steps": steps, "seed": seed, "attention": attention}
    config = _config(XorTrainConfig, named, options)
    callback("progress", progress)
    what = f"xor training at d={d}, m={m}, {seeds} seeds, {steps} steps"
    check_resources(what, config.peak_bytes(), None, "seeds, steps, m or d", force, API_FORCE)
    if save is not None:
        writable_target(save, ".npz")
    if figures is not None:
        writable_folder(figures)
    from .core.device import torch_threads
    from .results import XorTrainResult
    from .train.xor_train import train_xor

    if progress is not None:
        progress(0, config.steps)
    with torch_threads(1):  # many small tensors: one thread
        result = XorTrainResult(train_xor(config, progress=progress))
    if figures is not None:
        drawn = tuple(str(path) for path in xor_train_figures(result, figures))
        result = dataclasses.replace(result, figures=drawn)
    if save is not None:
        result.save(save)
    return result


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
    from .report.xor_train_figures import figures

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
    config = _config(V1Config, {"n": n, "k": k, "seeds": seeds, "seed": seed}, options)
    callback("progress", progress)
    what = f"v1 training at n={n}, {seeds} seeds, {config.epochs} epochs"
    check_resources(what, config.peak_bytes(), None, "seeds, epochs or n", force, API_FORCE)
    from .core.device import torch_threads
    from .results import v1_report
    from .train.kparity_v1 import train_v1

    if progress is not None:
        progress(0, config.epochs)
    with torch_threads(1):
        result = train_v1(config, progress=progress)
    return v1_report(config, result)


# ------------------------------------------------------------------------ token selection


def train_selector(
    T: int,
    q: int,
    m_p: int = default(SelectionTrainConfig, "pe_dim"),
    *,
    d: int = default(SelectionTrainConfig, "d"),
    pe: str = default(SelectionTrainConfig, "pe"),
    seeds: int = default(SelectionTrainConfig, "replicas"),
    seed: int = 0,
    eval_lengths: Iterable[int] = (),
    eval_size: int = EVAL_SIZE,
    save: str | Path | None = None,
    progress: Progress | None = None,
    force: bool = False,
    **options: Any,
) -> SelectorResult:
    """Train the one-layer selector on q-sparse averaging and evaluate it (SPEC B3, B5.3).

    The computation of ``attnsep select train``: ``seeds`` replicas trained at once from
    ``W = 0``, then the losses on the fixed evaluation sets of ``eval_size`` sequences at ``T``
    and at every length in ``eval_lengths``. A fixed PE table is drawn for positions up to the
    longest length; the rows beyond ``T`` are never trained.

    Parameters
    ----------
    T
        Training sequence length.
    q
        Subset size.
    m_p
        Positional-encoding width.
    d
        Token dimension.
    pe
        ``stochastic`` or ``fixed``.
    seeds
        Number of replicas, trained at once.
    seed
        Base seed of the training and of the evaluation sets.
    eval_lengths
        Lengths ``T'`` to evaluate at besides ``T`` (length generalization).
    eval_size
        Evaluation sequences per length.
    save
        An ``.npz`` file for ``W`` (and a fixed PE's table), the curve and the losses.
    progress
        Called as ``progress(step, steps)``: with 0 before the first step, then after each.
    force
        Run even when training needs more memory than is available (else ``ValueError``).
    **options
        Any other field of ``attnsep.train.selection.SelectionTrainConfig``: ``pe_kind``,
        ``trainable`` (``full``, ``position``), ``objective`` (``sgd``, ``population``),
        ``steps``, ``batch``, ``lr``.

    Returns
    -------
    SelectorResult
        ``W``, the training curve and the losses per replica and length; ``report()`` is the
        command's JSON object.
    """
    named = {"d": d, "T": T, "q": q, "pe": pe, "pe_dim": m_p, "replicas": seeds, "seed": seed}
    config = _config(SelectionTrainConfig, named, options)
    lengths = list(dict.fromkeys([T, *int_values("eval length", eval_lengths, max(q, 1))]))
    int_at_least("eval size", eval_size, 2)
    callback("progress", progress)
    if pe == "fixed":
        config = _config(SelectionTrainConfig, {**named, "fixed_positions": max(lengths)}, options)
    if save is not None:
        writable_target(save, ".npz")
    what = f"selector training at T={T}, m_p={m_p}, batch {config.batch}, {seeds} seeds"
    peak = config.peak_bytes() + config.evaluation_bytes(lengths, eval_size)
    knobs = "seeds, steps, batch, T, m_p, eval lengths or eval size"
    check_resources(what, peak, _selector_seconds(config), knobs, force)
    from .core.device import torch_threads
    from .metrics.selection import evaluate_lengths
    from .results import SelectorResult
    from .tasks.selection import TokenSelection
    from .train.selection import train

    start = time.perf_counter()
    if progress is not None:
        progress(0, config.steps)
    with torch_threads(1):
        result = train(config, progress)
        rows = evaluate_lengths(
            result.W, TokenSelection.of(config), result.encodings, lengths, seed, eval_size
        )
    run = SelectorResult(result, tuple(rows), time.perf_counter() - start, eval_size)
    if save is not None:
        run.save(save)
    return run


def _selector_seconds(config: SelectionTrainConfig) -> float:
    """Training priced by ``select-convergence``'s model of the same SGD loop, ``E x steps x
    batch x T x (d + m_p)^2`` (its ``pe_dims`` the whole width, its batch per dimension ours
    over that width), and at least ``STEP_SECONDS`` a step."""
    from .engine.plan import price

    width = config.d + config.pe_dim
    job: dict[str, Any] = {"pe_dims": [width], "T": config.T, "d": config.d}
    job.update(seeds=range(config.replicas))  # only their number counts
    job.update(steps=config.steps, batch_per_dim=config.batch / width, family_samples=0)
    return max(price("select-convergence", job) or 0.0, config.steps * STEP_SECONDS)


def selection_bounds(
    T: int, q: int, d: int | None = None, width: int | None = None
) -> dict[str, Any]:
    """The FCN's loss floor and the reference losses, exact (SPEC B4; ``attnsep select bound``).

    Parameters
    ----------
    T
        Sequence length.
    q
        Subset size.
    d
        Token dimension: the reference losses are summed over ``d`` coordinates (``None``:
        per coordinate).
    width
        The FCN's first-layer width, for the width form of the floor (needs ``d``).

    Returns
    -------
    dict
        Each loss as a float and as its exact fraction, and the floor's form.
    """
    require(width is None or d is not None, "width needs d (the floor is (Td-w)(T-q)/(qT(T-1)))")
    from .exact.selection_bounds import selection_bounds_report

    return selection_bounds_report(T, q, d, width)


# ------------------------------------------------------------------------ FCN baselines


def train_fcn(
    task: str,
    *,
    seeds: int | None = None,
    seed: int = 0,
    progress: Progress | None = None,
    force: bool = False,
    **options: Any,
) -> FCNResult:
    """Train an ensemble of fully-connected ReLU nets (SPEC A7.6, B4, B5.4).

    The computation of ``attnsep fcn xor`` (``task="xor"``: sparse XOR, success = test sign
    error ``<= success_tol``) and ``attnsep fcn select`` (``task="select"``: an MLP on
    ``[vec X ; 1_y]`` for q-sparse averaging, beside the floor of SPEC B4).

    Parameters
    ----------
    task
        ``xor`` or ``select``.
    seeds
        Number of replicas (``None``: the ``replicas`` default of ``XorFCNConfig`` or
        ``SelectionFCNConfig``).
    seed
        Base seed.
    progress
        Called as ``progress(step, steps)``: with 0 before the first step, then after each
        (training ends early once every replica has finished).
    force
        Run even when training needs more memory than is available (else ``ValueError``).
    **options
        Any other field of ``attnsep.configs.XorFCNConfig`` (``d``, ``width``,
        ``depth``, ``steps``, ``batch``, ``lr``, ``optimizer``, ``loss``, ``samples``, ...) or
        ``attnsep.configs.SelectionFCNConfig`` (``d``, ``T``, ``q``, ``width``, ...).

    Returns
    -------
    FCNResult
        The trained nets and per-replica errors or losses; ``report()`` is the command's JSON.
    """
    one_of("task", task, FCN_TASKS)
    config_type = XorFCNConfig if task == "xor" else SelectionFCNConfig
    named = {"seed": seed} if seeds is None else {"seed": seed, "replicas": seeds}
    config = _config(config_type, named, options)
    callback("progress", progress)
    what = f"FCN training ({config.inputs} inputs, width {config.width}, {config.replicas} seeds)"
    seconds = _fcn_seconds(config)
    check_resources(what, config.peak_bytes(), seconds, "seeds, width, steps or batch", force)
    from .results import FCNResult
    from .train.fcn import train_selection, train_xor

    if progress is not None:
        progress(0, config.steps)
    raw = (train_xor if task == "xor" else train_selection)(config, progress)
    return FCNResult(task, raw)


def _fcn_seconds(config: XorFCNConfig | SelectionFCNConfig) -> float:
    """Training priced by ``fcn-selection``'s model of the same loop, ``replicas x steps x
    batch x inputs x width`` at most (a replica may stop early); its inputs are ``T d + T``,
    so ``n`` inputs are written as ``T = 1, d = n - 1``; at least ``STEP_SECONDS`` a step."""
    from .engine.plan import price

    n, batch = config.inputs, default(SelectionFCNConfig, "batch")
    job = {"kinds": ["fcn"], "settings": [(1, n - 1, 1)], "fcn_replicas": config.replicas}
    steps = config.steps * config.batch / batch  # its steps are of the default batch
    job.update(width_fractions=[config.width / (n - 1)], fcn_steps=steps)
    return max(price("fcn-selection", job) or 0.0, config.steps * STEP_SECONDS)


# ------------------------------------------------------------------------ the experiments


def experiments() -> list[dict[str, str]]:
    """The registered experiments, one per claim of SPEC A7, B5, C (``attnsep list``): each
    one's ``name``, ``claim``, ``title``, ``paper`` (the paper's statement) and
    ``companions`` (the further entries it may judge), as plain dicts; read from the sources,
    so this loads neither numpy nor torch."""
    from .experiments import catalog

    return [dict(item) for item in catalog()]


def show(name: str) -> dict[str, Any]:
    """What experiment ``name`` is and what its config accepts (``attnsep show NAME``).

    Parameters
    ----------
    name
        An experiment's name (``experiments()``).

    Returns
    -------
    dict
        The claim (``name``, ``claim``, ``title``, ``kind``, ``paper``, ``section``), ``version``,
        ``criterion_version`` and ``tuned_on`` (the master seeds its criterion was tuned on),
        ``description`` (the config's docstring: what runs and the criterion), ``fields`` (each
        with ``type``, ``default``, ``required``, ``limits``: pydantic's ``ge``, ``min_length``,
        ..., ``choices``, and those of a list's ``items`` and a dict's ``keys`` and ``values``;
        ``help``), ``presets`` (per preset the fields it sets) with ``preset_help``, and
        ``cost`` (per preset its ``jobs`` and estimated ``cpu_seconds``, from the published
        timings and the cost model only: ``None`` where they have none; and ``peak_bytes``,
        the memory its largest job holds).
    """
    from .engine.jobs import check_experiment

    check_experiment(name)  # read from the sources: an unknown name answers at once
    from .engine.planning import preset_costs
    from .experiments import base, schema

    return {**schema.describe(base.get(name)), "cost": preset_costs(name)}


def list_experiments() -> pd.DataFrame:
    """The registered experiments ([`experiments`][attnsep.api.experiments]) as a DataFrame
    with the columns ``name``, ``claim``, ``title`` and ``paper``."""
    import pandas as pd

    return pd.DataFrame(experiments())


def run_experiment(
    name: str,
    preset: str = "quick",
    config: dict[str, Any] | None = None,
    *,
    executor: str | Executor = "inline",
    store: str | Path = DEFAULT_PATH,
    address: str | None = None,
    workers: int | None = None,
) -> ExperimentResult:
    """Run one registered experiment through the engine and judge its claim (SPEC A7, B5, C).

    The jobs are those of ``attnsep reproduce --PRESET --only NAME`` when ``config`` is
    ``None``; every finished job is stored, and a job already in the store is not computed
    again.

    Parameters
    ----------
    name
        An experiment name ([`experiments`][attnsep.api.experiments]).
    preset
        ``quick``, ``standard`` or ``full``: the sizes the config starts from.
    config
        Fields that override the preset's (validated by the experiment's typed config).
    executor
        ``inline`` (this process), ``process`` (a local pool) or ``ray``; or an executor
        object (``attnsep.engine.executors.ProcessExecutor(workers=8)``, your own subclass of
        ``Executor``), which carries its options.
    store
        The SQLite results database (created if missing).
    address
        The Ray cluster's address (``host:port``) for ``executor="ray"`` (``None``: a running
        or a local instance).
    workers
        The process pool's size for ``executor="process"`` (``None``: the CPUs).

    Returns
    -------
    ExperimentResult
        The stored rows, the records, and the verdict (``reproduced``, ``not reproduced``,
        ``inconclusive``, or ``incomplete`` when a job failed).
    """
    from .engine.jobs import jobs_for
    from .engine.sweep import executor_for, run_into
    from .experiments import base

    one_of("preset", preset, base.PRESETS)
    experiment = base.get(name)
    engine = executor_for(executor, workers, address)
    if config is not None and not isinstance(config, dict):
        raise TypeError(f"config must be a dict of fields or None, got {shown(config)}")
    typed = experiment.config(preset, **(config or {}))
    path, rows, outcome = run_into(jobs_for(name, typed), store, engine)
    failed = [row for row in rows if row["status"] != "done"]
    if failed:
        verdict = {
            "verdict": "incomplete",
            "reason": f"{len(failed)} of {len(rows)} jobs failed; first error: "
            + failed[0]["error"].splitlines()[0],
        }
    else:
        verdict = experiment.verdict([r for row in rows for r in row["records"]], typed)
    from .results import ExperimentResult

    return ExperimentResult(
        name=name,
        claim=experiment.claim,
        preset=preset,
        config=typed,
        rows=rows,
        outcome=verdict,
        computed=outcome.computed,
        cached=outcome.cached,
        store=path,
    )


# ------------------------------------------------------------------------ sweeps and plans


def sweep(
    experiment: str,
    grid: dict[str, list[Any]] | Sequence[str] | None = None,
    *,
    fixed: dict[str, Any] | Sequence[str] | None = None,
    config_file: str | Path | None = None,
    preset: str = "quick",
    executor: str | Executor = "inline",
    store: str | Path = DEFAULT_PATH,
    address: str | None = None,
    workers: int | None = None,
    on_start: Callable[[int, int], None] | None = None,
    on_done: Callable[[Job, dict[str, Any]], None] | None = None,
) -> SweepResult:
    """Run an experiment over the cartesian product of ``grid`` into the store (``attnsep
    sweep``).

    Parameters
    ----------
    experiment
        An experiment name ([`experiments`][attnsep.api.experiments]).
    grid
        ``{field: [value, ...]}``, or ``["field=v1,v2", ...]`` as on the command line: one
        config per point of the product. A single value of a list field stands for the list
        of it: ``d_values=64,128`` sweeps ``[64]`` and ``[128]`` (as ``'d_values=[[64],[128]]'``).
    fixed
        ``{field: value}``, or ``["field=value", ...]``: fields set at every point.
    config_file
        A TOML or YAML file with ``set`` and ``grid`` tables, overridden field by field by
        ``fixed`` and ``grid``.
    preset
        The preset the fields start from.
    executor
        ``inline`` (this process), ``process`` (a local pool) or ``ray``; or an executor
        object, as for [`run_experiment`][attnsep.api.run_experiment].
    store
        The SQLite results database (created if missing); a job already in it is not computed
        again.
    address
        The Ray cluster's address (``host:port``) for ``executor="ray"`` (``None``: a running
        or a local instance).
    workers
        The process pool's size for ``executor="process"`` (``None``: the CPUs).
    on_start
        Called as ``on_start(to_run, cached)`` once the jobs still to run are known.
    on_done
        Called as ``on_done(job, row)`` after each finished job, with its stored row.

    Returns
    -------
    SweepResult
        The grid points, the stored rows of its jobs, what was computed and what was cached;
        ``report()`` is the command's JSON object.
    """
    from .engine.jobs import sweep_jobs
    from .engine.sweep import executor_for, run_into

    engine = executor_for(executor, workers, address)
    callback("on_start", on_start)
    callback("on_done", on_done)
    configs, jobs = sweep_jobs(experiment, preset, fixed, grid, config_file)
    path, rows, outcome = run_into(jobs, store, engine, on_start=on_start, on_done=on_done)
    from .results import SweepResult

    return SweepResult(
        experiment=experiment,
        preset=preset,
        configs=tuple(c.model_dump(mode="json") for c in configs),
        rows=rows,
        computed=outcome.computed,
        cached=outcome.cached,
        store=path,
        job_hashes=tuple(job.key for job in jobs),
    )


def plan_table(found: Plan, title: str = "plan") -> TextTable:
    """A plan as ``attnsep reproduce --plan`` prints it: one row per experiment and the total
    (jobs, stored, to run, CPU and where the estimates come from), then the wall estimate.

    Parameters
    ----------
    found
        A plan of [`plan`][attnsep.api.plan], [`sweep_plan`][attnsep.api.sweep_plan] or
        [`reproduce_plan`][attnsep.api.reproduce_plan].
    title
        The table's title.
    """
    from .engine import plan as planning
    from .report.text_tables import TextTable

    rows = tuple(planning.table_rows(found))
    lines = tuple(planning.summary_lines(found))
    return TextTable(title, planning.HEADER, rows, lines, justify="lrrrrl", no_wrap=True)


def text_tables(command: str, data: dict[str, Any]) -> list[TextTable]:
    """What ``attnsep COMMAND`` prints for people, from its JSON object ``data``.

    Parameters
    ----------
    command
        ``list``, ``show``, ``claims``, ``runs``, ``xor one-step``, ``xor train``, ``xor train-v1``,
        ``select train``, ``select bound``, ``fcn xor`` or ``fcn select`` (a frontier's table:
        ``FrontierResult.table()``).
    data
        The command's JSON object (e.g. ``report()`` of its result).

    Returns
    -------
    list of TextTable
        Each with a title, columns, rows of strings and notes.
    """
    from .report.text_tables import TABLES

    one_of("command", command, list(TABLES))
    return TABLES[command](data)


# ------------------------------------------------------------------------ the frontiers


def _increasing(name: str, values: Iterable[int], low: int) -> list[int]:
    """``values`` as a list of integers ``>= low``, strictly increasing."""
    found = int_values(name, values, low)
    require(bool(found), f"{name} needs at least one value")
    require(found == sorted(set(found)), f"{name} must be increasing without repeats, got {found}")
    return found


def _run_stored(name: str, config: dict[str, Any], store: str | Path) -> ExperimentResult:
    """Experiment ``name`` at ``config`` (over its quick preset), every job stored in
    ``store``; a failed job is one error line."""
    ran = run_experiment(name, config=config, store=store)
    failed = [row["error"].splitlines()[0] for row in ran.rows if row["status"] != "done"]
    require(not failed, f"a job failed ({failed[0] if failed else ''}); rerun to retry it")
    return ran


def frontier_xor(
    d_values: Iterable[int] = (16, 32, 64, 128),
    *,
    seeds: int = 8,
    seed: int = 0,
    store: str | Path = DEFAULT_PATH,
) -> FrontierResult:
    """The one-step transformer against two-layer ReLU nets on sparse XOR: the trainable
    parameters each needs per ``d`` (SPEC A7.6; ``attnsep frontier xor``).

    Success: test sign error ``<= 1%`` on fresh samples in ``>= 90%`` of the replicas. The
    jobs are the ``separation-xor`` experiment's: stored in ``store``, never computed twice.

    Parameters
    ----------
    d_values
        Input lengths, increasing.
    seeds
        Replicas per probe.
    seed
        Base seed.
    store
        The results database; its stored jobs are read back, not computed again.

    Returns
    -------
    FrontierResult
        Per model and ``d`` the threshold and its parameters with intervals, and each model's
        exponent; ``table()`` as the command prints it.
    """
    ds = _increasing("d", d_values, 2)
    int_at_least("seeds", seeds, 1)
    int_at_least("seed", seed, 0)
    check_writable(store)
    for d in ds:  # the smallest probes of both searches must fit (a lower bound)
        step = OneStepConfig(d=d, m=1, seeds=seeds).peak_bytes()
        fcn = XorFCNConfig(d=d, width=1, replicas=seeds).peak_bytes()
        what = f"frontier xor at d={d}, {seeds} seeds"
        check_resources(what, max(step, fcn), None, "seeds or d", forced_by=None)
    from .experiments import xor_thresholds
    from .results import FrontierResult

    config = {"d_values": ds, "fcn_d_values": ds, "seeds": seeds, "seed": seed}
    ran = _run_stored("separation-xor", config, store)
    return FrontierResult("xor", xor_thresholds.summary(ran.records), ran)


def frontier_select(
    T_values: Iterable[int] = (8, 16, 32, 64),
    q_values: Iterable[int] = (2,),
    *,
    d: int = 16,
    seeds: int = 8,
    seed: int = 0,
    solver: str = "law",
    store: str | Path = DEFAULT_PATH,
) -> FrontierResult:
    """The selector's width ``d + m_p*`` against the FCN's proven minimum first-layer width,
    per ``T`` (SPEC Part C; ``attnsep frontier select``).

    ``m_p*``: the smallest PE width whose selectors, run by population gradient descent from
    ``W = 0``, reach loss ``<= 0.2 x`` the uniform-attention loss in ``>= 90%`` of the
    replicas. The jobs are the ``separation-select`` experiment's, stored in ``store``.

    Parameters
    ----------
    T_values
        Sequence lengths, increasing.
    q_values
        Subset sizes, increasing, each ``<`` every ``T``.
    d
        Token dimension.
    seeds
        Replicas per probe.
    seed
        Base seed.
    solver
        ``law`` (losses from the products' law: any ``T``), ``population`` (drawn sequences)
        or ``sgd``.
    store
        The results database; its stored jobs are read back, not computed again.

    Returns
    -------
    FrontierResult
        Per ``(T, q)`` both widths with intervals, the fitted laws and the held-out decision;
        ``table()`` as the command prints it.
    """
    Ts, qs = _increasing("T", T_values, 2), _increasing("q", q_values, 1)
    int_at_least("d", d, 1)
    require(qs[-1] < Ts[0], f"q must be < every T, got q={qs[-1]} and T={Ts[0]}")
    int_at_least("seeds", seeds, 1)
    int_at_least("seed", seed, 0)
    check_writable(store)
    one_of("solver", solver, FRONTIER_SOLVERS)
    for T in Ts:  # the smallest selector of the search must fit (a lower bound)
        probe = SelectionTrainConfig(d=d, T=T, q=qs[0], pe_dim=1, batch=1, replicas=seeds)
        what = f"frontier select at T={T}, d={d}, {seeds} seeds"
        check_resources(what, probe.peak_bytes(), None, "seeds, d or T", forced_by=None)
    from .experiments import separation_select
    from .results import FrontierResult

    config = {"d": d, "T_values": Ts, "q_values": qs, "seeds": seeds, "seed": seed}
    ran = _run_stored("separation-select", {**config, "solver": solver}, store)
    typed = cast(separation_select.Config, ran.config)
    return FrontierResult("select", separation_select.summary(ran.records, typed), ran)
