"""A7.9 — negative control: sparse XOR in a rotated basis (SPEC Part G, item 7), a *finding*.

The transformer's advantage rests on the task being sparse in the basis of its tokens: the
query-vector model (SPEC A2) reads the coordinates ``x_a`` as tokens and attends to positions.
Hide the two relevant coordinates by a random rotation and the advantage should vanish, while a
fully-connected net, whose Gaussian first layer makes its training rotation-equivariant, should
not notice. Gaussian inputs ``x ~ N(0, I_d)``; axis task ``y = -x_i x_j``; rotated task
``y = -<u,x><v,x>`` with ``(u, v)`` a Haar-random orthonormal pair; both ``E y^2 = 1``. The
transformer's population loss is exact (``exact.gaussian_xor``), the MLP's is estimated on
fresh test inputs (``train.gaussian_xor``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field, model_validator

from . import costs, plotting
from .base import Experiment, ExperimentConfig, InputLength, Record, register
from .xor_rotated_basis_verdict import analyse, draw_losses, draw_rates, finding

Model = Literal["transformer", "mlp"]
MODELS: tuple[Model, ...] = ("transformer", "mlp")
D_LIMIT = 4096


class Config(ExperimentConfig):
    """Per ``d``, four arms on the same ``d``: the transformer and the MLP, each on the axis and
    on the rotated task. Transformer (SPEC A2, ``m`` fixed, ``seeds`` replicas, the same frozen
    embeddings and anti-symmetric init on both tasks): one population step of SPEC A5's
    ``eta = eta_scale d^2 ln d``, then ``budget`` population GD steps of ``gd_eta_scale d^2 ln d``
    (the ``gd`` default of ``configs.XorTrainConfig``). MLP: ``sum_k a_k relu(w_k.x + b_k) + c`` of
    width ``mlp_width``, first layer ``N(0, 1/d)``, online SGD (``mlp_batch`` fresh inputs per
    step, ``mlp_steps`` steps, rate ``mlp_lr``, MSE), ``mlp_seeds`` replicas per task.

    Success (one definition for the four arms, a *choice*): population loss ``<= success_loss``
    (0.05, a twentieth of the trivial predictor's loss 1): exact for the transformer, the mean
    squared error on ``test_samples`` fresh inputs for the MLP.

    Reported (a finding, SPEC Part G item 7; criterion written before any number was seen):
    per ``d`` and arm the success rate with its Wilson 95% interval (the transformer's after one
    step too); the MLP's rate difference rotated - axis with Newcombe's interval and its median
    test loss per task with the ratio rotated / axis (bootstrap 95% over replicas); on the
    rotated task the transformer's least loss along its descent and its expressivity ceiling:
    the least loss found over ALL attention weights (free logits: any embeddings, any ``m``)
    and the proven bound ``1 - 4U^2 + U^4``, ``U = max(|u|_inf, |v|_inf)``, medians with
    bootstrap intervals. Expected: the transformer succeeds on the axis task and never on the
    rotated one, because no softmax weights can represent the rotated target (expressivity,
    not learning: weights are positive, ``<u,x>`` has mixed signs); the MLP's two rates agree
    within their intervals at every ``d`` (equal in law by rotation equivariance). No verdict.
    """

    d_values: list[InputLength] = Field(
        default_factory=lambda: [16, 32], min_length=1, max_length=16, description="Input sizes."
    )
    models: list[Model] = Field(
        default_factory=lambda: list(MODELS), min_length=1, description="Models run."
    )
    m: int = Field(32, ge=1, le=1024, description="Embedding width of the transformer.")
    seeds: int = Field(32, ge=1, le=4096, description="Transformer replicas per (d, task).")
    eta_scale: float = Field(16.0, gt=0, le=1e4, description="First step: eta_scale d^2 ln d.")
    gd_eta_scale: float = Field(2**-4, gt=0, le=1e4, description="GD: gd_eta_scale d^2 ln d.")
    budget: int = Field(100, ge=0, le=100_000, description="GD steps after the first step.")
    success_loss: float = Field(0.05, gt=0, lt=1, description="Success: loss <= this.")
    floor_restarts: int = Field(8, ge=1, le=64, description="Starts of the ceiling's search.")
    floor_steps: int = Field(500, ge=0, le=100_000, description="Adam steps of that search.")
    mlp_width: int = Field(64, ge=1, le=4096, description="Hidden width of the MLP.")
    mlp_seeds: int = Field(8, ge=1, le=1024, description="MLP replicas per (d, task).")
    mlp_steps: int = Field(2000, ge=1, le=1_000_000, description="SGD steps of the MLP.")
    mlp_batch: int = Field(64, ge=1, le=4096, description="Fresh inputs per SGD step.")
    mlp_lr: float = Field(0.05, gt=0, le=10, description="SGD learning rate of the MLP.")
    test_samples: int = Field(4096, ge=64, le=1 << 20, description="MLP test inputs.")

    @model_validator(mode="after")
    def _sizes_fit(self) -> Config:
        d = max(self.d_values)
        if d > D_LIMIT:
            raise ValueError(f"d_values must be <= {D_LIMIT}, got {d}")
        if len(set(self.d_values)) != len(self.d_values):
            raise ValueError(f"d_values must be distinct, got {self.d_values}")
        if self.seeds * d * self.m > 1 << 26:
            raise ValueError(f"seeds * d * m must be <= {1 << 26}, got {self.seeds * d * self.m}")
        if self.floor_restarts * self.seeds * d > 1 << 24:
            raise ValueError(
                f"floor_restarts * seeds * d must be <= {1 << 24}, got "
                f"{self.floor_restarts * self.seeds * d}"
            )
        mlp = self.mlp_seeds * d * max(self.mlp_width, self.mlp_batch, 1024)
        if mlp > 1 << 27:
            raise ValueError(
                f"mlp_seeds * d * max(mlp_width, mlp_batch, 1024) must be <= {1 << 27}, got {mlp}"
            )
        return self


CRITERION = (
    "A7.9, a finding (negative control, no verdict): per d, success (population loss <= "
    "success_loss; the MLP's on fresh test inputs) of the transformer (one step of SPEC A5's eta, "
    "then GD) and of a two-layer ReLU MLP (Gaussian first layer, online SGD) on the axis task "
    "y = -x_i x_j and the rotated task y = -<u,x><v,x>, Gaussian inputs; rates with Wilson 95% "
    "intervals; the MLP's rate difference rotated - axis (Newcombe) and median test-loss ratio "
    "(bootstrap over replicas); the transformer's least rotated loss beside its expressivity "
    "ceiling (least loss over all attention weights found, and the proven bound 1 - 4U^2 + U^4)"
)


def split(config: Config) -> list[Config]:
    """One job per ``(d, model)``."""
    return [
        config.model_copy(update={"d_values": [d], "models": [model]})
        for d in config.d_values
        for model in config.models
    ]


def job_seed(config: Config, d: int, *keys: str) -> int:
    """The streams of size ``d`` (and ``keys``): independent of how the jobs are split."""
    from ..core.rng import stream_seed

    return stream_seed(config.seed, "rotated-basis", d, *keys)


def _floats(values: Any) -> list[float]:
    return [float(x) for x in np.asarray(values, dtype=float).ravel()]


def run_transformer(config: Config, d: int) -> list[Record]:
    """Both tasks on the same embeddings and inits; the rotated one with its ceiling."""
    import math

    from ..exact.gaussian_xor import simplex_floor_bound
    from ..train import gaussian_xor as gx

    seed, out = job_seed(config, d), []
    eta, gd_eta = (s * d * d * math.log(d) for s in (config.eta_scale, config.gd_eta_scale))
    for task in gx.TASKS:
        u, v = gx.task_pairs(seed, d, config.seeds, task)
        runs = gx.transformer_descent(seed, config.m, u, v, eta, gd_eta, config.budget)
        record: Record = {"model": "transformer", "task": task, "d": d, "m": config.m}
        record.update({key: _floats(values) for key, values in runs.items()})
        if task == "rotated":
            floor = gx.simplex_floor(u, v, config.floor_restarts, config.floor_steps, seed)
            record["floor_found"] = _floats(floor)
            record["floor_bound"] = _floats(simplex_floor_bound(u, v).numpy())
        out.append(record)
    return out


def run_mlp(config: Config, d: int) -> list[Record]:
    """Both tasks, each on its own streams (independent arms)."""
    from ..train import gaussian_xor as gx

    out = []
    for task in gx.TASKS:
        seed = job_seed(config, d, "mlp", task)
        u, v = gx.task_pairs(seed, d, config.mlp_seeds, task)
        cfg = gx.GaussianMLPConfig(
            d=d,
            width=config.mlp_width,
            replicas=config.mlp_seeds,
            seed=seed,
            steps=config.mlp_steps,
            batch=config.mlp_batch,
            lr=config.mlp_lr,
            test_samples=config.test_samples,
        )
        loss = gx.train_mlp(cfg, u, v)["test_loss"]
        out.append(
            {
                "model": "mlp",
                "task": task,
                "d": d,
                "width": config.mlp_width,
                "steps": config.mlp_steps,
                "test_loss": _floats(loss),
            }
        )
    return out


def run(config: Config) -> list[Record]:
    out: list[Record] = []
    for d in config.d_values:
        for model in config.models:
            out += (run_transformer if model == "transformer" else run_mlp)(config, d)
    return out


def verdict(records: list[Record], config: Config) -> dict:
    return finding(records, config, CRITERION)


FIGURE = "rotated_basis.png"


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    """Left: success rates of the four arms vs ``d`` (Wilson 95%). Right: losses vs ``d``: the
    transformer's least rotated loss, its ceiling (least over all attention weights, and the
    proven bound), the MLP's median test loss per task, and the success line."""
    path = out / FIGURE
    a = analyse(records, config)
    with plotting.figure(path, ncols=2) as (_, (left, right)):
        draw_rates(left, a)
        draw_losses(right, a, config.success_loss)
    return [path]


# --- cost (``attnsep reproduce --plan``) and memory of one job ------------------------------


def work(c: costs.Config) -> costs.Parts:
    """Transformer: both tasks' ``budget + 2`` evaluations of ``2 d m`` products per replica,
    and the ceiling's ``restarts x steps`` loss evaluations of ``d``; MLP: both tasks' fresh
    inputs (``DRAW`` each) and ``3 width`` multiply-adds per input coordinate."""
    models = c.get("models", list(MODELS))
    transformer = mlp = 0.0
    for d in c["d_values"]:
        if "transformer" in models:
            descent = (c["budget"] + 2) * 4 * d * c["m"]
            ceiling = c["floor_restarts"] * (c["floor_steps"] + 1) * 20 * d
            transformer += 2 * c["seeds"] * descent + c["seeds"] * ceiling
        if "mlp" in models:
            inputs = c["mlp_steps"] * c["mlp_batch"] + c["test_samples"]
            mlp += 2 * c["mlp_seeds"] * inputs * d * (costs.DRAW + 3 * c["mlp_width"])
    return {"transformer": transformer, "mlp": mlp}


def peak(c: costs.Config) -> float:
    """Bytes (float64): the transformer's embeddings and the ceiling's logits with Adam's
    moments; the MLP's weights with gradients and a test chunk of 1024 inputs."""
    d = max(c["d_values"])
    transformer = c["seeds"] * d * (4 * c["m"] + 16 * c["floor_restarts"] + 16)
    rows = max(c["mlp_batch"], 1024)
    mlp = c["mlp_seeds"] * (4 * d * c["mlp_width"] + rows * (d + 3 * c["mlp_width"]))
    return 8.0 * 2 * (transformer + mlp)


EXPERIMENT = register(
    Experiment(
        name="rotated-basis",
        claim="A7.9",
        title="Negative control: sparse XOR in a rotated basis",
        paper="The paper seeks to determine if Transformers can break this Omega(d) parameter "
        "bottleneck and learn sparse XOR with significantly fewer parameters, leveraging their "
        "structural ability to share weights across sequence positions.",
        config_type=Config,
        run=run,
        figure=figure,
        verdict=verdict,
        split=split,
        kind="finding",
        section="controls and baselines",
        tuned_on=(0, 3),
        work=work,
        peak=peak,
        presets={
            "quick": {
                "d_values": [16, 32],
                "seeds": 16,
                "budget": 20,
                "floor_restarts": 4,
                "floor_steps": 100,
                "mlp_seeds": 4,
                "mlp_steps": 200,
                "test_samples": 1024,
            },
            "standard": {
                "d_values": [16, 64, 256],
                "seeds": 64,
                "budget": 100,
                "mlp_seeds": 8,
                "mlp_steps": 4000,
            },
            "full": {
                "d_values": [16, 32, 64, 128, 256, 512, 1024],
                "seeds": 256,
                "budget": 200,
                "floor_restarts": 16,
                "floor_steps": 1000,
                "mlp_seeds": 32,
                "mlp_steps": 10_000,
                "test_samples": 16384,
            },
        },
    )
)
