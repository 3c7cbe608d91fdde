"""Property tests of the closed forms against their definitions (hypothesis).

* XOR / k-parity: the exact population loss (SPEC A4) equals enumeration of the cube, for
  random attention vectors with negative weights, any model/task sign and label noise;
* losses are non-negative;
* the FCN floor (SPEC B4) is non-increasing in the width, equals ``(T−q)/(qT(T−1))`` at
  width ``Td − 1`` and ``0`` from ``Td`` on;
* uniform attention never loses more than predicting zero;
* ``SparseParity.labels`` is the signed product of the support coordinates.
"""

from __future__ import annotations

from fractions import Fraction

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnsep.exact.parity import enumeration_loss, population_loss
from attnsep.exact.selection import per_sequence_loss
from attnsep.exact.selection_bounds import (
    fcn_bottleneck_loss,
    fcn_loss_floor,
    orthonormal_loss,
    uniform_attention_loss,
    zero_predictor_loss,
)
from attnsep.tasks.parity import SparseParity

SETTINGS = settings(max_examples=50, deadline=None, derandomize=True)
WEIGHT = st.floats(min_value=-2.0, max_value=2.0, allow_nan=False, allow_infinity=False)


@st.composite
def parity_problems(draw):
    """``(gamma E x H x d, support E x k, sign, task_sign, noise)``, d <= 8."""
    heads = draw(st.integers(1, 3))
    k = draw(st.integers(1, 3))
    d = draw(st.integers(max(2, k), 8))
    replicas = draw(st.integers(1, 3))
    values = draw(st.lists(WEIGHT, min_size=replicas * heads * d, max_size=replicas * heads * d))
    gamma = torch.tensor(values, dtype=torch.float64).reshape(replicas, heads, d)
    support = torch.tensor(
        [draw(st.permutations(range(d)))[:k] for _ in range(replicas)], dtype=torch.long
    )
    sign = draw(st.sampled_from([1, -1]))
    task_sign = draw(st.sampled_from([1, -1]))
    noise = draw(st.sampled_from([0.0, 0.1, 0.25, 0.49]))
    return gamma, support, sign, task_sign, noise


@SETTINGS
@given(parity_problems())
def test_exact_population_loss_equals_enumeration(problem):
    gamma, support, sign, task_sign, noise = problem
    exact = population_loss(gamma, support, sign * task_sign * (1 - 2 * noise))
    enumerated = enumeration_loss(gamma, support, sign, task_sign, noise)
    scale = 1.0 + float(enumerated.abs().max())
    assert torch.allclose(exact, enumerated, rtol=1e-10, atol=1e-10 * scale), (
        exact.tolist(),
        enumerated.tolist(),
    )


@SETTINGS
@given(parity_problems())
def test_parity_losses_are_non_negative(problem):
    gamma, support, sign, task_sign, noise = problem
    enumerated = enumeration_loss(gamma, support, sign, task_sign, noise)
    exact = population_loss(gamma, support, sign * task_sign * (1 - 2 * noise))
    assert (enumerated >= 0).all()
    scale = 1.0 + float(enumerated.abs().max())
    assert (exact >= -1e-10 * scale).all(), exact.tolist()


@SETTINGS
@given(
    T=st.integers(2, 40),
    q_frac=st.floats(0.0, 1.0),
    d=st.integers(1, 6),
)
def test_fcn_floor_is_non_increasing_in_width_and_hits_the_unit_form(T, q_frac, d):
    q = 1 + int(q_frac * (T - 1))
    unit = Fraction(T - q, q * T * (T - 1))
    floors = [fcn_loss_floor(T, q, d, width) for width in range(T * d + 4)]
    assert all(a >= b for a, b in zip(floors, floors[1:], strict=False)), floors
    assert all(f >= 0 for f in floors)
    assert floors[T * d - 1] == unit == fcn_loss_floor(T, q)
    assert floors[T * d] == 0 and floors[-1] == 0
    # the bottleneck loss is the floor on d <= width <= Td, and never below it
    for width in range(0, T * d + 1):
        bottleneck = fcn_bottleneck_loss(T, q, d, width)
        assert bottleneck >= floors[width]
        if width >= d:
            assert bottleneck == floors[width]


@SETTINGS
@given(T=st.integers(1, 200), q_frac=st.floats(0.0, 1.0), d=st.integers(1, 50))
def test_uniform_attention_never_loses_more_than_predicting_zero(T, q_frac, d):
    q = 1 + int(q_frac * (T - 1))
    uniform, zero = uniform_attention_loss(T, q, d), zero_predictor_loss(q, d)
    assert 0 <= uniform <= zero
    if q == T:  # the subset is everything: uniform attention is exact
        assert uniform == 0
    else:
        assert uniform < zero


@SETTINGS
@given(
    alpha=st.floats(-50.0, 1e6, allow_nan=False),
    T=st.integers(2, 100),
    q_frac=st.floats(0.0, 1.0),
    d=st.integers(1, 10),
)
def test_orthonormal_loss_is_bounded_and_decreasing_in_alpha(alpha, T, q_frac, d):
    """``0 <= L_T(α) <= d (1 + 1/q)`` (all weight off the subset), ``<= L_0`` for ``α >= 0``,
    and it decreases as ``α`` grows."""
    q = 1 + int(q_frac * (T - 1))
    loss = orthonormal_loss(alpha, T, q, d)
    uniform = float(uniform_attention_loss(T, q, d))
    assert 0 <= loss <= d * (1 + 1 / q) * (1 + 1e-12)
    if alpha >= 0:
        assert loss <= uniform * (1 + 1e-12)
    assert orthonormal_loss(alpha + 1.0, T, q, d) <= loss * (1 + 1e-12)
    if alpha == 0:
        assert abs(loss - uniform) <= 1e-12 * (1 + loss)


@SETTINGS
@given(
    seed=st.integers(0, 2**31 - 1),
    T=st.integers(1, 12),
    q_frac=st.floats(0.0, 1.0),
    d=st.integers(1, 4),
    m_p=st.integers(1, 6),
    scale=st.sampled_from([0.0, 1.0, 30.0, 1e6]),
)
def test_exact_over_tokens_selection_loss_is_non_negative(seed, T, q_frac, d, m_p, scale):
    q = 1 + int(q_frac * (T - 1))
    gen = torch.Generator().manual_seed(seed)
    D = d + m_p
    W = torch.zeros(2, D, D, dtype=torch.float64)
    W[:, d:, d:] = scale * torch.randn(2, m_p, m_p, generator=gen, dtype=torch.float64)
    P = torch.randn(2, 3, T, m_p, generator=gen, dtype=torch.float64)
    y = torch.rand(2, 3, T, generator=gen).argsort(dim=-1)[..., :q].sort(dim=-1).values
    loss = per_sequence_loss(W, P, y)
    assert torch.isfinite(loss).all() and (loss >= 0).all()
    # at most the loss of putting all weight off the subset: d (1/q + 1) <= 2d
    assert (loss <= 2 * d * (1 + 1e-12)).all()


@st.composite
def labelled_inputs(draw):
    d = draw(st.integers(2, 12))
    k = draw(st.integers(1, d))
    replicas = draw(st.integers(1, 3))
    n = draw(st.integers(1, 8))
    sign = draw(st.sampled_from([1, -1]))
    bits = draw(st.lists(st.booleans(), min_size=replicas * n * d, max_size=replicas * n * d))
    x = (torch.tensor(bits, dtype=torch.float64) * 2 - 1).reshape(replicas, n, d)
    support = torch.tensor(
        [sorted(draw(st.permutations(range(d)))[:k]) for _ in range(replicas)], dtype=torch.long
    )
    flips = torch.tensor(
        draw(st.lists(st.booleans(), min_size=replicas * n, max_size=replicas * n))
    ).reshape(replicas, n)
    return SparseParity(d, k, sign), x, support, flips


@SETTINGS
@given(labelled_inputs())
def test_labels_are_the_signed_product_over_the_support(problem):
    task, x, support, flips = problem
    clean = task.labels(x, support)
    noisy = task.labels(x, support, flips)
    for e in range(x.shape[0]):
        for i in range(x.shape[1]):
            product = 1.0
            for a in support[e].tolist():
                product *= float(x[e, i, a])
            assert float(clean[e, i]) == task.sign * product
            assert float(noisy[e, i]) == (-1 if bool(flips[e, i]) else 1) * task.sign * product
    assert set(clean.unique().tolist()) <= {-1.0, 1.0}
