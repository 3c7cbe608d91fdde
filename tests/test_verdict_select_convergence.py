"""The B5.1 verdict on synthetic records: agreeing, contradicting and undecidable (SPEC B5.1,
Part D), plus the width-scaled training setup it runs."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attnsep.experiments import select_convergence as exp
from attnsep.experiments.select_common import evaluation_loss, seed_mean
from attnsep.metrics import stats

CONFIG = exp.Config()
UNIFORM = 10 * 17 / 60  # d (T - q) / (q T) at d = 10, T = 20, q = 3
FLOOR = {128: 0.255, 256: 0.153, 512: 0.091}  # best W = alpha I (exact/family.py)


def records(floor=FLOOR, excess=1.02, noise=0.01, cos=0.995, seeds=4, seed=0):
    """One record per (m_p, seed): SGD at ``excess x`` the floor, both with relative ``noise``."""
    rng = np.random.default_rng(seed)
    out = []
    for m, best in floor.items():
        for s in range(seeds):
            out.append(
                {
                    "pe_dim": m,
                    "seed": s,
                    "loss": best * excess * (1 + noise * rng.standard_normal()),
                    "stderr": 0.01 * best,
                    "path": "exact",
                    "train_loss": best,
                    "cos": cos,
                    "uniform": UNIFORM,
                    "family": best * (1 + 0.01 * rng.standard_normal()),
                    "family_stderr": 0.01 * best,
                    "family_alpha": 4.0,
                }
            )
    return out


def judged(recs):
    claim = exp.verdict(recs, CONFIG)
    json.dumps(claim, allow_nan=False)  # plain, finite JSON
    assert claim["criterion"] == exp.CRITERION
    return claim


def test_sgd_at_a_falling_floor_is_reproduced():
    claim = judged(records())
    assert claim["verdict"] == stats.REPRODUCED, claim["reason"]
    names = [e["name"] for e in claim["estimates"]]
    assert "SGD / family's best (m_p=512)" in names and "SGD loss / uniform (m_p=512)" in names
    ratio = next(e for e in claim["estimates"] if e["name"] == "SGD / family's best (m_p=256)")
    assert ratio["low"] < 1.02 < ratio["high"] < exp.NEAR


def test_a_floor_that_does_not_fall_is_not_reproduced():
    claim = judged(records(floor={128: 0.1, 256: 0.1, 512: 0.1}))
    assert claim["verdict"] == stats.NOT_REPRODUCED
    assert "does not fall" in claim["reason"]


def test_sgd_far_above_the_floor_is_not_reproduced():
    claim = judged(records(excess=1.5))
    assert claim["verdict"] == stats.NOT_REPRODUCED
    assert "more than 1.1x above" in claim["reason"]


def test_noisy_sgd_is_inconclusive():
    claim = judged(records(excess=1.05, noise=0.15, seed=3))
    assert claim["verdict"] == stats.INCONCLUSIVE
    assert "more steps or seeds" in claim["reason"]


@pytest.mark.parametrize(
    ("recs", "said"),
    [
        (records(seeds=2), "4 seeds"),
        (records(floor={128: 0.255}), "2 widths"),
        (records(cos=0.97), "cos(W, W*) < 0.98"),
        (records(floor={128: 0.4, 256: 0.25}), "larger m_p"),
    ],
)
def test_too_few_seeds_misaligned_or_too_narrow_is_inconclusive(recs, said):
    claim = judged(recs)
    assert claim["verdict"] == stats.INCONCLUSIVE
    assert said in claim["reason"]


def test_seed_mean_is_the_stats_mean_and_two_standard_errors():
    values = [0.1, 0.12, 0.11, 0.13]
    mean, se = stats.mean_se(values)
    assert seed_mean(values) == pytest.approx(
        {"mean": mean, "se": se, "low": mean - 2 * se, "high": mean + 2 * se}
    )


def test_evaluation_uses_the_exact_loss_when_there_is_one():
    row = {"loss": 1.0, "stderr": 0.1, "exact": 0.9, "exact_stderr": 0.01}
    assert evaluation_loss(row) == (0.9, 0.01, "exact")
    assert evaluation_loss({**row, "exact": None}) == (1.0, 0.1, "sampled")


def test_rate_and_batch_scale_with_the_width():
    config = exp.Config(batch_per_dim=4.0, lr_per_dim=0.1)
    small, large = config.training(128, 0), config.training(512, 1)
    assert (small.batch, large.batch) == (512, 2048)
    assert (small.lr, large.lr) == pytest.approx((12.8, 51.2))
    assert large.trainable == "position" and large.objective == "population"
    assert config.training(128, 0, "fixed", 40).lr == pytest.approx(0.1 * config.T)
    assert [len(exp.split(CONFIG)), exp.split(CONFIG)[0].pe_dims] == [12, [128]]


def test_the_papers_full_w_by_sgd_is_evaluated_by_sampling():
    config = exp.Config(
        d=2,
        T=4,
        q=1,
        pe_dims=[8],
        seeds=[0],
        trainable="full",
        objective="sgd",
        steps=5,
        lr_per_dim=0.05,
        eval_size=16,
        family_samples=64,
    )
    (record,) = exp.run(config)
    assert record["path"] == "sampled" and record["loss"] > 0
