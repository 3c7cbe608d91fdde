"""The k-parity claim's verdict (beyond the papers) on synthetic records, for each of the three
outcomes, plus its jobs and a tiny real run (SPEC A1 generalization, Part D)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from attnsep.experiments import xor_kparity as kp
from attnsep.metrics import stats

CONFIG = kp.Config(seeds=64, budget=400, eta_exponents=[-2.0, 0.0])
LARGE = [16, 32, 64, 128, 256, 512]


def records(law, ds, k=3, seeds=64, one_rate=0.2, never=None, seed=0):
    """Synthetic jobs: replica ``r`` needs ``ceil(law(d) * u_r)`` steps at the first grid point
    (``u_r`` uniform in [0.8, 1.2], the same at every ``d``) and twice that at the second; a
    share ``one_rate`` succeeds after one step at the first; ``never[d]`` of them never do."""
    out = []
    for d in ds:
        rng = np.random.default_rng(seed)
        need = np.ceil(law(d) * rng.uniform(0.8, 1.2, seeds)).astype(int)
        share = one_rate(d) if callable(one_rate) else one_rate
        one = np.arange(seeds) < round(share * seeds)
        lost = rng.random(seeds) < (never or {}).get(d, 0.0)
        steps, ones = [], []
        for r in range(seeds):
            first = None if lost[r] else (1 if one[r] else int(need[r]))
            steps.append([first, None if first is None else 2 * first])
            ones.append([bool(one[r] and not lost[r]), False])
        out.append(
            {
                "k": k,
                "d": d,
                "m": 32,
                "role": "d",
                "seeds": seeds,
                "budget": 400,
                "eta_exponents": [-2.0, 0.0],
                "steps": steps,
                "one_step": ones,
                "collapsed": [[bool(lost[r]), False] for r in range(seeds)],
            }
        )
    return out


def polylog(d):
    return 10.0 * math.log(d)


def power(d):
    return 0.5 * d**0.8


def judged(recs):
    claim = kp.verdict(recs, CONFIG)
    json.dumps(claim, allow_nan=False)
    assert kp.EXPERIMENT.section == kp.SECTION == "beyond the papers"
    assert claim["criterion"].startswith("(written before any number was seen)")
    return claim


def test_polylog_steps_and_a_failing_first_step_are_reproduced():
    claim = judged(records(polylog, LARGE))
    assert claim["verdict"] == stats.REPRODUCED, claim["reason"]
    assert "-> paper" in claim["measured"]
    alpha = next(e for e in claim["estimates"] if e["name"] == "k=3: power exponent alpha")
    assert alpha["low"] < 0.5
    names = {e["name"] for e in claim["estimates"]}
    assert {"k=3: steps*(d=16)", "k=3: one-step rate (d=512)"} <= names


def test_power_law_steps_are_not_reproduced():
    claim = judged(records(power, LARGE))
    assert claim["verdict"] == stats.NOT_REPRODUCED, claim["reason"]
    assert "grow like a power of d" in claim["reason"]


def test_one_step_sufficing_at_the_largest_d_is_not_reproduced():
    claim = judged(records(polylog, LARGE, one_rate=lambda d: 1.0 if d == 512 else 0.2))
    assert claim["verdict"] == stats.NOT_REPRODUCED, claim["reason"]
    assert "one step suffices at d=512" in claim["reason"]


def test_replicas_that_never_succeed_leave_it_inconclusive():
    claim = judged(records(polylog, LARGE, never={256: 0.6}))
    assert claim["verdict"] == stats.INCONCLUSIVE, claim["reason"]
    assert "no finite upper bound at d=[256]" in claim["reason"]


def test_a_one_step_rate_near_the_target_is_inconclusive():
    claim = judged(records(polylog, LARGE, one_rate=lambda d: 0.9 if d == 64 else 0.2))
    assert claim["verdict"] == stats.INCONCLUSIVE, claim["reason"]
    assert "more seeds would decide" in claim["reason"]


def test_too_few_sizes_or_seeds_are_inconclusive():
    two = judged(records(polylog, [16, 32]))
    assert two["verdict"] == stats.INCONCLUSIVE and "at least 3 values of d" in two["reason"]
    noisy = judged(records(polylog, [16, 32, 64, 128], seeds=6))
    assert noisy["verdict"] == stats.INCONCLUSIVE, noisy["reason"]


def test_every_k_must_agree():
    good = records(polylog, LARGE)
    assert judged(good + records(power, LARGE, k=4))["verdict"] == stats.NOT_REPRODUCED
    undecided = records(polylog, [16, 32], k=4)
    mixed = judged(good + undecided)
    assert mixed["verdict"] == stats.INCONCLUSIVE and mixed["reason"].startswith("k=4")


def test_steps_star_is_the_best_grid_point_and_its_bootstrap():
    (rec,) = records(polylog, [64])
    p = kp.point(rec)
    needed = sorted(row[0] for row in rec["steps"])
    assert p["steps"] == stats.median(needed) and p["best_exponent"] == -2.0
    assert p["low"] <= p["steps"] <= p["high"]
    assert p["one_step"][0] == pytest.approx(np.mean([row[0] for row in rec["one_step"]]))


def test_jobs_split_and_a_tiny_run(tmp_path):
    config = kp.Config(
        series=[{"k": 3, "d_values": [8, 16, 32]}],
        m_values=[4],
        width_k=3,
        width_d=16,
        m=8,
        seeds=4,
        eta_exponents=[-2.0, 0.0],
        budget=6,
    )
    assert kp.jobs(config) == [(3, 8, 8, "d"), (3, 16, 8, "d"), (3, 32, 8, "d"), (3, 16, 4, "m")]
    parts = kp.split(config)
    assert [kp.jobs(p) for p in parts] == [[j] for j in kp.jobs(config)]
    recs = [r for part in parts for r in kp.run(part)]
    assert recs == kp.run(config)  # a job's records do not depend on the split
    json.dumps(recs, allow_nan=False)
    for r in recs:
        assert len(r["steps"]) == 4 and all(len(row) == 2 for row in r["steps"])
        assert all(s is None or 0 <= s <= 6 for row in r["steps"] for s in row)
    claim = kp.verdict(recs, config)
    assert claim["verdict"] in stats.OUTCOMES
    assert "m=4" in claim["measured"]
    paths = kp.figure(recs, config, tmp_path)
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in paths)
    for preset in ("quick", "standard", "full"):
        kp.EXPERIMENT.config(preset)
