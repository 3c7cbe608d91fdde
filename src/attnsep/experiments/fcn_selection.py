"""B5.4 — FCNs cannot: MLP loss vs first-layer width against the exact floor, and the transformer.

Any FCN of first-layer width ``w <= Td`` has loss at least ``(Td - w)(T - q) / (q T (T - 1))``
(SPEC B4). Trained MLPs on ``[vec X ; 1_y]`` are drawn against that floor, beside the
stochastic-PE selector, whose width ``d + m_p`` is far below ``Td``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from ..exact.selection import fcn_loss_floor, uniform_attention_loss
from ..train.fcn import SelectionFCNConfig, train_selection
from ..train.selection import POSITION_LR_PER_DIM, SelectionTrainConfig
from . import plotting
from .base import Experiment, Positive, Record, SubsetConfig, register
from .select_common import train_and_evaluate


class Config(SubsetConfig):
    d: int = Field(default=4, ge=1)
    T: int = Field(default=8, ge=2)
    q: int = Field(default=2, ge=1)
    widths: list[Positive] = Field(default=[4, 8, 16, 24, 31, 64])
    fcn_steps: int = Field(default=3000, ge=1)
    replicas: int = Field(default=2, ge=1)
    pe_dim: int = Field(default=16, ge=1)
    selector_steps: int = Field(default=1500, ge=1)
    kinds: list[Literal["fcn", "transformer"]] = Field(default=["fcn", "transformer"], min_length=1)


def split(config: Config) -> list[Config]:
    jobs = [config.model_copy(update={"kinds": ["fcn"], "widths": [w]}) for w in config.widths]
    return jobs + [config.model_copy(update={"kinds": ["transformer"], "widths": []})]


def run(config: Config) -> list[Record]:
    records = []
    if "fcn" in config.kinds:
        for w in config.widths:
            result = train_selection(
                SelectionFCNConfig(
                    d=config.d,
                    T=config.T,
                    q=config.q,
                    width=w,
                    replicas=config.replicas,
                    steps=config.fcn_steps,
                    seed=config.seed,
                )
            )
            floor = float(fcn_loss_floor(config.T, config.q, config.d, w))
            for e in range(config.replicas):
                records.append(
                    {
                        "model": "fcn",
                        "width": w,
                        "replica": e,
                        "floor": floor,
                        "loss": float(result.loss[e]),
                        "stderr": float(result.stderr[e]),
                    }
                )
    if "transformer" in config.kinds:
        train_config = SelectionTrainConfig(
            d=config.d,
            T=config.T,
            q=config.q,
            pe="stochastic",
            pe_dim=config.pe_dim,
            steps=config.selector_steps,
            lr=POSITION_LR_PER_DIM * config.pe_dim,
            seed=config.seed,
        )
        out = train_and_evaluate(train_config, [config.T], eval_size=1024)
        width = config.d + config.pe_dim
        row = out["eval"][0]
        records.append(
            {
                "model": "transformer",
                "width": width,
                "replica": 0,
                "floor": float(fcn_loss_floor(config.T, config.q, config.d, width)),
                "loss": row["loss"],
                "stderr": row["stderr"],
                "cos": out["cos"],
            }
        )
    return records


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    path = out / "fcn_selection.png"
    Td = config.T * config.d
    with plotting.figure(path, width=6.5, height=4.5) as (_, (ax,)):
        widths = list(range(1, max(max(config.widths, default=Td), Td) + 1))
        ax.plot(
            widths,
            [float(fcn_loss_floor(config.T, config.q, config.d, w)) for w in widths],
            color="black",
            label="exact FCN floor (SPEC B4)",
        )
        fcn = [r for r in records if r["model"] == "fcn"]
        ax.errorbar(
            [r["width"] for r in fcn],
            [r["loss"] for r in fcn],
            yerr=[2 * r["stderr"] for r in fcn],
            fmt="o",
            capsize=3,
            label="trained MLPs",
        )
        for r in (r for r in records if r["model"] == "transformer"):
            ax.errorbar(
                [r["width"]],
                [r["loss"]],
                yerr=[2 * r["stderr"]],
                fmt="*",
                ms=14,
                color="crimson",
                label=f"stochastic-PE transformer (width d + m_p = {r['width']})",
            )
        ax.axhline(
            float(uniform_attention_loss(config.T, config.q, config.d)),
            ls="--",
            color="grey",
            label="uniform attention",
        )
        ax.axvline(Td, ls=":", color="grey")
        ax.set_xlabel(f"first-layer width w (Td = {Td} dotted)")
        ax.set_ylabel("loss E|f - STS|^2 (±2 s.e.)")
        ax.set_title(f"d={config.d}, T={config.T}, q={config.q}")
        ax.legend(fontsize=8)
    return [path]


def verdict(records: list[Record], config: Config) -> dict:
    fcn = [r for r in records if r["model"] == "fcn" and r["width"] < config.T * config.d]
    below = [r for r in fcn if r["loss"] + 3 * r["stderr"] < r["floor"]]
    transformer = next((r for r in records if r["model"] == "transformer"), None)
    beats = (
        transformer is not None
        and transformer["loss"] + 3 * transformer["stderr"] < transformer["floor"]
    )
    parts = [
        f"{len(fcn)} trained MLPs below width Td={config.T * config.d}: "
        f"{len(below)} below the floor (by 3 s.e.)"
    ]
    if transformer is not None:
        parts.append(
            f"transformer at width {transformer['width']}: loss {transformer['loss']:.3f} ± "
            f"{transformer['stderr']:.3f} vs the FCN floor {transformer['floor']:.3f} at that width"
        )
    ok = not below and bool(fcn) and beats
    return {
        "measured": "; ".join(parts),
        "verdict": "reproduced" if ok else "not reproduced",
        "criterion": "no trained MLP of width < Td goes below the exact floor (3 s.e.), while the "
        "transformer, at a width far below Td, does",
    }


EXPERIMENT = register(
    Experiment(
        name="fcn-selection",
        claim="B5.4",
        title="Fully-connected nets below width Td cannot",
        paper="Any FCN with first-layer width <= Td - 1 has loss >= (T - q)/(qT(T - 1)); in "
        "general (Td - w)(T - q)/(qT(T - 1)), while a transformer of width "
        "Theta(d + q log T) learns the task.",
        config_type=Config,
        run=run,
        figure=figure,
        verdict=verdict,
        split=split,
        presets={
            "quick": {},
            "full": {
                "d": 10,
                "T": 20,
                "q": 3,
                "widths": [25, 50, 100, 150, 199, 400],
                "replicas": 4,
                "pe_dim": 64,
                "selector_steps": 3000,
            },
        },
    )
)
