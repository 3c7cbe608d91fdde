"""The m_p* search of SPEC B5.2 / C: the product-law loss and gradient against full encodings,
training to convergence, the bisection records and the growth-law analysis."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from attnsep.exact.family import best_family_loss
from attnsep.exact.selection import per_sequence_loss
from attnsep.metrics import stats
from attnsep.metrics.laws import AFFINE_POLYLOG, LINEAR_LOG, POWER, exponent_draws
from attnsep.positional_encodings import StochasticPE
from attnsep.tasks.selection import TokenSelection
from attnsep.train import selection_threshold as sel
from attnsep.train.search import probe_matrix, smallest_passing
from attnsep.train.stopping import Stopping
from attnsep.train.threshold_laws import _rows_exponents, law_series, predictions

T, Q, M, D = 9, 2, 6, 3


def random_W(seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.eye(M, dtype=torch.float64) * 2 + torch.randn(M, M, generator=g).double()


def full_losses(W: torch.Tensor, kind: str, n: int, key: str) -> torch.Tensor:
    """Per-sequence losses with every encoding drawn (the library's exact-over-tokens loss)."""
    P = StochasticPE(seed=5, replicas=1, width=M, kind=kind).draw((key,), n, T)
    y = TokenSelection(D, T, Q).sample(5, 1, n, (key,)).y
    full = torch.zeros(1, D + M, D + M, dtype=torch.float64)
    full[0, D:, D:] = W
    return per_sequence_loss(full, P, y)[0]


@pytest.mark.parametrize("kind", ["sphere", "gaussian"])
def test_product_loss_has_the_law_of_the_full_loss(kind):
    W, n = random_W(), 20000
    direct = full_losses(W, kind, n, "check").numpy()
    fast = sel.product_losses(W[None], *sel.draw(T, Q, M, n, 1, 1, ("c",), kind), D)[0].numpy()
    se = math.hypot(direct.std(), fast.std()) / math.sqrt(n)
    assert abs(direct.mean() - fast.mean()) < 4 * se


def test_product_gradient_is_unbiased_and_less_noisy():
    """Mean gradient over batches agrees with full draws (4 s.e. on every entry's functional);
    the product law's gradient varies less (the orthogonal part of p_i is averaged out)."""
    W0, batches, n = random_W(1), 30, 400
    probe = torch.randn(M, M, generator=torch.Generator().manual_seed(2)).double()

    def grads(loss_of) -> np.ndarray:
        out = []
        for b in range(batches):
            W = W0.clone().requires_grad_(True)
            (g,) = torch.autograd.grad(loss_of(W, b).mean(), W)
            out.append([float(g.trace()), float((g * probe).sum())])
        return np.array(out)

    full = grads(lambda W, b: full_losses(W, "sphere", n, f"g{b}"))
    fast = grads(
        lambda W, b: sel.product_losses(W[None], *sel.draw(T, Q, M, n, 3, 1, (b,), "sphere"), D)
    )
    se = np.hypot(full.std(axis=0), fast.std(axis=0)) / math.sqrt(batches)
    assert np.all(np.abs(full.mean(axis=0) - fast.mean(axis=0)) < 4 * se)
    assert np.all(fast.std(axis=0) < full.std(axis=0))


def test_zero_W_is_uniform_attention_with_a_finite_gradient():
    W = torch.zeros(2, M, M, dtype=torch.float64, requires_grad=True)
    loss = sel.product_losses(W, *sel.draw(T, Q, M, 64, 0, 2, ("z",), "sphere"), D)
    assert torch.allclose(loss, torch.full_like(loss, D * (T - Q) / (Q * T)))
    (g,) = torch.autograd.grad(loss.sum(), W)
    assert torch.isfinite(g).all() and float(g[0].trace()) < 0  # descent grows alpha


def test_training_converges_near_the_family_best():
    training = sel.Training(batch=64, eval_size=1024, stopping=Stopping(max_steps=1500))
    run = sel.converge(16, 2, 8, 4, 2, 0, training)  # below the threshold: no early "reached"
    assert set(run.rules) <= {"near-best", "plateau"}
    assert all(0 < s <= 1500 for s in run.steps)
    # within 10% of the family's best (3% on the monitor, plus evaluation noise)
    assert all(
        r <= 1.1 * run.family_ratio + 3 * se for r, se in zip(run.ratios, run.stderrs, strict=True)
    )
    assert all(r < 0.6 for r in run.ratios)  # far below uniform attention


def test_training_does_not_depend_on_d():
    """The position block's loss is d times a d-free function of W: same run at every d."""
    training = sel.Training(batch=32, eval_size=256, stopping=Stopping(max_steps=200))
    runs = [sel.converge(16, 2, 6, d, 2, 0, training) for d in (2, 8, 32)]
    assert all(r.steps == runs[0].steps and r.rules == runs[0].rules for r in runs)
    for r in runs[1:]:
        np.testing.assert_allclose(r.ratios, runs[0].ratios, rtol=1e-9)
        np.testing.assert_allclose(r.family_ratio, runs[0].family_ratio, rtol=1e-12)


def test_a_plateau_first_anneals_the_rate():
    """With no annealing a replica stops at its first plateau; with it, it trains on and
    ends no worse (the chunks that raise the monitor loss are undone)."""

    def run(anneals: int) -> sel.Converged:
        stopping = Stopping(max_steps=2000, anneals=anneals, near_best=1e-9, reached=1e-9)
        return sel.converge(32, 2, 8, 4, 2, 0, sel.Training(batch=32, stopping=stopping))

    plain, annealed = run(0), run(3)
    assert "plateau" in plain.rules and "cap" not in plain.rules
    for e, rule in enumerate(plain.rules):
        if rule == "plateau":
            assert annealed.steps[e] > plain.steps[e]
    assert all(
        a <= p + 3 * se
        for a, p, se in zip(annealed.ratios, plain.ratios, plain.stderrs, strict=True)
    )


def test_trained_threshold_is_the_first_passing_probe():
    training = sel.Training(batch=32, eval_size=256, stopping=Stopping(max_steps=300))
    rec = sel.trained_threshold(8, 2, 4, 2, 0, training, m_limit=64)
    sizes, outcomes = probe_matrix(rec["probes"])
    assert rec["m_star"] == stats.first_passing(sizes, outcomes.mean(axis=0), sel.RATE)
    assert all(p["rate"] < sel.RATE for p in rec["probes"] if p["size"] < rec["m_star"])
    assert {"steps", "rules", "ratios", "family_ratio"} <= set(rec["probes"][0])
    assert rec["family_m"] is not None and rec["m_star"] >= rec["family_m"] // 2


def test_family_threshold_is_the_smallest_passing_width():
    m = sel.family_threshold(16, 2)
    assert m is not None and m > 2
    passes = [
        best_family_loss(16, 2, w).loss <= 0.2 * best_family_loss(16, 2, w).uniform
        for w in (m - 1, m)
    ]
    assert passes == [False, True]


def synthetic(law, Ts, seeds=32, spread=(0.8, 1.0)):
    out = []
    for T_ in Ts:
        need = np.ceil(law(T_) * np.random.default_rng(0).uniform(*spread, seeds))
        m, probes = smallest_passing(lambda w, need=need: need <= w, sel.RATE, 2, 1 << 14)
        out.append({"T": T_, "m_star": m, "probes": [p.as_record() for p in probes]})
    return out


def test_law_series_decides_a_log_law_and_a_power_law():
    Ts = [16, 32, 64, 128, 256, 512]
    log = law_series(synthetic(lambda t: 40 + 60 * math.log(t), Ts))
    assert log["comparison"]["decided"] == "paper"
    assert log["b"][1] <= 60 * 0.99 and log["b"][2] >= 60 * 0.8  # u_r in [0.8, 1]
    assert log["p"][1] <= 1 <= log["p"][2] and not log["flat"]
    # a + b (ln T)^p with p up to 4 follows T^0.6 over T <= 512 (both laws predict it), not T^0.9
    power = law_series(synthetic(lambda t: 20 * t**0.9, Ts))
    assert power["comparison"]["decided"] == "rival"
    assert power["alpha"][1] <= 0.9 <= power["alpha"][2] + 0.02
    shifted = law_series(synthetic(lambda t: 40 + 60 * math.log(t), Ts), offset=10)
    assert shifted["m"] == [m + 10 for m in log["m"]]
    assert shifted["p"] == log["p"] and shifted["comparison"]["paper"]["inside"]


def test_law_series_flags_a_flat_series_and_judges_the_prediction_with_its_band():
    flat = law_series(synthetic(lambda t: 2.5 + (t > 64), [8, 16, 32, 64, 128, 256]))
    assert flat["flat"]
    steps = law_series(synthetic(lambda t: 2.5 + 4 * (t > 64), [8, 16, 32, 64, 128, 256]))
    assert not steps["flat"]
    log = law_series(synthetic(lambda t: 40 + 60 * math.log(t), [16, 32, 64, 128]))
    band = log["comparison"]["paper"]["band"]
    assert all(lo <= hi for lo, hi in band) and "the intervals ± 1" in predictions(
        log["comparison"]["paper"]
    )
    assert law_series(synthetic(lambda t: 5 * t, [16, 32, 64]))["comparison"] is None


@pytest.mark.parametrize("law", [AFFINE_POLYLOG, POWER, LINEAR_LOG])
def test_vectorized_exponents_equal_the_laws_own_fits(law):
    rng = np.random.default_rng(3)
    Ts = [8.0, 16.0, 32.0, 64.0, 128.0, 256.0]
    rows = np.array([9, 11, 13, 16, 18, 20], dtype=float) + rng.integers(-2, 3, (300, 6))
    rows[5, 2] = np.inf
    fast = _rows_exponents(law, Ts, rows)
    slow = exponent_draws(law, Ts, rows)
    assert np.isnan(fast[5]) and np.allclose(fast, slow, equal_nan=True)


def off_identity(G: torch.Tensor) -> float:
    m = G.shape[-1]
    return float(torch.linalg.norm(G - torch.diagonal(G).mean() * torch.eye(m, dtype=G.dtype)))


@pytest.mark.parametrize("W_kind", ["identity", "random"])
def test_population_gradient_at_alpha_I_is_a_multiple_of_I(W_kind):
    """The symmetry behind the population solver: at W = αI the gradient has no component off
    I beyond Monte Carlo noise (measured by two independent halves); at a generic W it has."""
    W0 = 1.5 * torch.eye(M, dtype=torch.float64) if W_kind == "identity" else random_W(2)

    def gradient(key: str) -> torch.Tensor:
        W = W0.clone().requires_grad_(True)
        loss = sel.product_losses(W[None], *sel.draw(T, Q, M, 20000, 7, 1, (key,), "sphere"), D)
        return torch.autograd.grad(loss.mean(), W)[0]

    G1, G2 = gradient("a"), gradient("b")
    noise = float(torch.linalg.norm(G1 - G2)) / 2
    if W_kind == "identity":
        assert off_identity((G1 + G2) / 2) <= 1.5 * noise
    else:
        assert off_identity((G1 + G2) / 2) >= 5 * noise


def test_descent_stops_at_the_first_minimum_which_here_is_the_best():
    for T_, q, m in ((16, 2, 8), (64, 4, 32)):
        best = best_family_loss(T_, q, m, samples=1024)
        first = best_family_loss(T_, q, m, samples=1024, descent=True)
        assert first.alpha == pytest.approx(best.alpha, rel=1e-6)


def test_population_threshold_is_the_first_passing_probe_at_every_d():
    records = [sel.population_threshold(16, 2, d, 4, 0, samples=256, m_limit=64) for d in (2, 9)]
    assert records[0]["m_star"] == records[1]["m_star"] is not None
    rec = records[0]
    sizes, outcomes = probe_matrix(rec["probes"])
    assert rec["m_star"] == stats.first_passing(sizes, outcomes.mean(axis=0), sel.RATE)
    for p in rec["probes"]:
        assert p["outcomes"] == [int(r <= sel.TARGET) for r in p["ratios"]]
    np.testing.assert_allclose(records[0]["probes"][0]["ratios"], records[1]["probes"][0]["ratios"])
