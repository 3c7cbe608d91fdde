"""A7.9's config: the sizes, the transformer's and the MLP's training, the success bound (SPEC
Part G, item 7), and its presets."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from ..base import ExperimentConfig, InputLength

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


PRESETS = {
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
}
