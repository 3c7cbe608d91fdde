"""The attention-map registry (SPEC A2)."""

from __future__ import annotations

import pytest
import torch

from attnsep import attention


def scores(*shape: int, scale: float = 1.0, seed: int = 0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return scale * torch.randn(*shape, generator=gen, dtype=torch.float64)


def test_registry_has_the_spec_maps() -> None:
    assert {"softmax", "linear", "erf"} <= set(attention.ATTENTION)
    for name in attention.ATTENTION:
        assert attention.get(name) is attention.ATTENTION[name]


def test_unknown_map_is_a_one_line_value_error() -> None:
    with pytest.raises(ValueError) as info:
        attention.get("foo")
    message = str(info.value)
    assert "'foo'" in message and "softmax" in message and "\n" not in message


def test_register_adds_a_map() -> None:
    @attention.register("_test_half")
    def half(s: torch.Tensor) -> torch.Tensor:
        return s / 2

    try:
        assert attention.get("_test_half") is half
        assert torch.equal(attention.get("_test_half")(torch.ones(3)), torch.full((3,), 0.5))
    finally:
        attention.ATTENTION.pop("_test_half")


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
