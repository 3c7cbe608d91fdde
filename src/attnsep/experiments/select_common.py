"""Shared pieces of the token-selection experiments (SPEC B5): one training run, its evaluation,
the ``W = αI`` family's yardstick beside it, and means over seeds with ``± 2 s.e.``."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field

from ..configs import (
    EVAL_SIZE,
    POSITION_LR_PER_DIM,
    DType,
    PEMode,
    SelectionTrainConfig,
    default,
    inherit,
)
from ..metrics import stats
from .base import Seed, SubsetConfig


def train_and_evaluate(
    config: SelectionTrainConfig,
    lengths: list[int],
    eval_size: int = EVAL_SIZE,
    keep_W: bool = False,
) -> dict[str, Any]:
    """Train, then evaluate at every length; plain numbers (replica 0 of a 1-replica run), and
    with ``keep_W`` the trained ``W`` (``"W"``, a ``D x D`` array)."""
    from ..exact.selection_bounds import uniform_attention_loss
    from ..metrics.selection import cos_to_ground_truth, evaluate_lengths
    from ..tasks.selection import TokenSelection
    from ..train.selection import train

    result = train(config)
    rows = evaluate_lengths(
        result.W, TokenSelection.of(config), result.encodings, lengths, config.seed, eval_size
    )
    return {
        **({"W": result.W[0].numpy()} if keep_W else {}),
        "train_loss": float(result.train_loss[0]),
        "cos": float(cos_to_ground_truth(result.W, config.d)[0]),
        "losses": [float(v) for v in result.losses[:, 0]],
        "eval": [
            {
                "T": r.length,
                "loss": float(r.loss[0]),
                "stderr": float(r.stderr[0]),
                "exact": None if r.exact is None else float(r.exact[0]),
                "exact_stderr": None if r.exact_stderr is None else float(r.exact_stderr[0]),
                "uniform": float(uniform_attention_loss(r.length, config.q, config.d)),
            }
            for r in rows
        ],
    }


SE_WIDTH = 2.0
"""Intervals of a mean over seeds are ``mean ± 2 s.e.`` (SPEC Part D; the figures' bars)."""


def seed_mean(values: list[float]) -> dict[str, float]:
    """Mean over seeds, its standard error and the interval ``mean ± 2 s.e.`` (``stats``)."""
    mean, se = stats.mean_se(values)
    return {"mean": mean, "se": se, "low": mean - SE_WIDTH * se, "high": mean + SE_WIDTH * se}


def evaluation_loss(row: dict[str, Any]) -> tuple[float, float, str]:
    """``(loss, s.e., path)`` of one evaluation row of :func:`train_and_evaluate`: exact over
    the tokens when the logits ignore them (position block trained), else the sampled loss."""
    if row["exact"] is not None:
        return row["exact"], row["exact_stderr"], "exact"
    return row["loss"], row["stderr"], "sampled"


def family_record(T: int, q: int, m_p: int, d: int, samples: int, seed: int) -> dict[str, Any]:
    """The ``W = αI`` family's best loss at ``(T, q, m_p)`` (``exact/family.py``), one draw."""
    from ..exact.family import best_family_loss

    best = best_family_loss(T, q, m_p, d, samples=samples, seed=seed)
    return {
        "T": T,
        "pe_dim": m_p,
        "seed": seed,
        "alpha": best.alpha,
        "loss": best.loss,
        "stderr": best.stderr,
        "uniform": best.uniform,
    }


class ScaledTraining(SubsetConfig):
    """The task and a training run whose rate and batch scale with the PE width ``m_p``.

    ``lr = lr_per_dim · r`` keeps the pace of ``W = αI`` (``POSITION_LR_PER_DIM``), where ``r``
    is the rank the encodings span: ``m_p`` for stochastic PE, ``min(m_p, T)`` for a fixed table
    (its ``T`` training rows; the gradient along their projector is ``dL/dα / r``). The batch
    ``batch_per_dim · m_p`` keeps the off-diagonal noise of ``W`` relative to ``αI`` fixed,
    which grows like ``lr² · steps · m_p / batch`` per unit of ``lr · steps``. Default (*choice*,
    by cost): the position block by gradient descent on the loss exact over the tokens with
    fresh ``(y, PE)`` draws per step (SPEC B3); the paper's full ``W`` by SGD on fresh batches
    is ``trainable="full"``, ``objective="sgd"``. Calibration and cost: ``select_convergence``.
    """

    d: int = inherit(SelectionTrainConfig, "d")
    T: int = Field(default=default(SelectionTrainConfig, "T"), ge=2)
    q: int = inherit(SelectionTrainConfig, "q")
    seeds: list[Seed] = Field(default=[0, 1, 2, 3], min_length=1)
    trainable: Literal["position", "full"] = "position"
    objective: Literal["population", "sgd"] = "population"
    steps: int = Field(default=400, ge=1)
    batch_per_dim: float = Field(default=4.0, gt=0)
    lr_per_dim: float = Field(default=3 * POSITION_LR_PER_DIM, gt=0)

    @property
    def replica_seeds(self) -> list[int]:
        """The seed each of ``seeds`` trains and draws with under the master seed ``seed``: the
        replica's own number on master seed 0 (the published runs), else the stream
        ``(seed, "replica", s)``, so that a run on another master seed draws new data (SPEC
        Part E: a confirmatory run is a fresh one)."""
        from ..core.rng import stream_seed  # torch: not for the command line's start-up

        if self.seed == 0:
            return list(self.seeds)
        return [stream_seed(self.seed, "replica", s) for s in self.seeds]

    def training(
        self,
        m_p: int,
        seed: int,
        pe: PEMode = "stochastic",
        positions: int | None = None,
        products: DType = "float64",
        steps: int | None = None,
    ) -> SelectionTrainConfig:
        """The :class:`SelectionTrainConfig` of one run at width ``m_p`` (``positions``: rows of
        a fixed PE table; ``products``: the precision of a step's two products; ``steps``: the
        run's, default ``self.steps``)."""
        return SelectionTrainConfig(
            d=self.d,
            T=self.T,
            q=self.q,
            pe=pe,
            pe_dim=m_p,
            fixed_positions=positions,
            trainable=self.trainable,
            objective=self.objective,
            steps=self.steps if steps is None else steps,
            batch=max(1, round(self.batch_per_dim * m_p)),
            lr=self.lr_per_dim * (m_p if pe == "stochastic" else min(m_p, self.T)),
            seed=seed,
            products=products,
        )


def family_loss_at(
    alpha: float, T: int, q: int, m_p: int, d: int, samples: int, seed: int
) -> tuple[float, float]:
    """Mean loss and s.e. of ``W = αI`` at a given ``α`` and length ``T`` (one fresh draw of the
    family's products, stream ``(seed, "family-at", T, q, m_p)``)."""
    from ..core.rng import stream_seed
    from ..exact.family import family_losses, family_products

    rng = np.random.default_rng(stream_seed(seed, "family-at", T, q, m_p))
    losses = family_losses(alpha, *family_products(T, q, m_p, samples, rng), d)
    return stats.mean_se(losses.tolist())


def relative_spread(records: list[dict[str, Any]], key: str) -> float:
    """The seeds' relative standard deviation of ``key``, pooled (root mean square) over the
    widths ``pe_dim``; 0 where a width has a single seed (the error rates' noise, SPEC Part E)."""
    spreads = []
    for m in {r["pe_dim"] for r in records}:
        values = np.array([r[key] for r in records if r["pe_dim"] == m])
        if len(values) >= 2:
            spreads.append(np.std(values, ddof=1) / np.mean(values))
    return float(np.sqrt(np.mean(np.square(spreads)))) if spreads else 0.0


def mean_estimate(name: str, summary: dict[str, float], scale: float = 1.0) -> dict:
    """A :func:`seed_mean` summary, divided by ``scale``, as a ``stats.estimate``."""
    return stats.estimate(
        name, summary["mean"] / scale, summary["low"] / scale, summary["high"] / scale
    )


def fmt_mean(summary: dict[str, float], scale: float = 1.0) -> str:
    """``mean [low, high]`` of a :func:`seed_mean` summary divided by ``scale``."""
    return stats.fmt_interval(
        summary["mean"] / scale, summary["low"] / scale, summary["high"] / scale
    )


def mean_bars(ax: Any, xs: list[int], summaries: list[dict[str, float]], **style: Any) -> None:
    """Means of :func:`seed_mean` summaries with their ``± 2 s.e.`` bars on ``ax``."""
    ax.errorbar(
        xs,
        [s["mean"] for s in summaries],
        yerr=[
            [s["mean"] - s["low"] for s in summaries],
            [s["high"] - s["mean"] for s in summaries],
        ],
        capsize=3,
        **style,
    )
