"""The result of the FCN baselines: fully-connected ReLU nets on sparse XOR (SPEC A7.6) and on
token selection (SPEC B4, B5.4)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ..configs import SelectionFCNConfig, XorFCNConfig
from ..exact.selection_bounds import fcn_loss_floor
from ..metrics.ensemble import summary as value_summary
from ..metrics.stats import wilson
from ..models.mlp import MLP, count
from ..train.fcn import SelectionFCNResult, XorFCNResult
from . import saved
from .common import Scalar, band, config_from, dump, flat, short

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure


def fcn_xor_report(cfg: XorFCNConfig, result: XorFCNResult) -> dict[str, Any]:
    """The JSON object of ``attnsep fcn xor``; ``final_loss`` is the objective on the test set."""
    successes = int(result.success.sum())
    low, high = wilson(successes, cfg.seeds)
    return {
        "d": cfg.d,
        "width": cfg.width,
        "depth": cfg.depth,
        "seeds": cfg.seeds,
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
        "success_rate": successes / cfg.seeds,
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
        "seeds": cfg.seeds,
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


PER_REPLICA = {
    "xor": ("support", "test_error", "test_loss", "steps_run"),
    "select": ("loss", "stderr"),
}
"""The per-replica tensors of each task's raw result, saved as they are."""


@dataclass(frozen=True)
class FCNResult:
    """An ensemble of fully-connected ReLU nets on sparse XOR (``task="xor"``, SPEC A7.6) or
    on token selection (``task="select"``, SPEC B4, B5.4); ``raw`` holds the trained nets."""

    task: str
    raw: XorFCNResult | SelectionFCNResult

    @property
    def config(self) -> XorFCNConfig | SelectionFCNConfig:
        return self.raw.config

    def report(self) -> dict[str, Any]:
        """The JSON object of ``attnsep fcn xor`` / ``attnsep fcn select`` (per-replica values
        included)."""
        if isinstance(self.raw, XorFCNResult):  # task "xor"
            return fcn_xor_report(self.raw.config, self.raw)
        return fcn_selection_report(self.raw.config, self.raw)

    def summary(self) -> dict[str, Scalar]:
        """[`report`][attnsep.results.FCNResult.report], flat and without the per-replica lists
        (``test_error_mean``, ``success_low``, ...), and ``device``: where it trained."""
        out = self.report()
        out.pop("support", None)
        if "success_interval" in out:
            out["success_low"], out["success_high"] = out.pop("success_interval")
        return {**flat(out), "device": self.raw.device}

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

    def save(self, path: str | Path) -> Path:
        """The nets (``weight_{l}``, ``bias_{l}``: layer ``l``, replica axis first), the
        training loss per step (``losses``, ``steps x E``), the per-replica results and the
        config in one ``.npz`` file (on the CPU); the path written."""
        r = self.raw
        arrays: dict[str, Any] = {"losses": r.losses}
        for layer, (w, b) in enumerate(zip(r.model.weights, r.model.biases, strict=True)):
            arrays[f"weight_{layer}"], arrays[f"bias_{layer}"] = w, b
        arrays.update({name: getattr(r, name) for name in PER_REPLICA[self.task]})
        numpy = {name: value.detach().cpu().numpy() for name, value in arrays.items()}
        meta = {"task": self.task, "config": dump(r.config), "device": r.device}
        return saved.write(path, type(self).__name__, meta, numpy)

    @classmethod
    def from_saved(cls, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> FCNResult:
        """The result ``save`` wrote (its header ``meta`` and ``arrays``); the nets on the
        CPU."""
        task = str(meta["task"])
        tensors = {name: torch.from_numpy(value) for name, value in arrays.items()}
        layers = sum(name.startswith("weight_") for name in tensors)
        model = MLP(
            [tensors[f"weight_{layer}"] for layer in range(layers)],
            [tensors[f"bias_{layer}"] for layer in range(layers)],
        )
        device, losses = str(meta["device"]), tensors["losses"]
        raw: XorFCNResult | SelectionFCNResult
        if task == "xor":
            support, test_error, test_loss, steps_run = (tensors[n] for n in PER_REPLICA[task])
            config = config_from(XorFCNConfig, meta["config"])
            raw = XorFCNResult(
                config, support, model, test_error, test_loss, steps_run, losses, device
            )
        else:
            loss, stderr = (tensors[name] for name in PER_REPLICA[task])
            selection = config_from(SelectionFCNConfig, meta["config"])
            raw = SelectionFCNResult(selection, model, loss, stderr, losses, device)
        return cls(task, raw)

    def plot(self) -> Figure:
        """The training loss over steps (median and 10-90% band over the replicas still
        training), and per replica the test sign error against ``success_tol`` (XOR) or the
        evaluation loss (± 2 standard errors) against the FCN's floor (selection)."""
        from matplotlib.figure import Figure

        r = self.raw
        fig = Figure(figsize=(11.0, 4.0))
        left, right = fig.subplots(1, 2)
        band(left, r.losses.detach().cpu().numpy().T, "training loss")
        left.set_xlabel("step")
        left.set_ylabel("training loss")
        left.legend(fontsize=7)
        if isinstance(r, XorFCNResult):  # task "xor"
            c = r.config
            errors = r.test_error.numpy()
            replicas = np.arange(errors.shape[0])
            colors = np.where(r.success.numpy(), "tab:green", "tab:red")
            right.bar(replicas, errors, color=colors)
            right.axhline(c.success_tol, color="grey", ls="--", lw=0.8, label="success tolerance")
            right.set_ylabel("test sign error")
            title = f"FCN on sparse XOR: d={c.d}, width={c.width}, {c.optimizer}"
        else:
            s = r.config
            losses = r.loss.numpy()
            replicas = np.arange(losses.shape[0])
            right.errorbar(replicas, losses, yerr=2 * r.stderr.numpy(), fmt="o", capsize=3)
            floor = float(fcn_loss_floor(s.T, s.q, s.d, s.width))
            right.axhline(floor, color="grey", ls="--", lw=0.8, label="FCN loss floor (B4)")
            right.set_ylabel("evaluation loss")
            title = f"FCN on token selection: d={s.d}, T={s.T}, q={s.q}, width={s.width}"
        right.set_xlabel("replica")
        right.legend(fontsize=7)
        fig.suptitle(title, fontsize=10)
        fig.tight_layout()
        return fig

    def __repr__(self) -> str:
        c, r = self.config, self.raw
        if isinstance(r, XorFCNResult):  # task "xor"
            headline = {"success_rate": float(r.success.double().mean())}
        else:
            headline = {"loss": float(r.loss.mean())}
        return short(
            type(self).__name__,
            task=self.task,
            d=c.d,
            width=c.width,
            seeds=c.seeds,
            **headline,
            device=r.device,
        )
