"""``attention-maps`` runs its grid of step sizes together (``descent.GridDescent``):
the same records as the loop it replaced (one ``Descent`` per step size) to float64
rounding (a product with ``V`` of more rows may round differently, and the loss's gradient and
softmax's backward are written by hand instead of autograd's): step counts, divergence and
outcomes identical."""

from __future__ import annotations

import math

import pytest

from attnsep.core.device import torch_threads
from attnsep.experiments import xor_attention_maps as maps

CLOSE = 1e-6
"""Largest relative difference of a float in the records (measured: at most 1.3e-7, d = 64, 40
steps, normalized-erf; 2e-16 to 4e-15 for the other maps: rounding differences grow along a
run)."""


def difference(old, new, path: str = "") -> float:
    """Largest relative difference of the floats of two records; anything else must be equal."""
    if isinstance(old, dict):
        assert old.keys() == new.keys(), path
        return max((difference(old[k], new[k], f"{path}.{k}") for k in old), default=0.0)
    if isinstance(old, list):
        assert len(old) == len(new), path
        return max((difference(a, b, path) for a, b in zip(old, new, strict=True)), default=0.0)
    if isinstance(old, float) and isinstance(new, float) and old != new:
        assert math.isfinite(old) and math.isfinite(new), path
        return abs(old - new) / max(abs(old), abs(new))
    assert old == new, (path, old, new)
    return 0.0


def config(name: str, exponents: list[float], **kw) -> maps.config.Config:
    base = {"budget": 30, "screen_steps": 8, "refine": 2}
    return maps.config.Config(
        d=48, m=12, seeds=6, maps=[name], eta_exponents=exponents, **{**base, **kw}
    )


@pytest.mark.parametrize("name", ["softmax", "linear", "erf", "normalized-erf"])
def test_one_step_size(name: str) -> None:
    """One step size: the products have the old shape, so only the hand-written gradients (the
    loss's, and softmax's backward) round differently (for some maps and sizes not at all)."""
    c = config(name, [3.0])
    with torch_threads(1):
        new, old = maps.run.run_map(c, name), maps.run.run_map(c, name, reference=True)
    assert difference(old, new) <= CLOSE


@pytest.mark.parametrize("name", ["softmax", "linear", "erf", "shifted-erf", "sparsemax"])
def test_grid_equals_the_loop_to_rounding(name: str) -> None:
    c = config(name, [0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0])
    with torch_threads(1):
        new, old = maps.run.run_map(c, name), maps.run.run_map(c, name, reference=True)
    assert difference(old, new) <= CLOSE
    assert new["best"] is not None


def test_divergence_and_no_screen_match() -> None:
    """Step sizes that diverge (at different steps) and a grid run whole (no screen)."""
    c = config("linear", [1.0, 2.0, 3.0, 4.0, 6.0], screen_steps=None, budget=12)
    with torch_threads(1):
        new, old = maps.run.run_map(c, "linear"), maps.run.run_map(c, "linear", reference=True)
    assert difference(old, new) <= CLOSE
    diverged = [p["diverged_at"] for p in new["curve"]]
    assert diverged[:2] == [None, None] and len({*diverged[2:]}) == 3  # 12, 6 and 4 steps


def test_loss_gradient_by_hand_equals_autograd() -> None:
    import torch

    from attnsep.exact.parity import population_loss
    from attnsep.experiments.xor_attention_maps.descent import loss_and_gradient

    gen = torch.Generator().manual_seed(0)
    gamma = torch.rand(5, 2, 17, generator=gen, dtype=torch.float64)
    support = torch.stack([torch.randperm(17, generator=gen)[:2] for _ in range(5)])
    loss, grad = loss_and_gradient(gamma, support, -0.8)
    leaf = gamma.clone().requires_grad_(True)
    expected = population_loss(leaf, support, -0.8)
    (want,) = torch.autograd.grad(expected.sum(), leaf)
    assert torch.allclose(loss, expected.detach(), rtol=1e-14, atol=1e-15)
    assert torch.allclose(grad, want, rtol=1e-13, atol=1e-15)


def test_frozen_step_sizes_repeat_their_loss(monkeypatch: pytest.MonkeyPatch) -> None:
    """Large step sizes saturate softmax at once (gradient exactly 0): those runs are set aside,
    and their records equal the loop's, which evaluated them at every step."""
    from attnsep.experiments.xor_attention_maps import descent as grid

    c = config("softmax", [8.0, 10.0, 12.0], screen_steps=None, budget=10)
    evaluated: list[int] = []
    original = grid.GridDescent._evaluate

    def counting(self, indices):
        evaluated.append(len(indices))
        return original(self, indices)

    with torch_threads(1):
        old = maps.run.run_map(c, "softmax", reference=True)
        monkeypatch.setattr(grid.GridDescent, "_evaluate", counting)
        new = maps.run.run_map(c, "softmax")
    assert difference(old, new) <= CLOSE
    assert sum(evaluated) <= 3 * 3  # 3 x 11 in the loop: frozen after at most 2 steps
