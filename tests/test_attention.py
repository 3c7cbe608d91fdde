"""The attention-map registry (SPEC A2)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnsep import attention


def scores(*shape: int, scale: float = 1.0, seed: int = 0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return scale * torch.randn(*shape, generator=gen, dtype=torch.float64)


def test_registry_has_the_spec_maps() -> None:
    assert {"softmax", "linear", "erf", "normalized-erf", "shifted-erf"} <= set(attention.ATTENTION)
    assert {"sparsemax", "entmax-1.5", "normalized-sigmoid", "softmax-t10"} <= set(
        attention.ATTENTION
    )
    assert set(attention.PROPERTIES) == set(attention.ATTENTION)  # each map declares them


@pytest.mark.parametrize("name", sorted(attention.ATTENTION))
def test_every_map_keeps_the_shape_and_is_finite(name: str) -> None:
    s = scores(3, 2, 7, scale=5.0, seed=4)
    g = attention.get(name)(s)
    assert g.shape == s.shape and torch.isfinite(g).all()


@pytest.mark.parametrize("name", ["softmax", "normalized-erf", "shifted-erf"])
def test_normalized_maps_are_distributions(name: str) -> None:
    g = attention.get(name)(scores(3, 2, 7, scale=3.0, seed=5))
    assert (g >= 0).all()
    torch.testing.assert_close(g.sum(dim=-1), torch.ones(3, 2, dtype=torch.float64))


def test_normalized_erf_is_one_plus_erf_normalized() -> None:
    s = scores(2, 6, seed=6)
    expected = (1 + torch.erf(s)) / (1 + torch.erf(s)).sum(dim=-1, keepdim=True)
    torch.testing.assert_close(attention.normalized_erf(s), expected, rtol=1e-12, atol=0)


def test_unknown_map_is_a_one_line_value_error() -> None:
    with pytest.raises(ValueError) as info:
        attention.get("foo")
    message = str(info.value)
    assert "'foo'" in message and "softmax" in message and "\n" not in message


def test_register_adds_a_map_with_its_properties() -> None:
    props = attention.Properties(normalized=False, shift_invariant=False, tails="heavy")

    @attention.register("_test_half", props)
    def half(s: torch.Tensor) -> torch.Tensor:
        return s / 2

    try:
        assert attention.get("_test_half") is half
        assert attention.properties("_test_half") is props
        assert torch.equal(attention.get("_test_half")(torch.ones(3)), torch.full((3,), 0.5))
    finally:
        attention.unregister("_test_half")
    assert "_test_half" not in attention.ATTENTION


def test_a_registered_map_is_accepted_everywhere_a_map_name_is(tmp_path) -> None:
    """SPEC A2 maps are a registry: one ``register`` and the API, the CLI and the experiments
    take the new name (and its one-step numbers are its own, not softmax's)."""
    import attnsep
    from attnsep.cli import main

    props = attention.Properties(normalized=True, shift_invariant=False, tails="zero")

    @attention.register("relu-norm", props)
    def relu_norm(s: torch.Tensor) -> torch.Tensor:
        r = torch.relu(s)
        return r / r.sum(dim=-1, keepdim=True).clamp(min=1e-300)

    try:
        step = attnsep.xor_one_step(d=16, m=8, seeds=4, attention="relu-norm")
        softmax = attnsep.xor_one_step(d=16, m=8, seeds=4)
        assert step.config.attention == "relu-norm"
        assert not np.array_equal(step.raw.loss_after, softmax.raw.loss_after)
        store = tmp_path / "s.sqlite"
        ran = attnsep.run_experiment(
            "one-step",
            config={"d_values": [16], "m_values": [8], "seeds": 4, "attention": "relu-norm"},
            store=store,
        )
        assert ran.config.attention == "relu-norm" and ran.records and ran.computed > 0
        with pytest.raises(SystemExit) as done:
            main(["xor", "one-step", "--d", "16", "--m", "8", "--seeds", "2",
                  "--attention", "relu-norm"])  # fmt: skip
        assert done.value.code == 0
    finally:
        attention.unregister("relu-norm")
    with pytest.raises(ValueError, match="attention must be one of .*got 'relu-norm'"):
        attnsep.xor_one_step(d=16, m=8, seeds=4, attention="relu-norm")


def test_softmax_matches_the_definition() -> None:
    s = scores(3, 2, 7)
    expected = s.exp() / s.exp().sum(dim=-1, keepdim=True)
    torch.testing.assert_close(attention.softmax(s), expected, rtol=1e-14, atol=0)


@pytest.mark.parametrize("scale", [1.0, 1e3, 1e6, 1e300])
def test_softmax_is_stable_at_huge_scores(scale: float) -> None:
    s = scores(4, 2, 9, scale=scale, seed=1)
    g = attention.softmax(s)
    assert torch.isfinite(g).all()
    assert (g >= 0).all()
    torch.testing.assert_close(g.sum(dim=-1), torch.ones(4, 2, dtype=torch.float64))
    if scale >= 1e3:  # the gap between the top two scores is >> 1: one-hot on the argmax
        one_hot = torch.nn.functional.one_hot(s.argmax(dim=-1), 9).double()
        torch.testing.assert_close(g, one_hot)
    # shift invariance: adding a constant does not change the weights
    torch.testing.assert_close(attention.softmax(s + 1e6), attention.softmax(s), rtol=0, atol=1e-9)


def test_softmax_large_negative_scores_and_ties() -> None:
    s = torch.tensor([[-1e6, -1e6, -1e6 - 50.0]], dtype=torch.float64)
    g = attention.softmax(s)
    assert torch.isfinite(g).all()
    torch.testing.assert_close(g[0, :2], torch.full((2,), 0.5, dtype=torch.float64))
    torch.testing.assert_close(attention.softmax(torch.zeros(2, 5)), torch.full((2, 5), 0.2))


def test_linear_erf_sigmoid_formulas() -> None:
    s = scores(2, 3, 11, scale=2.0)
    torch.testing.assert_close(attention.linear(s), s / 11, rtol=0, atol=0)
    torch.testing.assert_close(attention.erf(s), torch.erf(s) / 11, rtol=0, atol=0)
    torch.testing.assert_close(attention.sigmoid(s), torch.sigmoid(s) / 11, rtol=0, atol=0)
    # component-wise maps: position i only depends on score i
    t = s.clone()
    t[..., 0] += 5.0
    for name in ("linear", "erf", "sigmoid"):
        fn = attention.get(name)
        torch.testing.assert_close(fn(t)[..., 1:], fn(s)[..., 1:], rtol=0, atol=0)


def test_erf_is_bounded_and_stable() -> None:
    s = scores(2, 2, 6, scale=1e8)
    g = attention.erf(s)
    assert torch.isfinite(g).all()
    assert (g.abs() <= 1 / 6 + 1e-15).all()


def test_normalized_erf_matches_the_definition_and_sums_to_one() -> None:
    s = scores(3, 2, 7, scale=2.0)
    raw = torch.special.erfc(-s)  # 1 + erf(s) without the cancellation at negative s
    torch.testing.assert_close(
        attention.normalized_erf(s), raw / raw.sum(dim=-1, keepdim=True), rtol=1e-12, atol=0
    )
    for scale in (1.0, 1e2, 1e6, 1e300):
        g = attention.normalized_erf(scores(4, 2, 9, scale=scale, seed=2))
        assert torch.isfinite(g).all() and (g >= 0).all()
        torch.testing.assert_close(g.sum(dim=-1), torch.ones(4, 2, dtype=torch.float64))


def test_normalized_erf_where_one_plus_erf_underflows() -> None:
    # 1 + erf(s) is 0 in float64 below s ~ -6: the weights stay the normalized tails
    s = torch.tensor([[-40.0, -40.0, -60.0], [-1e4, -1e4, -1e4]], dtype=torch.float64)
    g = attention.normalized_erf(s)
    assert torch.isfinite(g).all()
    torch.testing.assert_close(g[0, :2], torch.full((2,), 0.5, dtype=torch.float64))
    torch.testing.assert_close(g[1], torch.full((3,), 1 / 3, dtype=torch.float64))


def test_normalized_erf_gradient() -> None:
    for scale in (1.0, 5.0):
        s = scores(3, 6, scale=scale, seed=3).requires_grad_(True)
        assert torch.autograd.gradcheck(attention.normalized_erf, (s,))
    far = torch.tensor([[-30.0, -29.0, -35.0, 2.0]], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(attention.normalized_erf, (far,))


def test_normalized_erf_represents_a_unit_vector() -> None:
    """Unlike ``erf / d``, a large score gap puts (almost) all the weight on one position."""
    d = 9
    s = torch.full((d,), -3.0, dtype=torch.float64)
    s[4] = 3.0
    g = attention.normalized_erf(s)
    assert g[4] > 0.999 and g.argmax() == 4
    assert attention.erf(s).abs().max() <= 1 / d


def test_shifted_erf_is_the_normalized_erf_of_shifted_scores_and_can_be_one_hot() -> None:
    s = scores(3, 2, 7, seed=5)
    shifted = attention.shifted_erf(s)
    top = s.max(dim=-1, keepdim=True).values
    torch.testing.assert_close(shifted, attention.normalized_erf(s - top), rtol=0, atol=0)
    torch.testing.assert_close(shifted.sum(dim=-1), torch.ones(3, 2, dtype=s.dtype))
    # along theta = c v_i the weight on i goes to 1, which normalized-erf cannot do (d >> m)
    V = torch.nn.functional.normalize(
        torch.randn(256, 8, generator=torch.Generator().manual_seed(0), dtype=torch.float64), dim=1
    )
    theta = 200.0 * V[3]
    assert attention.shifted_erf(V @ theta)[3] > 0.99
    assert attention.normalized_erf(V @ theta).max() < 0.05
