"""The result of training the one-layer selector on q-sparse token selection (SPEC B3, B5.3)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ..configs import EVAL_SIZE
from ..exact.selection_bounds import uniform_attention_loss
from ..metrics.ensemble import summary as value_summary
from ..metrics.selection import LengthEval, cos_to_ground_truth
from ..positional_encodings import FixedPE, encodings_for
from ..train.selection import SelectionTrainConfig, SelectionTrainResult
from . import saved
from .common import Scalar, band, config_from, dump, short

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure


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


def _columns(rows: tuple[LengthEval, ...], name: str) -> np.ndarray | None:
    """``E x lengths``: the per-replica ``name`` of every length, or ``None`` if a length has
    none (``exact`` with a nonzero content block)."""
    values = [getattr(row, name) for row in rows]
    if any(value is None for value in values):
        return None
    return torch.stack(values, dim=1).numpy()


@dataclass(frozen=True)
class SelectorResult:
    """A trained selector for every replica and its losses at each evaluation length
    (SPEC B3, B5.3). ``raw`` holds ``W`` (``E x D x D``), the encodings and the training curve;
    ``evals`` one ``attnsep.metrics.selection.LengthEval`` per length, the training
    length first."""

    raw: SelectionTrainResult
    evals: tuple[LengthEval, ...]
    seconds: float
    eval_size: int = EVAL_SIZE

    @property
    def config(self) -> SelectionTrainConfig:
        return self.raw.config

    @property
    def exact_over_tokens(self) -> bool:
        """Whether every evaluation has the exact-over-tokens loss (content block of ``W`` 0)."""
        return all(row.exact is not None for row in self.evals)

    @property
    def device(self) -> str:
        """Where it trained (the selector trains on the CPU)."""
        return str(self.raw.W.device)

    def report(self) -> dict[str, Any]:
        """The JSON object of ``attnsep select train``: the config, the training loss and
        ``cos(W, W*)`` per replica, and per evaluation length ``length_record``."""
        c = self.config
        return {
            **c.model_dump(),
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

    def save(self, path: str | Path) -> Path:
        """``W`` (``E x D x D``), ``P`` for a fixed PE, the training curve (``train_losses``,
        ``steps x E``), the losses per replica and evaluation length (``eval_loss``,
        ``eval_stderr``, ``eval_exact``, ``eval_exact_stderr``: ``E x lengths``, lengths in
        ``eval_lengths``) and the config in one ``.npz`` file; the path written."""
        rows = self.evals
        arrays: dict[str, Any] = {
            "W": self.raw.W.numpy(),
            "train_losses": self.raw.losses.numpy(),
            "eval_lengths": np.array([row.length for row in rows], dtype=np.int64),
        }
        for name in ("loss", "stderr", "exact", "exact_stderr"):
            columns = _columns(rows, name)
            if columns is not None:
                arrays[f"eval_{name}"] = columns
        if isinstance(self.raw.encodings, FixedPE):
            arrays["P"] = self.raw.encodings.table.numpy()
        c = self.config
        meta = {"config": dump(c), "seconds": self.seconds, "eval_size": self.eval_size}
        sizes = {"seed": c.seed, "d": c.d, "T": c.T, "q": c.q, "pe_dim": c.pe_dim}
        older = saved.older_entries(pe=c.pe, pe_kind=c.pe_kind, config=meta["config"], **sizes)
        arrays.update(older, eval_size=np.array(self.eval_size))
        return saved.write(path, type(self).__name__, meta, arrays)

    @classmethod
    def from_saved(cls, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> SelectorResult:
        """The result ``save`` wrote (its header ``meta`` and ``arrays``)."""
        config = config_from(SelectionTrainConfig, meta["config"])
        encodings = FixedPE(torch.from_numpy(arrays["P"])) if "P" in arrays else None
        raw = SelectionTrainResult(
            config=config,
            W=torch.from_numpy(arrays["W"]),
            encodings=encodings or encodings_for(config),
            losses=torch.from_numpy(arrays["train_losses"]),
        )

        def column(name: str, i: int) -> torch.Tensor | None:
            values = arrays.get(f"eval_{name}")
            return None if values is None else torch.from_numpy(values[:, i].copy())

        evals = []
        for i, length in enumerate(arrays["eval_lengths"].tolist()):
            loss, stderr = column("loss", i), column("stderr", i)
            assert loss is not None and stderr is not None  # every file has them
            exact, exact_stderr = column("exact", i), column("exact_stderr", i)
            evals.append(LengthEval(length, config.d, loss, stderr, exact, exact_stderr))
        return cls(raw, tuple(evals), float(meta["seconds"]), int(meta["eval_size"]))

    @property
    def W(self) -> np.ndarray:
        """The trained ``W``, ``E x (d + m_p) x (d + m_p)``."""
        return self.raw.W.numpy()

    def curve(self) -> pd.DataFrame:
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

    def summary(self) -> dict[str, Scalar]:
        """Sizes, the training loss and ``cos(W, W*)`` (replica means), and per evaluation
        length ``L`` the mean loss ``loss_T{L}`` beside uniform attention's ``uniform_T{L}``
        (losses summed over the ``d`` coordinates, SPEC B1)."""
        c = self.config
        out: dict[str, Scalar] = {
            "d": c.d,
            "T": c.T,
            "q": c.q,
            "pe": c.pe,
            "m_p": c.pe_dim,
            "seeds": c.seeds,
            "steps": c.steps,
            "train_loss": float(self.raw.train_loss.mean()),
            "cos_to_ground_truth": float(cos_to_ground_truth(self.raw.W, c.d).mean()),
        }
        for row in self.evals:
            out[f"loss_T{row.length}"] = float(row.loss.mean())
            out[f"uniform_T{row.length}"] = float(uniform_attention_loss(row.length, c.q, c.d))
        return {**out, "seconds": self.seconds, "device": self.device}

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
            for e in range(c.seeds):
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

    def plot(self) -> Figure:
        """The training loss over steps (median and 10-90% band over replicas), and the loss at
        each evaluation length (replica mean, bars ± 2 standard errors) beside uniform
        attention's."""
        from matplotlib.figure import Figure

        c = self.config
        fig = Figure(figsize=(11.0, 4.0))
        left, right = fig.subplots(1, 2)
        band(left, self.raw.losses.numpy().T, "training loss")
        left.set_xlabel("step")
        left.set_ylabel("loss (summed over the d coordinates)")
        left.legend(fontsize=7)
        lengths = [row.length for row in self.evals]
        order = np.argsort(lengths)
        means = np.array([float(row.loss.mean()) for row in self.evals])[order]
        errors = np.array([2 * _replica_mean_stderr(row.stderr) for row in self.evals])[order]
        xs = np.array(lengths)[order]
        right.errorbar(xs, means, yerr=errors, marker="o", capsize=3, label="selector")
        uniform = [float(uniform_attention_loss(int(T), c.q, c.d)) for T in xs]
        right.plot(xs, uniform, color="grey", ls="--", label="uniform attention")
        right.axvline(c.T, color="grey", lw=0.6, ls=":")
        right.set_xscale("log", base=2)
        right.set_xlabel("evaluation length T'")
        right.set_ylabel("loss")
        right.legend(fontsize=7)
        fig.suptitle(
            f"Selector: d={c.d}, T={c.T}, q={c.q}, {c.pe} PE m_p={c.pe_dim}, {c.seeds} replicas",
            fontsize=10,
        )
        fig.tight_layout()
        return fig

    def __repr__(self) -> str:
        c = self.config
        return short(
            type(self).__name__,
            d=c.d,
            T=c.T,
            q=c.q,
            pe=c.pe,
            m_p=c.pe_dim,
            seeds=c.seeds,
            train_loss=float(self.raw.train_loss.mean()),
            lengths=len(self.evals),
        )
