"""A7.1 — one population gradient step suffices: success rate over a ``(d, m)`` grid."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, field_validator

from .. import attention
from ..metrics.stats import wilson
from ..one_step import OneStepConfig, run_one_step
from . import plotting
from .base import Device, Experiment, ExperimentConfig, InputLength, Positive, Record, register


class Config(ExperimentConfig):
    d_values: list[InputLength] = Field(default=[64, 256, 1024, 4096], min_length=1)
    m_values: list[Positive] = Field(default=[8, 16, 32, 64], min_length=1)
    seeds: int = Field(default=32, ge=1)
    attention: str = "softmax"
    eta_scale: float = Field(default=16.0, gt=0)
    success_tol: float = Field(default=0.1, gt=0)
    device: Device = "cpu"

    _check_attention = field_validator("attention")(lambda v: attention.get(v) and v)


def split(config: Config) -> list[Config]:
    return [
        config.model_copy(update={"d_values": [d], "m_values": [m]})
        for d in config.d_values
        for m in config.m_values
    ]


def outcome_record(config: OneStepConfig, result) -> Record:
    """The per-point record shared by the one-step experiments."""
    successes, trials = int(result.success.sum()), config.seeds
    low, high = wilson(successes, trials)
    return {
        "d": config.d,
        "m": config.m,
        "seeds": trials,
        "successes": successes,
        "rate": successes / trials,
        "low": low,
        "high": high,
        "specialization_rate": float(result.specialized.mean()),
        "collapse_rate": float(result.collapsed.mean()),
        "loss_after_median": float(sorted(result.loss_after)[trials // 2]),
        "certified_error_median": float(sorted(result.certified_error)[trials // 2]),
        "trainable_params": result.trainable_params,
    }


def run(config: Config) -> list[Record]:
    records = []
    for d in config.d_values:
        for m in config.m_values:
            step = OneStepConfig(
                d=d,
                m=m,
                seeds=config.seeds,
                seed=config.seed,
                attention=config.attention,
                eta_scale=config.eta_scale,
                success_tol=config.success_tol,
                device=config.device,
            )
            records.append(outcome_record(step, run_one_step(step)))
    return records


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    path = out / "one_step_success.png"
    with plotting.figure(path) as (_, (ax,)):
        for d in sorted({r["d"] for r in records}):
            rows = sorted((r for r in records if r["d"] == d), key=lambda r: r["m"])
            plotting.rate_band(ax, [r["m"] for r in rows], rows, label=f"d = {d}")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("embedding width m (trainable parameters = 2m)")
        ax.set_ylabel("success rate after one step")
        ax.set_ylim(-0.02, 1.02)
        ax.axhline(0.9, color="grey", lw=0.8, ls="--")
        ax.legend()
        ax.set_title("One population gradient step (softmax, 95% Wilson bands)")
    return [path]


def verdict(records: list[Record], config: Config) -> dict:
    best = {
        d: max((r for r in records if r["d"] == d), key=lambda r: r["rate"])
        for d in sorted({r["d"] for r in records})
    }
    largest = max(best)
    text = "; ".join(
        f"d={d}: {b['rate']:.2f} at m={b['m']} (collapse {b['collapse_rate']:.2f})"
        for d, b in best.items()
    )
    ok = best[largest]["rate"] >= 0.9 and all(b["rate"] >= 0.75 for b in best.values())
    return {
        "measured": f"best success rate after one step per d: {text}",
        "verdict": "reproduced" if ok else "not reproduced",
        "criterion": "success >= 0.9 at the largest d and >= 0.75 at every d "
        "(small d saturates near 0.8: heads collapse when the initial scores of i*, j* tie)",
    }


EXPERIMENT = register(
    Experiment(
        name="one-step",
        claim="A7.1",
        title="One gradient step suffices",
        paper="A two-head softmax-attention layer learns sparse XOR in a single population "
        "gradient step with high probability (Theorem 2).",
        config_type=Config,
        run=run,
        figure=figure,
        verdict=verdict,
        split=split,
        presets={
            "quick": {"d_values": [64, 256, 1024], "m_values": [8, 16, 32], "seeds": 32},
            "full": {
                "d_values": [2**6, 2**8, 2**10, 2**12, 2**14, 2**16],
                "m_values": [4, 8, 16, 32, 64, 128],
                "seeds": 256,
                "device": "auto",
            },
        },
    )
)
