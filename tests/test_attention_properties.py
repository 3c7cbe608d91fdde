"""Every attention map against the properties it declares (SPEC Part E, A7.3b): normalization,
shift invariance and tails where claimed (and their absence where not), gradients against
finite differences, the sparse maps against a bisection, stability at huge scores, and every
registered name accepted by ``attnsep xor one-step --attention`` and ``attnsep.api``."""

from __future__ import annotations

import math

import pytest
import torch

import attnsep.api
from attnsep import attention
from attnsep.experiments import xor_attention_maps as maps
from cli_support import attnsep as cli

NAMES = sorted(attention.ATTENTION)


def scores(*shape: int, scale: float = 1.0, seed: int = 0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return scale * torch.randn(*shape, generator=gen, dtype=torch.float64)


@pytest.mark.parametrize("name", NAMES)
def test_normalized_exactly_where_declared(name: str) -> None:
    fn, props = attention.get(name), attention.properties(name)
    sums = []
    for scale in (0.1, 3.0, 1e3, 1e6):
        g = fn(scores(4, 2, 9, scale=scale, seed=1))
        if props.normalized:
            assert (g >= 0).all()
            torch.testing.assert_close(g.sum(dim=-1), torch.ones(4, 2, dtype=g.dtype))
        sums.append((g.sum(dim=-1) - 1).abs().max().item())
    if not props.normalized:  # the declaration can fail: some input sums far from one
        assert max(sums) > 1e-2


@pytest.mark.parametrize("name", NAMES)
def test_shift_invariant_exactly_where_declared(name: str) -> None:
    fn, props = attention.get(name), attention.properties(name)
    s = scores(3, 2, 7, scale=2.0, seed=2) * props.temperature
    changes = [(fn(s + c * props.temperature) - fn(s)).abs().max().item() for c in (-30, 2.5, 40)]
    if props.shift_invariant:
        assert max(changes) < 1e-12
    else:
        assert max(changes) > 1e-3


@pytest.mark.parametrize("name", NAMES)
def test_tails_as_declared(name: str) -> None:
    """One score falls ``gap`` below the others (in the map's own units, ``gap * T``): its weight
    against the top's is exactly 0 (zero tails), positive but below ``1e-8`` (light: ``e^-20``
    or faster), or above ``1e-4`` (heavy: polynomial or no decay)."""
    fn, props = attention.get(name), attention.properties(name)
    for gap in (20.0, 25.0):
        s = torch.tensor([1.0, 0.0, -gap], dtype=torch.float64) * props.temperature
        g = fn(s).abs()
        ratio = (g[2] / g[0]).item()
        if props.tails == "zero":
            assert ratio == 0
        elif props.tails == "light":
            assert 0 < ratio < 1e-8
        else:
            assert ratio > 1e-4


@pytest.mark.parametrize("name", NAMES)
def test_gradient_matches_finite_differences(name: str) -> None:
    fn, props = attention.get(name), attention.properties(name)
    for scale, seed in ((0.5, 3), (3.0, 4)):
        s = (scores(2, 7, scale=scale, seed=seed) * props.temperature).requires_grad_(True)
        assert torch.autograd.gradcheck(fn, (s,))


@pytest.mark.parametrize("name", NAMES)
def test_huge_scores_give_finite_weights_and_gradients(name: str) -> None:
    for scale in (1e3, 1e6):
        s = scores(3, 2, 9, scale=scale, seed=5).requires_grad_(True)
        g = attention.get(name)(s)
        (grad,) = torch.autograd.grad(g.square().sum(), s)
        assert torch.isfinite(g).all() and torch.isfinite(grad).all()


def simplex_by_bisection(z: torch.Tensor, power: float) -> torch.Tensor:
    """``(z - tau)_+^power`` with ``tau`` found by bisection so that the weights sum to one."""
    top = z.max(dim=-1, keepdim=True).values
    lo, hi = top - 1 - z.shape[-1], top
    for _ in range(200):
        mid = (lo + hi) / 2
        heavy = (z - mid).clamp(min=0).pow(power).sum(dim=-1, keepdim=True) > 1
        lo, hi = torch.where(heavy, mid, lo), torch.where(heavy, hi, mid)
    return (z - (lo + hi) / 2).clamp(min=0).pow(power)


@pytest.mark.parametrize("scale", [0.3, 3.0, 30.0])
def test_sparsemax_and_entmax_are_the_projections_they_claim(scale: float) -> None:
    s = scores(3, 2, 9, scale=scale, seed=6)
    torch.testing.assert_close(attention.sparsemax(s), simplex_by_bisection(s, 1.0))
    torch.testing.assert_close(attention.entmax15(s), simplex_by_bisection(s / 2, 2.0))
    # between softmax (dense) and sparsemax: entmax keeps at least sparsemax's support
    assert ((attention.entmax15(s) > 0) >= (attention.sparsemax(s) > 0)).all()


def test_the_new_maps_match_their_formulas() -> None:
    s = scores(3, 2, 7, scale=2.0, seed=7)
    d = s.shape[-1]

    def norm(w: torch.Tensor) -> torch.Tensor:
        return w / w.sum(dim=-1, keepdim=True)

    top = s.max(dim=-1, keepdim=True).values
    expected = {
        "floored-softmax": norm(1 + s.exp()),
        "normalized-sigmoid": norm(torch.sigmoid(s)),
        "normalized-softplus": norm(torch.log1p(s.exp())),
        "shifted-exp": (s - top).exp(),
        "shifted-cauchy": norm(1 / (1 + (top - s) ** 2)),
        "sigmoid": torch.sigmoid(s) / d,
    }
    for name, value in expected.items():
        torch.testing.assert_close(attention.get(name)(s), value, rtol=1e-12, atol=1e-15)
    for t in attention.SOFTMAX_TEMPERATURES:
        name = f"softmax-t{t:g}"
        assert attention.properties(name).temperature == t
        assert attention.properties(name).base == "softmax"
        torch.testing.assert_close(attention.get(name)(s), torch.softmax(s / t, dim=-1))


def test_log_softplus_is_exact_on_both_sides_of_its_switch() -> None:
    s = torch.linspace(-40, 30, 141, dtype=torch.float64)
    direct = torch.log(torch.log1p(torch.exp(s)))
    torch.testing.assert_close(attention.log_softplus(s), direct, rtol=1e-13, atol=0)
    far = torch.tensor([-1e4, -800.0], dtype=torch.float64, requires_grad=True)
    value = attention.log_softplus(far)
    (grad,) = torch.autograd.grad(value.sum(), far)
    torch.testing.assert_close(value, far.detach())  # log softplus(s) -> s
    torch.testing.assert_close(grad, torch.ones(2, dtype=torch.float64))


def test_normalized_softplus_where_softplus_underflows() -> None:
    s = torch.tensor([[-900.0, -901.0, -1e4]], dtype=torch.float64)
    g = attention.normalized_softplus(s)  # softplus is 0 in float64 here; the ratios e^-1 stay
    torch.testing.assert_close(g[0, 1] / g[0, 0], torch.tensor(math.exp(-1), dtype=s.dtype))
    assert g[0, 2] == 0 and torch.isfinite(g).all()


# --- every registered name is accepted wherever a map name is -------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_the_cli_accepts_every_registered_map(name: str) -> None:
    run = cli("xor", "one-step", "--d", "16", "--m", "4", "--seeds", "2", "--attention", name)
    assert run.returncode == 0, run.stderr
    report = cli(
        "xor", "one-step", "--d", "16", "--m", "4", "--seeds", "2", "--attention", name, "--json"
    ).json()
    assert report["attention"] == name


@pytest.mark.parametrize("name", NAMES)
def test_the_api_and_the_experiment_config_accept_every_registered_map(name: str) -> None:
    result = attnsep.api.xor_one_step(d=16, m=4, seeds=2, attention=name)
    assert result.config.attention == name
    assert len(result.raw.loss_after) == 2 and all(map(math.isfinite, result.raw.loss_after))
    assert maps.config.Config(maps=[name]).maps == [name]
