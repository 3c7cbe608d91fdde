"""Results on sparse XOR with the k-head model: one gradient step (SPEC A5, A6), training
(SPEC A2, A4, A6), and the report of the authors' earlier 4x4 model."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ..configs import OneStepConfig, XorTrainConfig
from ..core.validate import require
from ..models.query_heads import QueryHeads
from ..train.one_step import REPLICA_FIELDS, OneStepResult, summarize
from ..train.xor_train import XorTrajectories
from . import saved
from .common import Scalar, config_from, dump, flat, short

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from ..configs import V1Config
    from ..train.kparity_v1 import V1Result

ERROR_FLOOR = 1e-16
"""Certified errors below this (0 in float64) are drawn at it on the log axis."""


@dataclass(frozen=True)
class XorStepResult:
    """One gradient step of the k-head model for an ensemble of replicas (SPEC A5, A6).

    ``raw`` holds the per-replica arrays (replica axis first): supports, query vectors before
    and after, losses, each head's mass on its support bit, certified errors, and the
    embeddings ``V`` when the step was run with ``keep_embeddings=True``.
    """

    raw: OneStepResult

    @property
    def config(self) -> OneStepConfig:
        return self.raw.config

    @property
    def success(self) -> np.ndarray:
        """Per replica: certified worst-case error ``<= success_tol`` (SPEC A6)."""
        return self.raw.success

    def report(self) -> dict[str, Any]:
        """The JSON object of ``attnsep xor one-step`` (per-replica values included)."""
        return summarize(self.raw)

    def summary(self) -> dict[str, Scalar]:
        """The numbers of ``attnsep xor one-step --json``, flat and without the per-replica
        lists (``loss_after_mean``, ``certified_error_max``, ...; ``device``: where it ran)."""
        out = summarize(self.raw)
        out.pop("supports")
        return flat(out)

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

    def save(self, path: str | Path) -> Path:
        """Every per-replica array, ``V`` when kept, ``eta`` and the config in one ``.npz``
        file (``attnsep.load`` reads it back); the path written."""
        r = self.raw
        arrays = {name: getattr(r, name) for name in REPLICA_FIELDS}
        if r.embeddings is not None:
            arrays["V"] = r.embeddings
        meta = {"config": dump(r.config), "eta": r.eta, "device": r.device}
        arrays.update(saved.older_entries(config=meta["config"], eta=r.eta))
        return saved.write(path, type(self).__name__, meta, arrays)

    @classmethod
    def from_saved(cls, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> XorStepResult:
        """The result ``save`` wrote (its header ``meta`` and ``arrays``)."""
        raw = OneStepResult(
            config=config_from(OneStepConfig, meta["config"]),
            eta=float(meta["eta"]),
            embeddings=arrays.get("V"),
            device=str(meta["device"]),
            **{name: arrays[name] for name in REPLICA_FIELDS},
        )
        return cls(raw)

    def plot(self) -> Figure:
        """Per replica, the certified error after the step against ``success_tol`` (green:
        success) and each head's weight on its assigned support bit."""
        from matplotlib.figure import Figure

        r, c = self.raw, self.config
        replicas = np.arange(r.certified_error.shape[0])
        fig = Figure(figsize=(11.0, 4.0))
        left, right = fig.subplots(1, 2)
        colors = np.where(r.success, "tab:green", "tab:red")
        left.bar(replicas, np.maximum(r.certified_error, ERROR_FLOOR), color=colors)
        left.axhline(c.success_tol, color="grey", ls="--", lw=0.8, label="success tolerance")
        left.set_yscale("log")
        left.set_xlabel("replica")
        left.set_ylabel("certified error after the step")
        left.set_title(f"{int(r.success.sum())} of {replicas.size} replicas succeed", fontsize=9)
        left.legend(fontsize=7)
        heads = r.mass_after.shape[1]
        width = 0.8 / heads
        for h in range(heads):
            offset = (h - (heads - 1) / 2) * width
            right.bar(replicas + offset, r.mass_after[:, h], width, label=f"head {h + 1}")
        right.set_ylim(0, 1.05)
        right.set_xlabel("replica")
        right.set_ylabel("weight on its support bit")
        right.legend(fontsize=7)
        fig.suptitle(f"One step: d={c.d}, m={c.m}, {c.attention}, eta={r.eta:.3g}", fontsize=10)
        fig.tight_layout()
        return fig

    def __repr__(self) -> str:
        c = self.config
        return short(
            type(self).__name__,
            d=c.d,
            m=c.m,
            seeds=c.seeds,
            attention=c.attention,
            success_rate=float(self.success.mean()),
            device=self.raw.device,
        )


TRAJECTORY_ARRAYS = (
    "support",
    "theta_init",
    "theta",
    "weights",
    "loss",
    "population_loss",
    "mass",
    "certified_error",
    "test_accuracy",
)
"""The arrays of a training run (``test_accuracy`` only with a cube split)."""


@dataclass(frozen=True)
class XorTrainResult:
    """Many training steps of the k-head model on sparse parity (SPEC A2, A4, A6).

    ``raw`` holds the trajectories (``attnsep.train.xor_train.XorTrajectories``: losses,
    masses and certified errors per replica and step, the query vectors and weights after the
    last step); ``figures`` the paths of the figures drawn of the run (``figures=``).
    """

    raw: XorTrajectories
    figures: tuple[str, ...] = ()

    @property
    def config(self) -> XorTrainConfig:
        return self.raw.config

    @property
    def success(self) -> np.ndarray:
        """Per replica, success after the last step (SPEC A6)."""
        return self.raw.success

    @property
    def steps_run(self) -> int:
        return self.raw.steps_run

    def steps_to_success(self) -> list[int | None]:
        """Per replica, the first step with certified error ``<= success_tol`` (``None``: not
        within the steps run)."""
        return self.raw.steps_to_success()

    def report(self) -> dict[str, Any]:
        """The JSON object of ``attnsep xor train`` (per-replica values and the figures'
        paths included)."""
        out = self.raw.report()
        if self.figures:
            out["figures"] = list(self.figures)
        return out

    def summary(self) -> dict[str, Scalar]:
        """[`report`][attnsep.results.XorTrainResult.report], flat and without the
        per-replica lists (``loss_final_median``, ``steps_to_success_median``, ...)."""
        return flat(self.raw.report())

    def to_frame(self) -> pd.DataFrame:
        """One row per replica and step: losses, certified error, success, test accuracy and
        ``mass_h{h}_s{a}`` (head ``h``'s weight on support bit ``a``)."""
        return self.raw.to_frame()

    def save(self, path: str | Path) -> Path:
        """Every trajectory, the state after the last step and the config in one ``.npz``
        file (``attnsep.load`` reads it back); the path written."""
        r = self.raw
        arrays = {name: getattr(r, name) for name in TRAJECTORY_ARRAYS}
        arrays = {name: value for name, value in arrays.items() if value is not None}
        meta = {
            "config": dump(r.config),
            "eta": r.eta,
            "seconds": r.seconds,
            "diverged_at": r.diverged_at,
            "device": r.device,
            "figures": list(self.figures),
        }
        scalars = {"eta": r.eta, "seconds": r.seconds, "diverged_at": r.diverged_at}
        arrays.update(saved.older_entries(config=meta["config"], scalars=scalars))
        return saved.write(path, type(self).__name__, meta, arrays)

    @classmethod
    def from_saved(cls, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> XorTrainResult:
        """The result ``save`` wrote (its header ``meta`` and ``arrays``)."""
        raw = XorTrajectories(
            config=config_from(XorTrainConfig, meta["config"]),
            eta=float(meta["eta"]),
            seconds=float(meta["seconds"]),
            diverged_at=meta["diverged_at"],
            device=str(meta["device"]),
            **{name: arrays[name] for name in TRAJECTORY_ARRAYS if name in arrays},
        )
        return cls(raw, tuple(meta.get("figures", ())))

    def plot(self) -> Figure:
        """The losses over steps (median and 10-90% band over replicas), the share of replicas
        certified, and the median attention mass of each head on each support bit."""
        from matplotlib.figure import Figure

        from ..report.xor_train_figures import loss_panels, mass_heatmap

        fig = Figure(figsize=(16.0, 4.0))
        left, middle, right = fig.subplots(1, 3)
        loss_panels(left, middle, self.raw)
        mass_heatmap(right, fig, self.raw.mass)
        fig.tight_layout()
        return fig

    def __repr__(self) -> str:
        c = self.config
        return short(
            type(self).__name__,
            d=c.d,
            m=c.m,
            k=c.k,
            seeds=c.seeds,
            steps_run=self.steps_run,
            success_rate=float(self.success.mean()),
            device=self.raw.device,
        )


# ------------------------------------------------------------ the authors' earlier 4x4 model

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
