"""A7.6's jobs and records: one model and size a job, each model's threshold search
(``xor_thresholds.transformer_xor``, ``fcn_xor``), and the cost of a job (SPEC A7.6)."""

from __future__ import annotations

import math

from ...configs import XorFCNConfig
from ...train.memory import fcn_peak, one_step_peak
from .. import costs
from ..base import Record
from .config import Config


def split(config: Config) -> list[Config]:
    """One job per model and size, the costly ones (FCN, large ``d``) first."""
    fcn = [{"d_values": [], "fcn_d_values": [d]} for d in sorted(config.fcn_d_values)[::-1]]
    transformer = [{"d_values": [d], "fcn_d_values": []} for d in sorted(config.d_values)[::-1]]
    return [config.model_copy(update=u) for u in fcn + transformer]


def run(config: Config) -> list[Record]:
    from .. import xor_thresholds as xt

    transformer = [
        {
            "model": "transformer",
            "seed": config.seed,
            **xt.transformer_xor(d, config.seeds, config.seed, device=config.device),
        }
        for d in config.d_values
    ]
    fcn = [
        {
            "model": "fcn",
            "seed": config.seed,
            **xt.fcn_xor(
                d,
                config.seeds,
                config.seed,
                steps=config.fcn_steps,
                dtype=config.fcn_dtype,
                device=config.device,
            ),
        }
        for d in config.fcn_d_values
    ]
    return transformer + fcn


# --- cost (``attnsep reproduce --plan``): the work of one job ---------------------------------


FCN_STEP = 1300
"""A FCN step's fixed cost (Python, autograd, the optimizer: about 1.1 ms) in the units of its
work, one replica's input coordinate (about 0.85 ns each in float32 at width 3): measured with
64 nets of width 3, 200 steps, at ``d = 16, 64, 256, 1024``: 1.97, 4.05, 12.7, 56.8 ms per
step (one thread)."""


def work(c: costs.Config) -> costs.Parts:
    """The one step's search (``m* ~ (ln d)^2``, then its sign error rate on fresh samples) and the
    FCNs' search: minibatch steps on small matrices, each ``seeds · d`` plus its fixed cost
    (:data:`FCN_STEP`)."""
    from ...configs import XorFCNConfig, default

    test_samples = default(XorFCNConfig, "test_samples")
    transformer = sum(
        c["seeds"] * d * (3 * 4 * costs.ln(d) ** 2 + test_samples) for d in c["d_values"]
    )
    fcn = sum(
        costs.probes(d) * c["fcn_steps"] * (c["seeds"] * d + FCN_STEP) for d in c["fcn_d_values"]
    )
    return {"transformer": transformer, "fcn": fcn}


def peak(c: costs.Config) -> float:
    """The largest probe, transformer or FCN (probes run one after another). Transformer: a step
    that keeps its embeddings for the sign error rate (``train.memory.one_step_peak`` with
    ``keep_embeddings``) at each doubling width up to the confirmation's ``4 m*``, with
    ``m* ~ (ln d)^2 / 4`` (measured: 13 to 24 for d = 64 to 8192). FCN: ``train.memory.fcn_peak``
    at width 8, past every probe measured (``width*`` was 3 at each standard ``d``); the width
    matters little beside the ``d``-long inputs."""
    from ...configs import OneStepConfig

    peaks = [0.0]
    for d in c["d_values"]:
        top = max(2, math.ceil(costs.ln(d) ** 2))
        for m in [2**j for j in range(1, top.bit_length()) if 2**j < top] + [top]:
            step = OneStepConfig(d=d, m=m, seeds=c["seeds"])
            peaks.append(one_step_peak(step, keep_embeddings=True))
    peaks += [
        fcn_peak(
            XorFCNConfig(d=d, width=8, seeds=c["seeds"], steps=c["fcn_steps"], dtype=c["fcn_dtype"])
        )
        for d in c["fcn_d_values"]
    ]
    return max(peaks)
