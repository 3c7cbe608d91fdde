"""The B5.3 verdict on synthetic records: agreeing, contradicting and undecidable (SPEC B5.3,
Part D), plus the family's loss at a fixed ``alpha`` it draws beside the runs."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from attnsep.exact.family import best_family_loss
from attnsep.experiments import select_length as exp
from attnsep.experiments.select_common import family_loss_at
from attnsep.metrics import stats

CONFIG = exp.Config()
LENGTHS = [20, 40, 80, 160, 320]
FAMILY = dict(zip(LENGTHS, [0.153, 0.196, 0.243, 0.287, 0.34], strict=True))  # m_p = 256


def uniform(length: int) -> float:
    return 10 * (length - 3) / (3 * length)


def records(stochastic, fixed, seeds=4, noise=0.02, seed=0):
    """Per (mode, seed, T'): loss ``stochastic(T')`` / ``fixed(T')`` with relative ``noise``;
    the family's best per (seed, T') from ``FAMILY``."""
    rng = np.random.default_rng(seed)

    def jitter(x: float) -> float:
        return x * (1 + noise * rng.standard_normal())

    out = []
    for s in range(seeds):
        for pe, law in (("stochastic", stochastic), ("fixed", fixed)):
            out += [
                {
                    "pe": pe,
                    "seed": s,
                    "T": t,
                    "loss": jitter(law(t)),
                    "stderr": 0.01,
                    "path": "exact",
                    "uniform": uniform(t),
                    "cos": 0.99,
                }
                for t in LENGTHS
            ]
        out += [
            {
                "pe": "family",
                "seed": s,
                "T": t,
                "pe_dim": 256,
                "alpha": 4.0,
                "loss": jitter(FAMILY[t]),
                "stderr": 0.002,
                "uniform": uniform(t),
                "train_alpha": 4.0,
                "at_train_alpha": 2 * FAMILY[t],
            }
            for t in LENGTHS
        ]
    return out


def fails_ood(t: int) -> float:
    """Fixed PE: fits at T, near uniform beyond."""
    return 0.05 if t == 20 else 0.8 * uniform(t)


def judged(recs):
    claim = exp.verdict(recs, CONFIG)
    json.dumps(claim, allow_nan=False)  # plain, finite JSON
    assert claim["criterion"] == exp.CRITERION
    return claim


def test_stochastic_near_the_family_and_fixed_failing_is_reproduced():
    claim = judged(records(lambda t: 1.2 * FAMILY[t], fails_ood))
    assert claim["verdict"] == stats.REPRODUCED, claim["reason"]
    names = [e["name"] for e in claim["estimates"]]
    assert "stochastic / family's best (T'=320)" in names
    assert "no clear effect" in claim["measured"]
    ratio = next(e for e in claim["estimates"] if e["name"].startswith("fixed / stochastic"))
    assert ratio["low"] <= ratio["value"] <= ratio["high"]
    assert ratio["value"] == pytest.approx(0.05 / (1.2 * 0.153), rel=0.05)


def test_stochastic_failing_like_fixed_is_not_reproduced():
    claim = judged(records(fails_ood, fails_ood))
    assert claim["verdict"] == stats.NOT_REPRODUCED
    assert "2T" in claim["reason"]


def test_stochastic_inside_fixed_intervals_is_not_reproduced():
    both = lambda t: 0.3 * uniform(t)  # noqa: E731 - below half uniform at 2T, same as fixed
    claim = judged(records(both, both, noise=0.1))
    assert claim["verdict"] == stats.NOT_REPRODUCED
    assert "inside fixed PE's interval" in claim["reason"]


def test_stochastic_at_the_training_alpha_is_inconclusive():
    """A W that keeps the training length's alpha: far from the re-tuned family at 8T, 16T."""
    claim = judged(records(lambda t: 2 * FAMILY[t], fails_ood))
    assert claim["verdict"] == stats.INCONCLUSIVE
    assert "more seeds cannot decide" in claim["reason"]


@pytest.mark.parametrize(
    ("recs", "said"),
    [
        (records(lambda t: 1.2 * FAMILY[t], fails_ood, seeds=2), "at least 4 seeds"),
        (records(lambda t: 1.45 * FAMILY[t], fails_ood, noise=0.1), "more seeds would"),
    ],
)
def test_few_or_noisy_seeds_are_inconclusive(recs, said):
    claim = judged(recs)
    assert claim["verdict"] == stats.INCONCLUSIVE
    assert said in claim["reason"]


def test_family_loss_at_its_best_alpha_is_its_best_loss():
    best = best_family_loss(40, 3, 64, d=10, samples=4096, seed=2)
    mean, se = family_loss_at(best.alpha, 40, 3, 64, 10, 4096, seed=2)
    assert abs(mean - best.loss) < 4 * math.hypot(se, best.stderr)
    worse, _ = family_loss_at(best.alpha / 2, 40, 3, 64, 10, 4096, seed=2)
    assert worse > mean + 4 * se


def test_jobs_are_one_per_mode_and_seed():
    jobs = exp.split(CONFIG)
    assert len(jobs) == 2 * len(CONFIG.seeds)
    assert {(j.pes[0], j.seeds[0]) for j in jobs} == {
        (pe, s) for pe in CONFIG.pes for s in CONFIG.seeds
    }
