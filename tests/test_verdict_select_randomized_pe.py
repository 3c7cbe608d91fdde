"""B5.3d (the randomized-PE protocol, a finding): its numbers and intervals on constructed
records, a tiny run end to end, and its config's limits (SPEC Part G, item B5.3d)."""

from __future__ import annotations

import json
import math

import pytest

from attnsep.exact.selection_bounds import uniform_attention_loss
from attnsep.experiments import select_randomized_pe as exp
from attnsep.metrics import stats

CONFIG = exp.config.Config()
LENGTHS = [40, 60, 100, 200, 500]


def records(seeds=4):
    """Seed ``s``: stochastic loss = uniform x (0.2 + 0.01 s) x (T'/40)^0.3, the family 5% below
    it, fixed PE twice stochastic's."""
    out = []
    for s in range(seeds):
        for t in LENGTHS:
            u = float(uniform_attention_loss(t, 3, 10))
            stochastic = u * (0.2 + 0.01 * s) * (t / 40) ** 0.3
            base = {"seed": s, "T": t, "uniform": u, "alpha": 4.0 + 0.1 * s, "cos": 0.99}
            out.append(
                {**base, "pe": "stochastic", "loss": stochastic, "family": stochastic / 1.05}
            )
            out.append({**base, "pe": "fixed", "loss": 2 * stochastic})
    return out


def test_the_finding_reports_seed_means_with_their_intervals():
    claim = exp.verdict.verdict(records(), CONFIG)
    json.dumps(claim, allow_nan=False)
    assert claim["verdict"] == stats.FINDING and claim["criterion"] == exp.verdict.RULE
    by_name = {e["name"]: e for e in claim["estimates"]}
    for e in claim["estimates"]:
        assert e["low"] <= e["value"] <= e["high"], e
    ratios = [0.2, 0.21, 0.22, 0.23]  # at T' = 40 the loss / uniform per seed
    mean, se = stats.mean_se(ratios)
    e = by_name["stochastic PE loss / uniform (T'=40)"]
    assert e["value"] == pytest.approx(mean)
    assert e["high"] - e["value"] == pytest.approx(2 * se)
    assert by_name["fixed / stochastic (T'=500)"]["value"] == pytest.approx(2.0)
    over = by_name["stochastic / family at the trained alpha (T'=200)"]
    assert over["value"] == pytest.approx(1.05) and over["high"] == pytest.approx(1.05)
    assert by_name["stochastic PE trained alpha"]["value"] == pytest.approx(4.15)
    scale = (500 / 40) ** 0.3
    assert f"{mean * scale:.3g}" in claim["reason"]  # stochastic at T' = 500 leads the reason


def test_tiny_run_end_to_end(tmp_path):
    config = exp.EXPERIMENT.config(
        "quick",
        d=2,
        q=1,
        T=6,
        pe_dim=8,
        steps=10,
        eval_lengths=[6, 12, 30],
        eval_size=16,
        family_samples=64,
        seeds=[0, 1],
    )
    jobs = exp.run.split(config)
    assert len(jobs) == 4
    recs = [r for job in jobs for r in exp.run.run(job)]
    json.dumps(recs, allow_nan=False)
    assert {(r["pe"], r["T"]) for r in recs} == {
        (pe, t) for pe in ("stochastic", "fixed") for t in (6, 12, 30)
    }
    assert all(math.isfinite(r["family"]) for r in recs if r["pe"] == "stochastic")
    assert all(2 <= r["mean_train_length"] <= 6 for r in recs)
    claim = exp.verdict.verdict(recs, config)
    assert claim["verdict"] == stats.FINDING and claim["reason"]
    paths = exp.figure.figure(recs, config, tmp_path)
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert all(
        exp.run.work(job.model_dump()) > 0 and exp.run.peak(job.model_dump()) > 0 for job in jobs
    )


@pytest.mark.parametrize(
    ("override", "said"),
    [
        ({"shortest": 50}, "shortest must be in"),
        ({"shortest": 1}, "shortest must be in"),
        ({"eval_lengths": [2, 40]}, "eval_lengths must be >= q"),
        ({"eval_lengths": [100_000]}, "eval_lengths"),
        ({"pe_dim": 0}, "pe_dim"),
        ({"steps": 10**9}, "steps"),
    ],
)
def test_bad_configs_are_one_line(override, said):
    with pytest.raises(ValueError, match=said) as info:
        exp.EXPERIMENT.config("standard", **override)
    assert "\n" not in str(info.value)
