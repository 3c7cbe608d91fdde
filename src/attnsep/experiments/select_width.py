"""B5.2 — width: final loss vs the PE width ``m_p`` for several ``T``.

The needed ``m_p`` should grow like ``q log T``.

Trains the position block only, by gradient descent on the loss that is exact over the
Gaussian tokens (SPEC B3), and evaluates it exactly over the tokens at the training length.
"""

from __future__ import annotations

import math
from pathlib import Path

from pydantic import Field

from ..metrics.stats import POWER
from ..train.selection import POSITION_LR_PER_DIM, SelectionTrainConfig
from . import plotting
from .base import (
    Experiment,
    InputLength,
    Positive,
    Record,
    SubsetConfig,
    register,
)
from .select_common import train_and_evaluate


class Config(SubsetConfig):
    d: int = Field(default=10, ge=1)
    q: int = Field(default=3, ge=1)
    T_values: list[InputLength] = Field(default=[10, 20, 40, 80], min_length=1)
    pe_dims: list[Positive] = Field(default=[8, 16, 32, 64, 128], min_length=1)
    steps: int = Field(default=300, ge=1)
    batch: int = Field(default=128, ge=1)
    lr_per_dim: float = Field(default=POSITION_LR_PER_DIM, gt=0)  # lr = lr_per_dim * m_p
    target: float = Field(default=0.2, gt=0, lt=1)  # needed width: loss <= target x uniform loss


def split(config: Config) -> list[Config]:
    return [
        config.model_copy(update={"T_values": [T], "pe_dims": [m]})
        for T in config.T_values
        for m in config.pe_dims
    ]


def run(config: Config) -> list[Record]:
    records = []
    for T in config.T_values:
        for m in config.pe_dims:
            train_config = SelectionTrainConfig(
                d=config.d,
                T=T,
                q=config.q,
                pe="stochastic",
                pe_dim=m,
                trainable="position",
                objective="population",
                steps=config.steps,
                batch=config.batch,
                lr=config.lr_per_dim * m,
                seed=config.seed,
            )
            out = train_and_evaluate(train_config, [T])
            row = out["eval"][0]
            records.append(
                {
                    "T": T,
                    "pe_dim": m,
                    "loss": row["exact"],
                    "stderr": row["exact_stderr"],
                    "uniform": row["uniform"],
                    "ratio": row["exact"] / row["uniform"],
                    "cos": out["cos"],
                }
            )
    return records


def needed_widths(records: list[Record], target: float) -> dict[int, int | None]:
    """Per ``T``: the smallest ``m_p`` on the grid from which the loss ratio stays ``<= target``."""
    out = {}
    for T in sorted({r["T"] for r in records}):
        rows = sorted((r for r in records if r["T"] == T), key=lambda r: r["pe_dim"])
        ok = [i for i in range(len(rows)) if all(r["ratio"] <= target for r in rows[i:])]
        out[T] = rows[ok[0]]["pe_dim"] if ok else None
    return out


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    path = out / "select_width.png"
    needed = needed_widths(records, config.target)
    with plotting.figure(path, ncols=2) as (_, (left, right)):
        for T in sorted(needed):
            rows = sorted((r for r in records if r["T"] == T), key=lambda r: r["pe_dim"])
            left.plot(
                [r["pe_dim"] for r in rows],
                [r["ratio"] for r in rows],
                marker="o",
                label=f"T = {T}",
            )
        left.axhline(config.target, color="grey", ls="--", lw=0.8)
        left.set_xscale("log", base=2)
        left.set_yscale("log")
        left.set_xlabel("PE width m_p")
        left.set_ylabel("loss / uniform-attention loss (exact over tokens)")
        left.legend()
        found = [(T, m) for T, m in needed.items() if m is not None]
        if found:
            Ts, ms = zip(*found, strict=True)
            right.plot([config.q * math.log(T) for T in Ts], ms, "o-")
        right.set_xlabel("q ln T")
        right.set_ylabel(f"needed m_p (ratio <= {config.target:g})")
        right.set_yscale("log", base=2)
    return [path]


def verdict(records: list[Record], config: Config) -> dict:
    needed = needed_widths(records, config.target)
    found = {T: m for T, m in needed.items() if m is not None}
    table = ", ".join(f"T={T}: m_p*={m}" for T, m in needed.items())
    slope = POWER.fit(list(found), list(found.values()))[1] if len(found) >= 2 else None
    grows = len(found) >= 2 and list(found.values())[-1] > list(found.values())[0]
    ok = len(found) == len(needed) and grows and slope is not None and slope < 1
    return {
        "measured": f"{table}; log-log slope of m_p* vs T = "
        + ("n/a" if slope is None else f"{slope:.2f}"),
        "verdict": "reproduced" if ok else "not reproduced",
        "criterion": f"the needed width (loss <= {config.target:g} x uniform) exists at every "
        "T, grows with T, "
        "and grows sublinearly in T (log-log slope < 1), as q log T does",
    }


EXPERIMENT = register(
    Experiment(
        name="select-width",
        claim="B5.2",
        title="Width Θ(d + q log T) suffices",
        paper="With stochastic PE, transformer width Theta(d + q log T) suffices for gradient "
        "descent "
        "to learn q-sparse token selection.",
        config_type=Config,
        run=run,
        figure=figure,
        verdict=verdict,
        split=split,
        presets={
            "quick": {},
            "full": {
                "T_values": [10, 20, 40, 80, 160, 320],
                "pe_dims": [8, 16, 32, 64, 128, 256, 512],
                "steps": 1000,
                "batch": 256,
            },
        },
    )
)
