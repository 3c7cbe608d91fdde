"""B5.1b, the paper's own setting (SPEC Part E): its verdict on synthetic records — at the
floor, stalled above it with the scale learned, short of steps, too noisy — its error rates,
and one real job at a tiny width."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attnsep.experiments import select_convergence as exp
from attnsep.experiments.select_convergence import paper
from attnsep.metrics import calibration, stats

CONFIG = exp.config.Config(paper_widths=[128, 256, 512])
UNIFORM = 10 * 17 / 60
FLOOR = {128: 0.255, 256: 0.153, 512: 0.091}


def records(excess=1.02, alpha=0.99, noise=0.01, seeds=4, widths=FLOOR, seed=0):
    """Paper-setting records: SGD at ``excess x`` the floor, ``α`` at ``alpha x`` the family's."""
    rng = np.random.default_rng(seed)
    out = []
    for m in widths:
        for s in range(seeds):
            ratio = excess[m] if isinstance(excess, dict) else excess
            out.append(
                {
                    "role": paper.ROLE,
                    "pe_dim": m,
                    "seed": s,
                    "steps": 16 * m,
                    "loss": FLOOR[m] * ratio * (1 + noise * rng.standard_normal()),
                    "stderr": 0.01 * FLOOR[m],
                    "uniform": UNIFORM,
                    "train_loss": FLOOR[m],
                    "cos": 0.995,
                    "alpha": 4.0 * alpha,
                    "off_identity": 0.01,
                    "content_norm": 0.3,
                    "family": FLOOR[m] * (1 + 0.005 * rng.standard_normal()),
                    "family_alpha": 4.0,
                }
            )
    return out


def judged(recs):
    entry = paper.verdict(recs, CONFIG)
    json.dumps(entry, allow_nan=False)
    assert entry["claim"] == "B5.1b" and entry["criterion"] == paper.CRITERION
    assert entry["criterion_version"] == 2
    return entry


def test_sgd_at_the_floor_is_reproduced():
    entry = judged(records())
    assert entry["verdict"] == stats.REPRODUCED, entry["reason"]
    found = {e["name"]: e for e in entry["estimates"]}
    ratio = found["paper's setting: SGD / family's best (m_p=512)"]
    assert ratio["low"] <= ratio["value"] <= ratio["high"] < paper.NEAR
    assert ratio["value"] == pytest.approx(1.02, abs=0.02)  # 4 seeds, 1% and 0.5% noise
    assert "alpha / family's 0.99" in entry["measured"]


def test_the_ratio_is_b51s_statistic():
    """B5.1b's ratio and interval are B5.1's: seed means, a seed's pair resampled together."""
    recs = records(noise=0.04, seed=2)
    at = np.array([[r["loss"], r["family"]] for r in recs if r["pe_dim"] == 256])
    value, low, high = paper.ratio_to_family(at)
    assert value == pytest.approx(at[:, 0].mean() / at[:, 1].mean())
    assert low < value < high
    (row,) = [r for r in paper.summarize(recs) if r["pe_dim"] == 256]
    assert row["ratio"] == (value, low, high)
    b51 = [{**r, "role": None} for r in recs]  # the same numbers as B5.1 records
    (same,) = [r for r in exp.verdict.summarize(b51) if r["pe_dim"] == 256]
    assert same["ratio"] == row["ratio"]


def test_stalled_above_the_floor_with_the_scale_learned_is_not_reproduced():
    entry = judged(records(excess={128: 1.0, 256: 1.02, 512: 1.3}))
    assert entry["verdict"] == stats.NOT_REPRODUCED
    assert "m_p = [512]" in entry["reason"] and "noise holds it" in entry["reason"]


def test_above_the_floor_for_want_of_steps_is_inconclusive():
    entry = judged(records(excess=1.3, alpha=0.85))
    assert entry["verdict"] == stats.INCONCLUSIVE
    assert "more steps would decide" in entry["reason"]


def test_an_interval_across_the_tolerance_is_inconclusive():
    entry = judged(records(excess=1.09, noise=0.05))
    assert entry["verdict"] == stats.INCONCLUSIVE
    assert "more seeds would decide" in entry["reason"]


def test_too_few_seeds_is_inconclusive():
    entry = judged(records(seeds=3))
    assert entry["verdict"] == stats.INCONCLUSIVE and "needs 4 seeds" in entry["reason"]


def test_b5_1_ignores_the_paper_settings_records_and_carries_b5_1b_as_companion():
    from test_verdict_select_convergence import records as b51_records

    mixed = b51_records() + records(excess=1.5)
    with calibration.fitting():  # as pre-registration runs it: the companion's rates fitted
        claim = exp.verdict.verdict(mixed, CONFIG)
    companion = exp.verdict.verdict(mixed, CONFIG)["companions"][0]
    assert companion["calibration"] is None  # a judged run
    alone = exp.verdict.verdict(b51_records(), exp.config.Config())
    assert claim["verdict"] == alone["verdict"] == stats.REPRODUCED
    assert claim["measured"] == alone["measured"]
    (companion,) = claim["companions"]
    assert companion["claim"] == "B5.1b" and companion["verdict"] == stats.NOT_REPRODUCED
    assert companion["calibration"] is not None


def test_error_rates_separate_the_floor_from_a_stall():
    laws = paper.hypotheses(records(), CONFIG)
    rates = calibration.calibrate(paper.verdict, laws, CONFIG, [], 100, seed=0)
    assert rates["power"] >= 0.9 and rates["false_pass"] <= 0.05, rates


def test_split_gives_one_job_per_width_and_seed_of_each_part():
    config = exp.config.Config(pe_dims=[16], paper_widths=[16, 32], seeds=[0, 1])
    jobs = exp.run.split(config)
    assert [(j.pe_dims, j.paper_widths, j.seeds) for j in jobs] == [
        ([16], [], [0]),
        ([16], [], [1]),
        ([], [16], [0]),
        ([], [16], [1]),
        ([], [32], [0]),
        ([], [32], [1]),
    ]
    with pytest.raises(ValueError, match="both empty"):
        exp.config.Config(pe_dims=[], paper_widths=[])


def test_one_job_of_the_paper_setting_at_a_tiny_width():
    config = exp.config.Config(
        d=3,
        T=8,
        q=2,
        pe_dims=[],
        paper_widths=[16],
        seeds=[0],
        paper_eval_size=256,
        paper_steps_per_dim=8.0,
        paper_batch=64,
        family_samples=512,
    )
    (record,) = exp.run.run(config)
    assert record["role"] == paper.ROLE and record["steps"] == 128
    assert 0 < record["loss"] < 0.5 * record["uniform"] and record["cos"] > 0.9
    assert record["alpha"] > 0 and record["family_alpha"] > 0
    assert record["content_norm"] > 0 and 0 <= record["off_identity"] < 1
