"""The k-parity claim's verdict (beyond the papers) on synthetic records, for each of the three
outcomes, its calibration, plus its jobs and a tiny real run (SPEC A1 generalization, Part E)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from attnsep.experiments import xor_kparity as kp
from attnsep.metrics import calibration, stats

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


def bounded(d):
    return 2.5


def power(d):
    return 0.5 * d**0.8


def judged(recs, config=CONFIG):
    claim = kp.verdict(recs, config)
    json.dumps(claim, allow_nan=False)
    assert kp.EXPERIMENT.section == kp.SECTION == "beyond the papers"
    assert claim["criterion"].startswith("(version 2, SPEC Part E")
    return claim


def test_bounded_steps_are_reproduced():
    claim = judged(records(bounded, LARGE))
    assert claim["verdict"] == stats.REPRODUCED, claim["reason"]
    alpha = next(e for e in claim["estimates"] if e["name"] == "k=3: power exponent alpha")
    assert alpha["high"] < kp.RIVAL_ALPHA
    stars = [e for e in claim["estimates"] if e["name"].startswith("k=3: steps*")]
    assert len(stars) == len(LARGE) and all(e["high"] <= kp.STEPS_BOUND for e in stars)
    names = {e["name"] for e in claim["estimates"]}
    assert {"k=3: steps*(d=16)", "k=3: one-step rate (d=512)"} <= names


def test_power_law_steps_are_not_reproduced():
    claim = judged(records(power, LARGE))
    assert claim["verdict"] == stats.NOT_REPRODUCED, claim["reason"]
    assert "steps* grows with d" in claim["reason"]


def test_one_step_sufficing_at_every_d_is_not_reproduced():
    claim = judged(records(bounded, LARGE, one_rate=1.0))
    assert claim["verdict"] == stats.NOT_REPRODUCED, claim["reason"]
    assert "one step suffices" in claim["reason"]
    # one step at the largest d only is not the rival "one step suffices" (criterion changed:
    # version 1 judged the largest d's one-step rate alone)
    last = judged(records(bounded, LARGE, one_rate=lambda d: 1.0 if d == 512 else 0.2))
    assert "one step suffices" not in last["reason"]


def test_replicas_that_never_succeed_leave_it_inconclusive():
    claim = judged(records(bounded, LARGE, never={256: 0.6}))
    assert claim["verdict"] == stats.INCONCLUSIVE, claim["reason"]
    assert "upper end exceeds 4 (unreached at d=256" in claim["reason"]


def test_steps_above_the_bound_without_clear_growth_are_inconclusive():
    """``10 ln d`` steps: far above 4, and an exponent (about 0.23) whose interval is not clear
    of 0.25 in either direction."""
    claim = judged(records(lambda d: 10.0 * math.log(d), LARGE))
    assert claim["verdict"] == stats.INCONCLUSIVE, claim["reason"]
    assert "upper end exceeds 4" in claim["reason"]


def test_a_small_rise_within_the_bound_is_inconclusive():
    """steps* within the bound but rising from 2 to 3 or 4 over d = 16..512 (``(d/16)^0.3``
    before rounding up): the exponent's interval contains 0.25."""
    claim = judged(records(lambda d: (d / 16) ** 0.3, LARGE, seeds=32, one_rate=0.0))
    assert claim["verdict"] == stats.INCONCLUSIVE, claim["reason"]
    assert "contains 0.25" in claim["reason"]


def test_too_few_sizes_are_inconclusive():
    two = judged(records(bounded, [16, 32]))
    assert two["verdict"] == stats.INCONCLUSIVE and "at least 3 values of d" in two["reason"]


def test_every_k_must_agree():
    good = records(bounded, LARGE)
    assert judged(good)["verdict"] == stats.REPRODUCED
    assert judged(good + records(power, LARGE, k=4))["verdict"] == stats.NOT_REPRODUCED
    undecided = records(bounded, [16, 32], k=4)
    mixed = judged(good + undecided)
    assert mixed["verdict"] == stats.INCONCLUSIVE and mixed["reason"].startswith("k=4")


def test_steps_star_is_the_best_grid_point_and_its_bootstrap():
    (rec,) = records(bounded, [64], never={64: 0.1})
    p = kp.point(rec)
    needed = sorted(math.inf if row[0] is None else row[0] for row in rec["steps"])
    assert p["steps"] == stats.median(needed) and p["best_exponent"] == -2.0
    assert p["low"] <= p["steps"] <= p["high"]
    assert p["one_step"][0] == pytest.approx(np.mean([row[0] for row in rec["one_step"]]))
    # the vectorized draws are exactly stats.bootstrap's
    matrix = kp.steps_matrix(rec)
    with stats.resampling(100):
        slow = stats.bootstrap([matrix], lambda draw: kp.best_steps(draw[0]), seed=64)
        np.testing.assert_array_equal(kp.steps_draws(matrix, seed=64), slow)


def test_the_old_defect_is_gone():
    """The standard run's k=3 series (steps* 3, 2, 3, 2, 2, 2, 2 with zero-width or one-step
    intervals): version 1's held-out polylog prediction (about 2.5) missed the integer
    intervals, so it said "neither law predicts"; the bound test reproduces it."""
    levels = {16: 3, 32: 2, 64: 3, 128: 2, 256: 2, 512: 2, 1024: 2}
    recs = [r for d, s in levels.items() for r in records(lambda d, s=s: s, [d], seed=d)]
    points = kp.analyse(recs)[3]["points"]
    ds = [p["d"] for p in points]
    old = stats.compare_laws(
        stats.POLYLOG,
        stats.POWER,
        ds,
        [p["steps"] for p in points],
        [p["low"] for p in points],
        [p["high"] for p in points],
        0.25,
    )
    assert old["decided"] != "paper"
    assert judged(recs)["verdict"] == stats.REPRODUCED


# --- calibration (SPEC Part E) ---------------------------------------------------------------

STANDARD = kp.EXPERIMENT.config("standard")
SHARES = {1: 0.35, 2: 0.25, 3: 0.15, 4: 0.05, None: 0.2}
"""Steps to success at the best step size, as the standard run's k=3 replicas spread them (one
step in about a third, two or three in about two fifths, a fifth unreached in the budget)."""


def standard_records(seed=0):
    """Records at the standard preset's k's, sizes, seeds and step-size grid, steps* constant
    in d with the spread ``SHARES``; the other step sizes slower (or stuck in 30%)."""
    rng = np.random.default_rng(seed)
    levels, shares = list(SHARES), np.array(list(SHARES.values()))
    grid = STANDARD.eta_exponents
    out = []
    for s in STANDARD.series:
        for d in s.d_values:
            steps = []
            for i in rng.choice(len(levels), size=STANDARD.seeds, p=shares):
                first = levels[i]
                steps.append(
                    [
                        first
                        if g == 1 or first is None
                        else (None if rng.random() < 0.3 else first * (1 + abs(g - 1)))
                        for g in range(len(grid))
                    ]
                )
            out.append(
                {
                    "k": s.k,
                    "d": d,
                    "m": STANDARD.m,
                    "role": "d",
                    "seeds": STANDARD.seeds,
                    "budget": STANDARD.budget,
                    "eta_exponents": grid,
                    "steps": steps,
                    "one_step": [[v == 1 for v in row] for row in steps],
                    "collapsed": [[v is None for v in row] for row in steps],
                }
            )
    return out


def test_calibration_at_the_standard_sizes():
    """40 simulations per law: power > 0.5 and a false pass <= 0.2 (a true rate of 0.05 gives
    more than 8 of 40 with probability below 1e-3), against both rivals."""
    recs = standard_records()
    growth = calibration.calibrate(kp.verdict, kp.hypotheses(recs, STANDARD), STANDARD, (), 40)
    assert growth["power"] > 0.5 and growth["false_pass"] <= 0.2, growth
    assert "d / d_min" in growth["rival_law"] and "pooled over d" in growth["paper_law"]
    one = kp.one_step_hypotheses(recs, STANDARD)
    rival = [kp.verdict(one.rival(STANDARD, np.random.default_rng(i)), STANDARD) for i in range(5)]
    assert all(c["verdict"] == stats.NOT_REPRODUCED for c in rival)
    assert all("one step suffices" in c["reason"] for c in rival)


def test_simulated_records_follow_their_law():
    recs = standard_records()
    hyp = kp.hypotheses(recs, STANDARD)
    rng = np.random.default_rng(1)
    sizes = [(r["k"], r["d"]) for r in recs]
    paper, rival = hyp.paper(STANDARD, rng), hyp.rival(STANDARD, rng)
    assert [(r["k"], r["d"]) for r in paper] == sizes == [(r["k"], r["d"]) for r in rival]
    json.dumps(paper + rival, allow_nan=False)
    stars = {(r["k"], r["d"]): kp.point(r)["steps"] for r in rival}
    # the rival starts at the smallest d's level and grows like d^0.25: 64^0.25 = 2.8 at 1024
    assert stars[(3, 1024)] / stars[(3, 16)] == pytest.approx(64**0.25, rel=0.35)


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


def test_the_init_reaches_the_runs_and_k2_keeps_the_antisymmetric_start():
    """``init`` (SPEC A2's *choice* for ``k >= 3``) is used for ``k >= 3`` and named in each
    record; ``k = 2`` starts anti-symmetric whatever it says. Fixed seeds: a difference seen
    once is seen every time."""
    assert kp.Config().init == "antisymmetric"
    series = [{"k": 2, "d_values": [8]}, {"k": 3, "d_values": [8]}]
    common = dict(series=series, m=8, seeds=16, eta_exponents=[-4.0], budget=8)
    frame_config = kp.Config(**common, init="orthogonal")
    simplex, frame = kp.run(kp.Config(**common)), kp.run(frame_config)
    assert [r["init"] for r in simplex] == ["antisymmetric", "antisymmetric"]
    assert [r["init"] for r in frame] == ["antisymmetric", "orthogonal"]
    assert frame[0] == simplex[0]
    assert frame[1]["steps"] != simplex[1]["steps"]
    assert "orthogonal start at k >= 3" in kp.verdict(frame, frame_config)["criterion"]


@pytest.mark.parametrize("init", ["antisymmetric", "orthogonal"])
def test_starts_with_distinct_preferences_rarely_collapse(init):
    """What the choice of start rests on (``Config``'s docstring), on a small real run (k = 3,
    d = 32, 128 replicas, ``eta = 2^-4 d^k ln d``, 30 steps): replicas whose heads first prefer
    distinct support bits collapse less often than the others, by more than 3 standard errors
    (measured: 2 of 70 against 25 of 58 for the simplex, 4 of 36 against 33 of 92 for the
    frame, 5.9 and 3.4 standard errors)."""
    import torch

    from attnsep.configs import XorTrainConfig
    from attnsep.metrics.parity import support_mass
    from attnsep.train.xor_train import initial_state

    d, seeds = 32, 128
    config = kp.Config(
        series=[{"k": 3, "d_values": [d]}], seeds=seeds, eta_exponents=[-4.0], budget=30, init=init
    )
    _, _, fold = kp.descend(3, d, config.m, config)
    start = XorTrainConfig(d=d, m=config.m, k=3, seeds=seeds, init=init, device="cpu")
    model, support, theta = initial_state(start, "cpu", torch.float64)
    top = support_mass(model.weights(theta), support).argmax(dim=2).sort(dim=1).values
    distinct = (top[:, 1:] != top[:, :-1]).all(dim=1).numpy()
    fold = np.array([row[0] for row in fold], dtype=float)
    a, b = fold[distinct], fold[~distinct]
    se = math.sqrt(a.mean() * (1 - a.mean()) / len(a) + b.mean() * (1 - b.mean()) / len(b))
    assert b.mean() - a.mean() > 3 * se, (a.sum(), len(a), b.sum(), len(b))
