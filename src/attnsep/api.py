"""The public API: what ``attnsep``'s commands compute, callable from Python and notebooks.

Every function validates its input at the library's typed configs (bad input raises a
one-line ``ValueError`` naming the value and what is allowed) and returns a frozen result
with ``summary()`` and ``to_frame()`` (``attnsep.results``). The numbers are the
commands' own: the same configs, streams and seeds give the same values.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from .configs import EVAL_SIZE, SelectionFCNConfig, XorFCNConfig, default
from .core.device import torch_threads
from .core.validate import int_at_least, one_of, require
from .engine.calibration import BUDGET
from .engine.calibration import CalibrationFailed as CalibrationFailed  # raised by plan()
from .engine.executors import EXECUTORS
from .engine.jobs import Job, expand_grid, jobs_for
from .engine.store import DEFAULT_PATH, Store
from .engine.sweep import run_sweep
from .experiments import base
from .metrics.selection import evaluate_lengths
from .results import ExperimentResult, FCNResult, SelectorResult, SweepResult, XorStepResult
from .tasks.selection import TokenSelection
from .train.fcn import train_selection
from .train.fcn import train_xor as train_xor_fcn
from .train.one_step import OneStepConfig, run_one_step
from .train.selection import SelectionTrainConfig, train
from .train.xor_train import XorTrainConfig, XorTrainResult, train_xor

FCN_TASKS = ("xor", "select")


def _config(config_type: type[BaseModel], named: dict[str, Any], options: dict[str, Any]) -> Any:
    """``config_type(**named, **options)``; an unknown or repeated field is a one-line
    ``ValueError``."""
    allowed = sorted(config_type.model_fields)
    for key in options:
        require(key in allowed, f"{key!r} is not an option here; allowed: {', '.join(allowed)}")
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
    **options
        Any other field of ``attnsep.train.one_step.OneStepConfig``: ``eta``, ``eta_scale``,
        ``samples`` (an empirical step on that many samples), ``support``, ``k``, ``noise``,
        ``init``, ``success_tol``, ``dtype``, ``device``, ``replica_batch``.

    Returns
    -------
    XorStepResult
        Per-replica losses, certified errors, success, specialization and collapse.
    """
    named = {"d": d, "m": m, "seeds": seeds, "seed": seed, "attention": attention}
    config = _config(OneStepConfig, named, options)
    return XorStepResult(run_one_step(config, keep_embeddings=keep_embeddings))


def xor_train(
    d: int,
    m: int = default(XorTrainConfig, "m"),
    seeds: int = default(XorTrainConfig, "seeds"),
    *,
    steps: int = default(XorTrainConfig, "steps"),
    seed: int = 0,
    attention: str = default(XorTrainConfig, "attention"),
    progress: Callable[[int, int], None] | None = None,
    **options: Any,
) -> XorTrainResult:
    """Many training steps of the k-head model on sparse parity (SPEC A2, A4, A6).

    The computation of ``attnsep xor train`` (``attnsep.train.xor_train.train_xor``):
    exact population gradient descent by default, or SGD / Adam on samples.

    Parameters
    ----------
    d, m, seeds, steps, seed, attention
        As for [`xor_one_step`][attnsep.api.xor_one_step]; ``steps`` training steps.
    progress
        Called as ``progress(step, steps)`` after every step.
    **options
        Any other field of ``attnsep.train.xor_train.XorTrainConfig``: ``k``,
        ``gradient`` (``population``, ``fresh``, ``fixed``), ``samples``, ``cube_fraction``,
        ``batch``, ``optimizer`` (``gd``, ``adam``), ``eta``, ``eta_scale``, ``init``,
        ``noise``, ``success_tol``, ``stop_at_success``, ``dtype``, ``device``.

    Returns
    -------
    XorTrainResult
        Trajectories per replica and step; ``summary()`` and ``to_frame()`` (one row per
        replica and step).
    """
    named = {"d": d, "m": m, "seeds": seeds, "steps": steps, "seed": seed, "attention": attention}
    config = _config(XorTrainConfig, named, options)
    return train_xor(config, progress=progress)


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
    seeds, seed
        Number of replicas and base seed.
    eval_lengths
        Lengths ``T'`` to evaluate at besides ``T`` (length generalization).
    eval_size
        Evaluation sequences per length.
    **options
        Any other field of ``attnsep.train.selection.SelectionTrainConfig``: ``pe_kind``,
        ``trainable`` (``full``, ``position``), ``objective`` (``sgd``, ``population``),
        ``steps``, ``batch``, ``lr``.

    Returns
    -------
    SelectorResult
        ``W``, the training curve and the losses per replica and length.
    """
    lengths = list(dict.fromkeys([T, *eval_lengths]))
    for length in lengths:
        int_at_least("eval length", length, max(q, 1))
    int_at_least("eval size", eval_size, 2)
    named = {
        "d": d,
        "T": T,
        "q": q,
        "pe": pe,
        "pe_dim": m_p,
        "replicas": seeds,
        "seed": seed,
        "fixed_positions": max(lengths) if pe == "fixed" else None,
    }
    config = _config(SelectionTrainConfig, named, options)
    start = time.perf_counter()
    with torch_threads(1):
        result = train(config)
        rows = evaluate_lengths(
            result.W, TokenSelection.of(config), result.encodings, lengths, seed, eval_size
        )
    return SelectorResult(result, tuple(rows), time.perf_counter() - start, eval_size)


# ------------------------------------------------------------------------ FCN baselines


def train_fcn(task: str, *, seeds: int | None = None, seed: int = 0, **options: Any) -> FCNResult:
    """Train an ensemble of fully-connected ReLU nets (SPEC A7.6, B4, B5.4).

    The computation of ``attnsep fcn xor`` (``task="xor"``: sparse XOR, success = test sign
    error ``<= success_tol``) and ``attnsep fcn select`` (``task="select"``: an MLP on
    ``[vec X ; 1_y]`` for q-sparse averaging, beside the floor of SPEC B4).

    Parameters
    ----------
    task
        ``xor`` or ``select``.
    seeds, seed
        Number of replicas (default: the config's) and base seed.
    **options
        Any other field of ``attnsep.configs.XorFCNConfig`` (``d``, ``width``,
        ``depth``, ``steps``, ``batch``, ``lr``, ``optimizer``, ``loss``, ``samples``, ...) or
        ``attnsep.configs.SelectionFCNConfig`` (``d``, ``T``, ``q``, ``width``, ...).

    Returns
    -------
    FCNResult
        The trained nets and per-replica errors or losses.
    """
    one_of("task", task, FCN_TASKS)
    config_type = XorFCNConfig if task == "xor" else SelectionFCNConfig
    named = {"seed": seed} if seeds is None else {"seed": seed, "replicas": seeds}
    config = _config(config_type, named, options)
    raw = train_xor_fcn(config) if task == "xor" else train_selection(config)
    return FCNResult(task, raw)


# ------------------------------------------------------------------------ the engine


def list_experiments():
    """The registered experiments (one per claim of SPEC A7, B5, C): a DataFrame with
    ``name``, ``claim``, ``title`` and ``paper`` (the paper's statement)."""
    import pandas as pd

    from .experiments import catalog

    return pd.DataFrame(list(catalog()))


def _run_jobs(
    jobs: list[Job], store: str | Path, executor: str, **engine: Any
) -> tuple[Path, tuple[dict[str, Any], ...], int, int]:
    """Run ``jobs`` into the store (skipping stored ones); their rows in job order."""
    one_of("executor", executor, EXECUTORS)
    db = Store(store)
    try:
        outcome = run_sweep(jobs, db, executor, **engine)
        found = {row["config_hash"]: row for row in db.rows(keys=[job.key for job in jobs])}
    finally:
        db.close()
    rows = tuple(found[key] for key in dict.fromkeys(job.key for job in jobs) if key in found)
    return db.path, rows, outcome.computed, outcome.cached


def run_experiment(
    name: str,
    preset: str = "quick",
    config: dict[str, Any] | None = None,
    *,
    executor: str = "inline",
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
        An experiment name ([`list_experiments`][attnsep.api.list_experiments]).
    preset
        ``quick``, ``standard`` or ``full``: the sizes the config starts from.
    config
        Fields that override the preset's (validated by the experiment's typed config).
    executor
        ``inline`` (this process), ``process`` (a local pool) or ``ray``.
    store
        The SQLite results database (created if missing).
    address, workers
        The Ray cluster address; the process pool's size.

    Returns
    -------
    ExperimentResult
        The stored rows, the records, and the verdict (``reproduced``, ``not reproduced``,
        ``inconclusive``, or ``incomplete`` when a job failed).
    """
    one_of("preset", preset, base.PRESETS)
    experiment = base.get(name)
    typed = experiment.config(preset, **(config or {}))
    jobs = jobs_for(name, typed)
    path, rows, computed, cached = _run_jobs(
        jobs, store, executor, address=address, workers=workers
    )
    failed = [row for row in rows if row["status"] != "done"]
    if failed:
        outcome = {
            "verdict": "incomplete",
            "reason": f"{len(failed)} of {len(rows)} jobs failed; first error: "
            + failed[0]["error"].splitlines()[0],
        }
    else:
        records = [record for row in rows for record in row["records"]]
        outcome = experiment.verdict(records, typed)
    return ExperimentResult(
        name=name,
        claim=experiment.claim,
        preset=preset,
        config=typed,
        rows=rows,
        outcome=outcome,
        computed=computed,
        cached=cached,
        store=path,
    )


def sweep(
    experiment: str,
    grid: dict[str, list[Any]] | None = None,
    *,
    fixed: dict[str, Any] | None = None,
    preset: str = "quick",
    executor: str = "inline",
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
        An experiment name ([`list_experiments`][attnsep.api.list_experiments]).
    grid
        ``{field: [value, ...]}``: one config per point of the product.
    fixed
        ``{field: value}``: fields set at every point.
    preset
        The preset the fields start from.
    executor, store, address, workers
        As for [`run_experiment`][attnsep.api.run_experiment].
    on_start, on_done
        Progress: ``on_start(to_run, cached)``, then ``on_done(job, row)`` per finished job.

    Returns
    -------
    SweepResult
        The grid points, the stored rows of its jobs, what was computed and what was cached.
    """
    one_of("preset", preset, base.PRESETS)
    base.get(experiment)
    configs = expand_grid(experiment, preset, dict(fixed or {}), dict(grid or {}))
    jobs = [job for config in configs for job in jobs_for(experiment, config)]
    path, rows, computed, cached = _run_jobs(
        jobs,
        store,
        executor,
        address=address,
        workers=workers,
        on_start=on_start,
        on_done=on_done,
    )
    return SweepResult(
        experiment=experiment,
        preset=preset,
        configs=tuple(c.model_dump(mode="json") for c in configs),
        rows=rows,
        computed=computed,
        cached=cached,
        store=path,
        job_hashes=tuple(job.key for job in jobs),
    )


def plan(
    groups: dict[str, list[Job]],
    store: str | Path = DEFAULT_PATH,
    executor: str = "process",
    workers: int | None = None,
    address: str | None = None,
    budget: float = BUDGET,
):
    """What running ``groups`` (experiment -> jobs, in submission order) into ``store`` would
    cost (``--plan``): jobs stored, CPU and wall time per experiment (``engine.plan.Plan``).
    The store is read, never created; a short calibration (``budget`` seconds per experiment, 0
    for none) times jobs no timing covers. Raises ``CalibrationFailed`` when it cannot."""
    from .engine.executors import worker_count
    from .engine.plan import make_plan

    path = Path(store)
    opened = Store(path) if path.exists() else None  # a plan creates no store
    try:
        return make_plan(
            groups, opened, executor, worker_count(executor, workers, address), budget=budget
        )
    finally:
        if opened is not None:
            opened.close()


def plan_table(found) -> tuple[tuple[str, ...], list[tuple[str, ...]], list[str]]:
    """A plan as text: the column names, one row per experiment (and the total), and the
    summary lines (wall estimate, sources) that ``attnsep reproduce --plan`` prints."""
    from .engine import plan as planning

    return planning.HEADER, planning.table_rows(found), planning.summary_lines(found)


def xor_train_figures(result: XorTrainResult, folder: str | Path) -> list[Path]:
    """The figures of a training run (``attnsep xor train --figures``) written into
    ``folder``: their paths."""
    from .report.xor_train_figures import figures

    return figures(result, Path(folder))


def load_runs(store: str | Path = DEFAULT_PATH, experiment: str | None = None):
    """The stored records as a pandas DataFrame: one row per record, the job's ``job_id``,
    ``experiment`` and ``config_hash``, its config flattened to ``config.<field>`` columns,
    then the record's fields (the table ``attnsep runs export`` writes).

    A column whose values are not all numbers, all strings or all booleans holds JSON text.
    """
    require(Path(store).exists(), f"store {str(store)!r} does not exist")
    db = Store(store)
    try:
        return db.frame(experiment)
    finally:
        db.close()
