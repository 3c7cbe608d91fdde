"""The typed results of the public API (``attnsep.api``).

Each is a frozen dataclass around the library's own result (``raw``) with ``summary()`` (a
short dict: the numbers a reader looks at first, no per-replica lists) and ``to_frame()`` (a
pandas DataFrame, one row per replica or per stored record).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from .configs import EVAL_SIZE, SelectionFCNConfig, XorFCNConfig
from .core.io import save_npz
from .core.validate import require
from .engine.records import record_dicts, record_table
from .engine.store import records_frame
from .exact.selection_bounds import fcn_loss_floor, uniform_attention_loss
from .experiments.base import ExperimentConfig, Record, get
from .metrics.ensemble import summary as value_summary
from .metrics.selection import LengthEval, cos_to_ground_truth
from .metrics.stats import wilson
from .models.mlp import count
from .models.query_heads import QueryHeads
from .positional_encodings import FixedPE
from .train.fcn import SelectionFCNResult, XorFCNResult
from .train.one_step import OneStepConfig, OneStepResult, summarize
from .train.selection import SelectionTrainConfig, SelectionTrainResult

if TYPE_CHECKING:
    import pandas as pd

    from .configs import V1Config
    from .report.text_tables import TextTable
    from .train.kparity_v1 import V1Result


def _mean_median(values: dict[str, Any]) -> dict[str, float]:
    """A ``metrics.ensemble.summary`` without its per-replica ``values``."""
    return {key: value for key, value in values.items() if key != "values"}


# ------------------------------------------------------------ one XOR step (SPEC A5, A6)


@dataclass(frozen=True)
class XorStepResult:
    """One gradient step of the k-head model for an ensemble of replicas (SPEC A5, A6).

    ``raw`` holds the per-replica arrays (replica axis first): supports, query vectors before
    and after, losses, each head's mass on its support bit, certified errors, and the
    embeddings ``V`` when the step was run with ``keep_embeddings=True``.
    """

    raw: OneStepResult
    """The step's per-replica arrays (``attnsep.train.one_step.OneStepResult``)."""

    @property
    def config(self) -> OneStepConfig:
        """The step's config (``attnsep.configs.OneStepConfig``)."""
        return self.raw.config

    @property
    def success(self) -> np.ndarray:
        """Per replica: certified worst-case error ``<= success_tol`` (SPEC A6)."""
        return self.raw.success

    def report(self) -> dict[str, Any]:
        """The JSON object of ``attnsep xor one-step`` (per-replica values included)."""
        return summarize(self.raw)

    def summary(self) -> dict[str, Any]:
        """The numbers of ``attnsep xor one-step --json`` without the per-replica lists."""
        out = summarize(self.raw)
        out.pop("supports")
        for key in ("loss_before", "loss_after", "support_mass", "certified_error"):
            out[key] = _mean_median(out[key])
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row per replica: support, losses, certified error, success, specialization,
        collapse and ``mass_h{h}`` (head ``h``'s weight on its assigned support bit)."""
        import pandas as pd

        r = self.raw
        columns: dict[str, Any] = {"replica": np.arange(r.support.shape[0])}
        for a in range(r.support.shape[1]):
            columns[f"support_{a}"] = r.support[:, a]
        columns.update(
            loss_before=r.loss_before,
            loss_after=r.loss_after,
            certified_error=r.certified_error,
            success=r.success,
            specialized=r.specialized,
            collapsed=r.collapsed,
        )
        for h in range(r.mass_after.shape[1]):
            columns[f"mass_h{h}"] = r.mass_after[:, h]
        return pd.DataFrame(columns)

    def attention(self, after: bool = True) -> np.ndarray:
        """Attention weights ``gamma_h = sigma(V theta_h)`` (SPEC A2), ``E x H x d``, after the
        step (or before it); needs the step run with ``keep_embeddings=True``."""
        require(
            self.raw.embeddings is not None,
            "attention weights need the embeddings: run the step with keep_embeddings=True",
        )
        model = QueryHeads(torch.from_numpy(self.raw.embeddings), self.config.attention)
        theta = self.raw.theta_after if after else self.raw.theta_before
        return model.weights(torch.from_numpy(theta)).numpy()


V1_MARKS = (0, 100, 300, 780, 1000, 2000)
"""Epochs at which ``attnsep xor train-v1`` reports the median test accuracy."""
V1_ACCURACY = 0.95
"""``attnsep xor train-v1`` reports the epochs each replica needs to reach this test accuracy."""


def v1_report(config: V1Config, result: V1Result) -> dict[str, Any]:
    """The JSON object of ``attnsep xor train-v1`` (the authors' earlier 4x4 model): the median
    test accuracy at ``V1_MARKS`` and the last epoch, and the epochs to ``V1_ACCURACY``."""
    marks = sorted({*V1_MARKS, result.epochs_run})
    return {
        **config.model_dump(),
        "trainable_params": 2 * config.k,
        "epochs_run": result.epochs_run,
        "seconds": result.seconds,
        "test_accuracy_final": [float(a) for a in result.test_accuracy[:, -1]],
        "median_test_accuracy": {str(t): a for t, a in result.curve(marks).items()},
        f"epochs_to_{V1_ACCURACY}": result.epochs_to_accuracy(V1_ACCURACY),
    }


# ------------------------------------------------------------ token selection (SPEC B3, B5)


def _replica_mean_stderr(stderr: torch.Tensor) -> float:
    """Standard error of a mean over ``E`` replicas with independent evaluation sets:
    ``sqrt(Σ_e se_e²) / E``."""
    return float(stderr.pow(2).sum().sqrt()) / stderr.shape[0]


def length_record(row: LengthEval, T: int, q: int) -> dict[str, Any]:
    """One evaluation length of a trained selector (SPEC B5.3): the replica means of the
    sampled and the exact-over-tokens loss with their standard errors, uniform attention's
    loss, and the per-replica values; ``exact_*`` is ``None`` when the exact form does not
    apply (content block of ``W`` nonzero)."""
    exact, exact_stderr = row.exact, row.exact_stderr  # both or neither
    return {
        "T": row.length,
        "in_distribution": row.length == T,
        "loss": float(row.loss.mean()),
        "loss_per_coord": float(row.loss_per_coord.mean()),
        "stderr": _replica_mean_stderr(row.stderr),
        "exact_loss": None if exact is None else float(exact.mean()),
        "exact_stderr": None if exact_stderr is None else _replica_mean_stderr(exact_stderr),
        "uniform_attention_loss": float(uniform_attention_loss(row.length, q, row.d)),
        "per_replica": {
            "loss": row.loss.tolist(),
            "stderr": row.stderr.tolist(),
            "exact_loss": None if exact is None else exact.tolist(),
            "exact_stderr": None if exact_stderr is None else exact_stderr.tolist(),
        },
    }


@dataclass(frozen=True)
class SelectorResult:
    """A trained selector for every replica and its losses at each evaluation length
    (SPEC B3, B5.3). ``raw`` holds ``W`` (``E x D x D``), the encodings and the training curve;
    ``evals`` one ``attnsep.metrics.selection.LengthEval`` per length, the training
    length first."""

    raw: SelectionTrainResult
    """The training's result (``attnsep.train.selection.SelectionTrainResult``): ``W``, the
    encodings and the training curve."""
    evals: tuple[LengthEval, ...]
    """The losses at each evaluation length, the training length first."""
    seconds: float
    """Wall seconds of the training and the evaluation."""
    eval_size: int = EVAL_SIZE
    """Evaluation sequences per length."""

    @property
    def config(self) -> SelectionTrainConfig:
        """The training config (``attnsep.configs.SelectionTrainConfig``)."""
        return self.raw.config

    @property
    def exact_over_tokens(self) -> bool:
        """Whether every evaluation has the exact-over-tokens loss (content block of ``W`` 0)."""
        return all(row.exact is not None for row in self.evals)

    def report(self) -> dict[str, Any]:
        """The JSON object of ``attnsep select train``: the config, the training loss and
        ``cos(W, W*)`` per replica, and per evaluation length its losses (``length_record``)."""
        c = self.config
        return {
            **c.model_dump(exclude={"replicas"}),
            "seeds": c.replicas,
            "optimizer": "sgd, lr linear decay to 0",
            "eval_size": self.eval_size,
            "train_loss": value_summary(self.raw.train_loss.tolist()),
            "cos_to_ground_truth": value_summary(cos_to_ground_truth(self.raw.W, c.d).tolist()),
            "exact_over_tokens": "applies (content block of W is zero)"
            if self.exact_over_tokens
            else "not applicable: the content block of W is nonzero, so logits depend on the "
            "tokens",
            "eval": [length_record(row, c.T, c.q) for row in self.evals],
            "seconds": self.seconds,
        }

    def save(self, path: str) -> None:
        """``W`` (``E x D x D``), ``P`` for a fixed PE, the training curve, and what recomputes
        the evaluation losses (seed, sizes, lengths) in one ``.npz`` file."""
        c, rows = self.config, self.evals
        arrays: dict[str, Any] = {
            "W": self.raw.W.numpy(),
            "train_losses": self.raw.losses.numpy(),
            "seed": c.seed,
            "d": c.d,
            "T": c.T,
            "q": c.q,
            "pe_dim": c.pe_dim,
            "pe": c.pe,
            "pe_kind": c.pe_kind,
            "eval_size": self.eval_size,
            "config": json.dumps(c.model_dump()),
            "eval_lengths": [row.length for row in rows],
            "eval_loss": torch.stack([row.loss for row in rows], dim=1).numpy(),
            "eval_stderr": torch.stack([row.stderr for row in rows], dim=1).numpy(),
        }
        if self.exact_over_tokens:
            exact = [row.exact for row in rows if row.exact is not None]  # every row's
            arrays["eval_exact"] = torch.stack(exact, dim=1).numpy()
        if isinstance(self.raw.encodings, FixedPE):
            arrays["P"] = self.raw.encodings.table.numpy()
        save_npz(path, **arrays)

    @property
    def W(self) -> np.ndarray:
        """The trained ``W``, ``E x (d + m_p) x (d + m_p)``."""
        return self.raw.W.numpy()

    def curve(self):
        """The training loss per step and replica (DataFrame: ``step``, ``replica``, ``loss``)."""
        import pandas as pd

        losses = self.raw.losses.numpy()
        steps, replicas = losses.shape
        return pd.DataFrame(
            {
                "step": np.repeat(np.arange(steps), replicas),
                "replica": np.tile(np.arange(replicas), steps),
                "loss": losses.reshape(-1),
            }
        )

    def summary(self) -> dict[str, Any]:
        """Sizes, the training loss and ``cos(W, W*)`` (replica means), and per evaluation
        length the mean loss beside uniform attention's (losses summed over the ``d``
        coordinates, SPEC B1)."""
        c = self.config
        return {
            "d": c.d,
            "T": c.T,
            "q": c.q,
            "pe": c.pe,
            "m_p": c.pe_dim,
            "seeds": c.replicas,
            "steps": c.steps,
            "train_loss": float(self.raw.train_loss.mean()),
            "cos_to_ground_truth": float(cos_to_ground_truth(self.raw.W, c.d).mean()),
            "loss": {row.length: float(row.loss.mean()) for row in self.evals},
            "uniform": {
                row.length: float(uniform_attention_loss(row.length, c.q, c.d))
                for row in self.evals
            },
            "seconds": self.seconds,
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per replica and evaluation length ``T_eval``: the sampled loss and its
        standard error, the loss exact over the tokens (``NaN`` when the content block of ``W``
        is nonzero) and uniform attention's loss."""
        import pandas as pd

        c = self.config
        cos = cos_to_ground_truth(self.raw.W, c.d).numpy()
        rows = []
        for ev in self.evals:
            uniform = float(uniform_attention_loss(ev.length, c.q, c.d))
            for e in range(c.replicas):
                rows.append(
                    {
                        "replica": e,
                        "pe": c.pe,
                        "m_p": c.pe_dim,
                        "T": c.T,
                        "T_eval": ev.length,
                        "loss": float(ev.loss[e]),
                        "stderr": float(ev.stderr[e]),
                        "exact": np.nan if ev.exact is None else float(ev.exact[e]),
                        "exact_stderr": np.nan
                        if ev.exact_stderr is None
                        else float(ev.exact_stderr[e]),
                        "uniform": uniform,
                        "cos_to_ground_truth": float(cos[e]),
                    }
                )
        return pd.DataFrame(rows)


# ------------------------------------------------------------ FCN baselines (SPEC A7.6, B4)


def fcn_xor_report(cfg: XorFCNConfig, result: XorFCNResult) -> dict[str, Any]:
    """The JSON object of ``attnsep fcn xor``; ``final_loss`` is the objective on the test set."""
    successes = int(result.success.sum())
    low, high = wilson(successes, cfg.replicas)
    return {
        "d": cfg.d,
        "width": cfg.width,
        "depth": cfg.depth,
        "seeds": cfg.replicas,
        "seed": cfg.seed,
        "params": count(cfg.d, cfg.width, 1, cfg.depth),
        "optimizer": cfg.optimizer,
        "loss": cfg.loss,
        "lr": cfg.rate,
        "steps": cfg.steps,
        "batch": cfg.batch,
        "data": "fresh" if cfg.samples is None else cfg.samples,
        "early_stop": cfg.early_stop,
        "test_samples": cfg.test_samples,
        "success_tol": cfg.success_tol,
        "success_rate": successes / cfg.replicas,
        "success_interval": [low, high],
        "support": result.support.tolist(),
        "test_error": value_summary(result.test_error.tolist()),
        "final_loss": value_summary(result.test_loss.tolist()),
        "steps_run": value_summary([float(s) for s in result.steps_run.tolist()]),
    }


def fcn_selection_report(cfg: SelectionFCNConfig, result: SelectionFCNResult) -> dict[str, Any]:
    """The JSON object of ``attnsep fcn select`` (the floor of SPEC B4 beside the losses)."""
    floor = fcn_loss_floor(cfg.T, cfg.q, cfg.d, cfg.width)
    return {
        "d": cfg.d,
        "T": cfg.T,
        "q": cfg.q,
        "width": cfg.width,
        "depth": cfg.depth,
        "seeds": cfg.replicas,
        "seed": cfg.seed,
        "params": count(cfg.T * cfg.d + cfg.T, cfg.width, cfg.d, cfg.depth),
        "optimizer": cfg.optimizer,
        "lr": cfg.lr,
        "steps": cfg.steps,
        "batch": cfg.batch,
        "eval_samples": cfg.eval_samples,
        "loss": value_summary(result.loss.tolist()),
        "stderr": value_summary(result.stderr.tolist()),
        "train_loss": value_summary(result.train_loss.tolist()),
        "fcn_loss_floor": float(floor),
        "fcn_loss_floor_exact": str(floor),
    }


@dataclass(frozen=True)
class FCNResult:
    """An ensemble of fully-connected ReLU nets on sparse XOR (``task="xor"``, SPEC A7.6) or
    on token selection (``task="select"``, SPEC B4, B5.4); ``raw`` holds the trained nets."""

    task: str
    """``xor`` or ``select``."""
    raw: XorFCNResult | SelectionFCNResult
    """The trained nets and their per-replica errors or losses (``attnsep.train.fcn``)."""

    @property
    def config(self) -> XorFCNConfig | SelectionFCNConfig:
        """The training config (``XorFCNConfig`` or ``SelectionFCNConfig``)."""
        return self.raw.config

    def report(self) -> dict[str, Any]:
        """The JSON object of ``attnsep fcn xor`` / ``attnsep fcn select`` (per-replica values
        included)."""
        if isinstance(self.raw, XorFCNResult):  # task "xor"
            return fcn_xor_report(self.raw.config, self.raw)
        return fcn_selection_report(self.raw.config, self.raw)

    def summary(self) -> dict[str, Any]:
        """[`report`][attnsep.results.FCNResult.report] without the per-replica lists."""
        out = self.report()
        out.pop("support", None)
        for key, value in out.items():
            if isinstance(value, dict) and "values" in value:
                out[key] = _mean_median(value)
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row per replica: XOR: support, test sign error and loss, steps run, success;
        selection: evaluation loss and its standard error, training loss, the FCN floor."""
        import pandas as pd

        r = self.raw
        if isinstance(r, XorFCNResult):  # task "xor"
            columns: dict[str, Any] = {"replica": np.arange(r.test_error.shape[0])}
            for a in range(r.support.shape[1]):
                columns[f"support_{a}"] = r.support[:, a].numpy()
            columns.update(
                test_error=r.test_error.numpy(),
                test_loss=r.test_loss.numpy(),
                steps_run=r.steps_run.numpy(),
                success=r.success.numpy(),
            )
            return pd.DataFrame(columns)
        c = r.config
        return pd.DataFrame(
            {
                "replica": np.arange(r.loss.shape[0]),
                "loss": r.loss.numpy(),
                "stderr": r.stderr.numpy(),
                "train_loss": r.train_loss.numpy(),
                "fcn_loss_floor": float(fcn_loss_floor(c.T, c.q, c.d, c.width)),
            }
        )


# ------------------------------------------------------------ the engine (experiments, sweeps)


def _records(rows: tuple[dict[str, Any], ...]) -> list[Record]:
    return [record for row in rows if row["status"] == "done" for record in row["records"]]


def _engine_counts(result: ExperimentResult | SweepResult) -> dict[str, Any]:
    """What the engine did for a run: computed, from the store, failed, and where it stored."""
    return {
        "computed": result.computed,
        "cached": result.cached,
        "failed": sum(row["status"] != "done" for row in result.rows),
        "store": str(result.store),
    }


@dataclass(frozen=True)
class ExperimentResult:
    """One registered experiment (one claim of SPEC A7, B5, C) run through the engine.

    ``rows`` are the stored rows of its jobs (job order); ``outcome`` is the experiment's
    verdict on their records (``verdict``, ``reason``, ``estimates``, ...), or
    ``incomplete`` when a job failed.
    """

    name: str
    """The experiment's name."""
    claim: str
    """Its claim: the SPEC section (``A7.1``, ``B5.3``, ``C``)."""
    preset: str
    """The preset its config started from."""
    config: ExperimentConfig
    """The experiment's typed config, the preset's with the overrides applied."""
    rows: tuple[dict[str, Any], ...]
    """The stored rows of its jobs, in job order (``status``, ``records``, ``seconds``, ...)."""
    outcome: dict[str, Any]
    """The verdict on the records: ``verdict``, ``reason``, ``estimates``, ..."""
    computed: int
    """Jobs computed by this call."""
    cached: int
    """Jobs read back from the store."""
    store: Path
    """The results database the rows are stored in."""

    @property
    def records(self) -> list[Record]:
        """The records of every finished job, in job order."""
        return _records(self.rows)

    @property
    def verdict(self) -> str:
        """``reproduced``, ``not reproduced``, ``inconclusive`` or ``incomplete``."""
        return self.outcome["verdict"]

    def summary(self) -> dict[str, Any]:
        """Experiment, claim, verdict and its reason, and what the engine computed."""
        return {
            "experiment": self.name,
            "claim": self.claim,
            "preset": self.preset,
            "verdict": self.verdict,
            "reason": self.outcome.get("reason", ""),
            "jobs": len(self.rows),
            **_engine_counts(self),
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per record, config flattened: the table ``attnsep runs export`` writes."""
        return records_frame(self.rows)

    def figures(self, folder: str | Path) -> list[Path]:
        """Draw the experiment's figures (as in the report) into ``folder``; their paths."""
        require(bool(self.records), f"{self.name}: no finished job, nothing to draw")
        return get(self.name).figure(self.records, self.config, Path(folder))


@dataclass(frozen=True)
class SweepResult:
    """An experiment run over a grid of its config fields; ``rows`` are the stored rows of the
    sweep's jobs (job order), ``configs`` the validated grid points."""

    experiment: str
    """The experiment's name."""
    preset: str
    """The preset the fields started from."""
    configs: tuple[dict[str, Any], ...]
    """The validated grid points, as plain dicts."""
    rows: tuple[dict[str, Any], ...]
    """The stored rows of the sweep's jobs, in job order."""
    computed: int
    """Jobs computed by this call."""
    cached: int
    """Jobs read back from the store."""
    store: Path
    """The results database the rows are stored in."""
    job_hashes: tuple[str, ...] = field(repr=False, default=())
    """The hash of every job of the grid, in grid order (``summary()["jobs"]`` counts the
    distinct ones)."""

    @property
    def records(self) -> list[Record]:
        """The records of every finished job, in job order."""
        return _records(self.rows)

    def summary(self) -> dict[str, Any]:
        """The counts ``attnsep sweep --json`` prints (``jobs``: the distinct jobs)."""
        return {
            "experiment": self.experiment,
            "configs": len(self.configs),
            "jobs": len(set(self.job_hashes)),
            **_engine_counts(self),
        }

    def report(self) -> dict[str, Any]:
        """The JSON object of ``attnsep sweep --json``: the counts, every job's hash (grid
        order) and every record as a plain dict (missing values ``None``)."""
        return {
            **self.summary(),
            "job_hashes": list(self.job_hashes),
            "records": record_dicts(self.to_frame()),
        }

    def table(self, limit: int = 40) -> TextTable:
        """The records as ``attnsep sweep`` prints them: the columns that differ between
        records (at most ``limit`` rows), the fields equal in all as the caption, and what the
        engine did as a note (``engine.records.record_table``)."""
        from .report.text_tables import TextTable

        frame = self.to_frame()
        header, rows, same = record_table(frame, limit)
        s = self.summary()
        note = (
            f"{self.experiment}: {s['configs']} configs, {s['jobs']} jobs: {s['computed']} "
            f"computed, {s['cached']} from the store, {s['failed']} failed -> {s['store']}"
        )
        title = f"{self.experiment}: {len(frame)} records"
        columns, justify = tuple(header), "l" * len(header)
        return TextTable(title, columns, tuple(map(tuple, rows)), (note,), justify, same)

    def to_frame(self) -> pd.DataFrame:
        """One row per record of the sweep's jobs, config flattened (as ``load_runs``)."""
        return records_frame(self.rows)


@dataclass(frozen=True)
class FrontierResult:
    """Trainable parameters needed against problem size, the transformer beside the FCN
    (``task``: ``xor``, SPEC A7.6; ``select``, SPEC Part C): ``data`` is the summary of the
    ``separation-xor`` or ``separation-select`` experiment's records, ``experiment`` its run
    through the engine."""

    task: str
    """``xor`` (SPEC A7.6) or ``select`` (SPEC Part C)."""
    data: dict[str, Any]
    """The summary of the experiment's records: what ``report()`` returns."""
    experiment: ExperimentResult = field(repr=False)
    """The run of ``separation-xor`` or ``separation-select`` through the engine."""

    def report(self) -> dict[str, Any]:
        """The JSON object of ``attnsep frontier xor|select``."""
        return self.data

    def summary(self) -> dict[str, Any]:
        """The same as [`report`][attnsep.results.FrontierResult.report]."""
        return self.data

    def table(self) -> TextTable:
        """The table ``attnsep frontier`` prints: a title, columns, rows and notes."""
        from .report.frontier_tables import select_table, xor_table

        return (xor_table if self.task == "xor" else select_table)(self.data)

    def to_frame(self) -> pd.DataFrame:
        """The printed table as a DataFrame (intervals as text)."""
        import pandas as pd

        text = self.table()
        return pd.DataFrame(list(text.rows), columns=list(text.columns))
