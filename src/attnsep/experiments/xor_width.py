"""A7.2 — polylog parameters: the smallest width ``m*(d)`` whose one-step success hits a target."""

from __future__ import annotations

import math
from pathlib import Path

from pydantic import Field

from ..metrics.stats import POLYLOG, POWER
from ..one_step import OneStepConfig, run_one_step
from ..search import smallest_passing
from . import plotting
from .base import Device, Experiment, ExperimentConfig, InputLength, Record, register


class Config(ExperimentConfig):
    d_values: list[InputLength] = Field(default=[2**6, 2**8, 2**10, 2**12, 2**14], min_length=1)
    seeds: int = Field(default=32, ge=1)
    target: float = Field(default=0.75, gt=0, le=1)
    m_start: int = Field(default=2, ge=1)
    m_limit: int = Field(default=256, ge=1)
    device: Device = "cpu"


def split(config: Config) -> list[Config]:
    return [config.model_copy(update={"d_values": [d]}) for d in config.d_values]


def run(config: Config) -> list[Record]:
    records = []
    for d in config.d_values:

        def evaluate(m: int, d: int = d):
            step = OneStepConfig(
                d=d, m=m, seeds=config.seeds, seed=config.seed, device=config.device
            )
            return run_one_step(step).success

        m_star, probes = smallest_passing(evaluate, config.target, config.m_start, config.m_limit)
        records.append(
            {
                "d": d,
                "m_star": m_star,
                "params": None if m_star is None else 2 * m_star,
                "target": config.target,
                "probes": [p.as_record() for p in probes],
            }
        )
    return records


def fits(records: list[Record]) -> dict:
    """Log-log slope of ``m*`` against ``d`` and the power ``p`` in ``m* ~ a (ln d)^p``."""
    found = [r for r in records if r["m_star"] is not None]
    if len(found) < 2:
        return {"loglog_slope": None, "log_power": None, "points": len(found)}
    ds, ms = [r["d"] for r in found], [r["m_star"] for r in found]
    return {
        "loglog_slope": POWER.fit(ds, ms)[1],
        "log_power": POLYLOG.fit(ds, ms)[1],
        "points": len(found),
    }


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    path = out / "polylog_width.png"
    found = sorted((r for r in records if r["m_star"] is not None), key=lambda r: r["d"])
    fit = fits(records)
    with plotting.figure(path, ncols=2) as (_, (left, right)):
        ds, ms = [r["d"] for r in found], [r["m_star"] for r in found]
        left.plot(ds, ms, "o-", label="measured m*(d)")
        if found:
            left.plot(ds, [ms[0] * d / ds[0] for d in ds], ":", color="grey", label="linear in d")
        left.set_xscale("log", base=2)
        left.set_yscale("log", base=2)
        left.set_xlabel("d")
        left.set_ylabel(f"m* (success >= {config.target:g})")
        left.legend()
        slope = fit["loglog_slope"]
        left.set_title("log-log slope " + ("n/a" if slope is None else f"{slope:.2f}"))
        right.plot([math.log(d) for d in ds], ms, "o-")
        right.set_xscale("log")
        right.set_yscale("log")
        right.set_xlabel("ln d")
        right.set_ylabel("m*")
        power = fit["log_power"]
        right.set_title("m* ~ (ln d)^p, p = " + ("n/a" if power is None else f"{power:.2f}"))
    return [path]


def verdict(records: list[Record], config: Config) -> dict:
    fit = fits(records)
    table = ", ".join(
        f"d={r['d']}: m*={r['m_star']}" for r in sorted(records, key=lambda r: r["d"])
    )
    ok = (
        fit["loglog_slope"] is not None
        and fit["loglog_slope"] <= 0.5
        and fit["points"] == len(records)
    )
    slope = "n/a" if fit["loglog_slope"] is None else f"{fit['loglog_slope']:.2f}"
    power = "n/a" if fit["log_power"] is None else f"{fit['log_power']:.2f}"
    return {
        "measured": f"{table}; log-log slope of m* vs d = {slope}, m* ~ (ln d)^{power}",
        "verdict": "reproduced" if ok else "not reproduced",
        "criterion": f"m* found at every d and its log-log slope against d <= 0.5 "
        f"(target {config.target:g})",
        "fit": fit,
    }


EXPERIMENT = register(
    Experiment(
        name="polylog-width",
        claim="A7.2",
        title="Polylogarithmic trainable parameters",
        paper="The embedding width, hence the number of trainable parameters (2m), needs to grow "
        "only like polylog(d) for one-step learning, against Omega(d) for FFNNs.",
        config_type=Config,
        run=run,
        figure=figure,
        verdict=verdict,
        split=split,
        presets={
            "quick": {"d_values": [2**6, 2**8, 2**10, 2**12, 2**14], "seeds": 32},
            "full": {
                "d_values": [2**8, 2**10, 2**12, 2**14, 2**16, 2**18, 2**20],
                "seeds": 128,
                "target": 0.9,
                "device": "auto",
            },
        },
    )
)
