"""B5.7 (SPEC Part G): the verdict on synthetic records (agreeing, contradicting, undecidable), its
error rates, a tiny end-to-end run, and the reduction it rests on (``train.full_w``) checked
against autograd on the full ``W`` and against Monte Carlo."""

from __future__ import annotations

import json

import numpy as np
import torch

from attnsep.exact.family import family_products
from attnsep.exact.products import selection_loss
from attnsep.experiments import select_full_w as exp
from attnsep.metrics import calibration, stats
from attnsep.train import full_w
from attnsep.train.selection import law_draws, law_terms

CONFIG = exp.config.Config()
FLOOR = {64: 0.428, 128: 0.255, 256: 0.153, 512: 0.091}
SCALE = {64: 0.3, 128: 0.21, 256: 0.13, 512: 0.08}
TINY = {
    "d": 2,
    "T": 4,
    "q": 1,
    "pe_dims": [8],
    "seeds": [0, 1],
    "samples": 64,
    "family_samples": 64,
    "curvature_samples": 32,
    "check_samples": 4,
    "steps": 50,
}


def records(ratio=1.0, kappa=0.3, content=60.0, seeds=4, noise=0.002, lr=0.05, seed=0):
    """One record per (m_p, seed): GD at ``ratio x`` the floor, curvatures ``kappa x L''``."""
    rng = np.random.default_rng(seed)
    out = []
    for m, floor in FLOOR.items():
        for s in range(seeds):
            z = rng.standard_normal(4)
            scale = SCALE[m]
            out.append(
                {
                    "pe_dim": m,
                    "seed": s,
                    "alpha": 4.0,
                    "steps": 100,
                    "rule": "converged",
                    "loss": floor * ratio * (1 + noise * z[0]),
                    "stderr": 0.001,
                    "family": floor,
                    "family_stderr": 0.001,
                    "family_alpha": 4.0,
                    "uniform": 10 * 17 / 60,
                    "lr_per_dim": lr,
                    "cos": 1.0,
                    "curvature": {
                        "scale": scale,
                        "symmetric": scale * kappa * (1 + 0.05 * z[1]),
                        "antisymmetric": scale * kappa * (1 + 0.05 * z[2]),
                        "content": scale * content * (1 + 0.05 * z[3]),
                    },
                    "check": {"columns": 0.0, "content": 1e-15, "content_plain": 5.0},
                    "path": "synthetic",
                }
            )
    return out


def judged(recs):
    claim = exp.verdict.verdict(recs, CONFIG)
    json.dumps(claim, allow_nan=False)
    assert claim["criterion"] == exp.verdict.CRITERION
    for e in claim["estimates"]:
        assert e["low"] <= e["value"] <= e["high"], e
    return claim


def test_gd_at_the_familys_best_on_a_minimum_is_reproduced():
    claim = judged(records())
    assert claim["verdict"] == stats.REPRODUCED, claim["reason"]
    assert "512" in claim["reason"]


def test_stalled_gd_or_a_saddle_is_not_reproduced():
    assert judged(records(ratio=1.8))["verdict"] == stats.NOT_REPRODUCED
    saddle = judged(records(kappa=-0.3))
    assert saddle["verdict"] == stats.NOT_REPRODUCED and "negative" in saddle["reason"]


def test_undecidable_runs_are_inconclusive():
    noisy = judged(records(noise=0.3))  # the ratio's interval reaches above 1.1
    assert noisy["verdict"] == stats.INCONCLUSIVE and "1.1" in noisy["reason"]
    few = judged(records(seeds=3))
    assert few["verdict"] == stats.INCONCLUSIVE and "seeds" in few["reason"]
    fast = judged(records(lr=0.5))  # rho = 0.5 x 60 on the content block
    assert fast["verdict"] == stats.INCONCLUSIVE and "unstable" in fast["reason"]
    broken = records()
    broken[0]["check"]["content"] = 1e-3
    assert "autograd" in judged(broken)["reason"]


def test_error_rates_on_a_small_simulation():
    laws = exp.calibration.hypotheses(records(noise=0.01), CONFIG)

    def decide(recs):
        return exp.verdict.verdict(recs, CONFIG)["verdict"]

    with stats.resampling(200):
        rates = calibration.error_rates(
            decide,
            lambda rng: laws.paper(CONFIG, rng),
            lambda rng: laws.rival(CONFIG, rng),
            simulations=30,
        )
    assert rates["power"] >= 0.8 and rates["false_pass"] <= 0.05, rates


def test_tiny_end_to_end(tmp_path):
    config = exp.EXPERIMENT.config("quick", **TINY)
    recs = [r for job in exp.run.split(config) for r in exp.run.run(job)]
    json.dumps(recs, allow_nan=False)
    claim = exp.verdict.verdict(recs, config)
    assert claim["verdict"] == stats.INCONCLUSIVE  # two seeds: too few by the criterion
    (path,) = exp.figure.figure(recs, config, tmp_path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert exp.run.work(config.model_dump()) > 0 and exp.run.peak(config.model_dump()) > 0


def test_mirrored_tokens_cancel_the_content_gradient_exactly():
    check = full_w.symmetry_check(2.0, 6, 2, 16, 3, samples=16, seed=1)
    assert check["columns"] == 0.0
    assert check["content"] < 1e-12
    assert check["content_plain"] > 1e-3  # without the mirror images: sampling noise


def test_population_gradient_at_alpha_identity_is_a_multiple_of_identity():
    """By rotation invariance the off-identity part of the sampled gradient is pure noise: its
    energy falls like 1 / samples (16 x the samples: about 1/16 of it)."""
    m, W = 32, 3.0 * torch.eye(32, dtype=torch.float64)[None]

    def off_energy(samples, seed):
        draws = law_draws(seed, range(1), ("test",), samples, 8, 2, m, "sphere")
        _, g, u = law_terms(W, draws, 4, "sphere")
        grad = (torch.bmm(g.transpose(-1, -2), u) / samples)[0]
        off = grad - torch.trace(grad) / m * torch.eye(m, dtype=torch.float64)
        return float(off.pow(2).sum())

    small = np.mean([off_energy(256, s) for s in range(4)])
    large = np.mean([off_energy(4096, s) for s in range(4)])
    assert 1 / 32 < large / small < 1 / 8


def test_scale_curvature_matches_autograd_second_derivative():
    T, q, m, d, alpha = 10, 2, 32, 4, 3.0
    curv = full_w.curvatures(alpha, T, q, m, d, samples=4096, seed=3)
    rng = np.random.default_rng(5)
    G = torch.from_numpy(np.concatenate(family_products(T, q, m, 1 << 15, rng), axis=1))
    a = torch.tensor(alpha, dtype=torch.float64, requires_grad=True)
    (first,) = torch.autograd.grad(selection_loss(a * G, q, d).mean(), a, create_graph=True)
    (second,) = torch.autograd.grad(first, a)
    assert abs(curv["scale"] / float(second) - 1) < 0.1
    assert curv["symmetric"] > 0 and curv["antisymmetric"] > 0 and curv["content"] > 0


def test_alpha_descent_reaches_the_first_minimum():
    T, q, m, d = 20, 3, 32, 10
    gd = full_w.alpha_descent(T, q, m, d, samples=2048, seed=0, lr_per_dim=0.5, steps=3000)
    assert gd.rule == "converged" and gd.path[0] == 0.0
    G = full_w.family_draw(T, q, m, 2048, 0, "descent")
    at = [full_w.loss_at(gd.alpha * f, T, q, m, d, G).mean() for f in (0.97, 1.0, 1.03)]
    assert at[1] <= min(at[0], at[2])
