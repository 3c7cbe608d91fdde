"""Target 3: the exact population step vs the sampled step "the way papers do it".

Ours: ``run_one_step(OneStepConfig(d=2000, m=32, seeds=16))`` -- the exact population
gradient for all 16 replicas in one batch (embeddings, supports and queries drawn, metrics
included).

Baseline: a ``torch.nn.Module`` holding the frozen ``V`` (buffer) and the two query vectors
(parameter), one autograd step of the empirical squared loss on ``n = 2*10^4`` sampled ``±1``
inputs, with the same ``eta = 16 d^2 ln d`` and the same antisymmetric init; seeds in a
Python loop, everything drawn with plain torch. Both are scored by the same criterion,
``certified_error(gamma, support) <= 0.1`` (``attnsep.metrics.parity``).
"""

from __future__ import annotations

import math

import torch
from common import THREADS, interleaved, median_ratio, profile_top, row, seconds

from attnsep.metrics.parity import certified_error
from attnsep.train.one_step import OneStepConfig, run_one_step

D, M, SEEDS, N = 2000, 32, 16, 20_000
TOL = 0.1


class SampledHeads(torch.nn.Module):
    """Two softmax heads over frozen embeddings: ``f(x) = -(gamma_1 . x)(gamma_2 . x)``."""

    def __init__(self, V: torch.Tensor, theta: torch.Tensor) -> None:
        super().__init__()
        self.register_buffer("V", V)
        self.theta = torch.nn.Parameter(theta.clone())

    def weights(self) -> torch.Tensor:
        return torch.softmax(self.theta @ self.V.T, dim=-1)  # 2 x d

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return -(x @ self.weights().T).prod(dim=1)


def sampled_step(seed: int, d: int = D, m: int = M, n: int = N) -> float:
    """One sampled step for one seed; returns the certified error after it."""
    gen = torch.Generator().manual_seed(seed)
    V = torch.randn(d, m, generator=gen, dtype=torch.float64)
    V /= V.norm(dim=1, keepdim=True)
    support = torch.randperm(d, generator=gen)[:2]
    q = torch.randn(m, generator=gen, dtype=torch.float64)
    q /= q.norm()
    model = SampledHeads(V, torch.stack([q, -q]))
    x = torch.randint(0, 2, (n, d), generator=gen).to(torch.float64).mul_(2).sub_(1)
    y = -x[:, support[0]] * x[:, support[1]]
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    eta = 16 * d**2 * math.log(d)
    with torch.no_grad():
        model.theta -= eta * model.theta.grad
        gamma = model.weights()
    return float(certified_error(gamma[None], support[None])[0])


def sampled_run(seeds: int = SEEDS) -> list[float]:
    return [sampled_step(seed) for seed in range(seeds)]


def run(rounds: int = 3) -> list[dict]:
    config = OneStepConfig(d=D, m=M, seeds=SEEDS, device="cpu")
    ours_out: dict = {}
    base_out: dict = {}

    def ours() -> None:
        ours_out["result"] = run_one_step(config)

    def base() -> None:
        base_out["errors"] = sampled_run()

    t_ours, t_base = interleaved(ours, base, rounds, warmup=lambda: (ours(), sampled_step(99)))
    ratio = median_ratio(t_base, t_ours)
    exact_rate = float(ours_out["result"].success.mean())
    errors = base_out["errors"]
    sampled_rate = sum(e <= TOL for e in errors) / len(errors)
    met = ratio >= 50.0
    fails = "the sampled step FAILS at d=2000" if sampled_rate < 0.5 else "the sampled step works"
    note = (
        f"d=2000, m=32, {SEEDS} seeds, eta=16 d^2 ln d; success = certified_error <= {TOL}: "
        f"exact {exact_rate:.0%}, sampled (n=2e4) {sampled_rate:.0%} ({fails}; median "
        f"certified error {sorted(errors)[len(errors) // 2]:.3g}); ratio = sampled / exact "
        f"time, {rounds} interleaved rounds, torch threads={THREADS}"
    )
    profile = None if met else profile_top(ours)
    return [
        row(
            "3 exact vs sampled step, d=2000",
            seconds(t_ours),
            seconds(t_base),
            ratio,
            ">= 50x",
            met,
            note,
            profile,
        ),
        row(
            "3 success rate, d=2000 (exact vs sampled)",
            f"{exact_rate:.0%}",
            f"{sampled_rate:.0%}",
            None,
            "report",
            None,
            f"{SEEDS} seeds; {fails}",
        ),
    ]


if __name__ == "__main__":
    for r in run():
        print(r)
