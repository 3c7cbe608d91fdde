"""A7.5a (criterion version 4, SPEC A7.5, Part E, F) can pass and fail: the stuck share,
measured at a guard on ``d^4 (ln d)^2``, decides "not reproduced"; synthetic searches for each
outcome, and the error rates of the paper's law against a rival with a quarter stuck."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnsep.experiments import xor_samples
from attnsep.experiments.xor_samples import search as sample_search
from attnsep.metrics import calibration, stats

DS = [16, 32, 64, 128, 256]
CONFIG = xor_samples.config.Config(d_values=DS, seeds=128, n_max=2**40)


def searches(law, stuck_share, config=CONFIG, seed=0):
    """Real searches over synthetic replicas: a fifth fail the population step (and every
    empirical one), ``stuck_share`` of the others never succeed, the rest from ``law(d) * u``
    (``u`` uniform in ``[0.5, 1]``)."""
    out = []
    for d in config.d_values:
        rng = np.random.default_rng([seed, d])
        population = rng.random(config.seeds) >= 0.2
        need = law(d) * rng.uniform(0.5, 1.0, config.seeds)
        need[rng.random(config.seeds) < stuck_share] = math.inf

        def evaluate(n, need=need, population=population):
            return population & (need <= n)

        out.append(
            sample_search.search_record(evaluate, population, d, config, xor_samples.search.edge)
        )
    return out


def judged(recs, config=CONFIG):
    return xor_samples.verdict.bound_claim(
        sample_search.run_records(recs, "fixed", config.m), config
    )


def stuck_shares(claim):
    return {e["name"]: e["value"] for e in claim["estimates"] if e["name"].startswith("stuck rate")}


def test_a_small_stuck_share_is_reproduced():
    claim = judged(searches(lambda d: 600 * d, 0.03))
    assert claim["verdict"] == stats.REPRODUCED, claim["reason"]
    assert 0 < max(stuck_shares(claim).values()) < 0.1
    assert "criterion version 4" in claim["criterion"]


def test_a_stuck_share_of_0_3_is_not_reproduced():
    """n* of the others far below ``d^4``, as in the reproduced case; only the stuck share
    differs: 0.3 of the population successes fail at the guard ``>= d^4 (ln d)^2``."""
    claim = judged(searches(lambda d: 600 * d, 0.3))
    assert claim["verdict"] == stats.NOT_REPRODUCED, claim["reason"]
    assert "at d=16" in claim["reason"] and ">= d^4 (ln d)^2" in claim["reason"]
    assert all(0.2 < v < 0.4 for v in stuck_shares(claim).values())


def test_n_star_between_d4_and_the_guard_is_inconclusive():
    """Every replica needs 2-4 ``d^4``: none stuck, ``n*`` above ``d^4`` and below the guard."""
    recs = searches(lambda d: 4 * xor_samples.search.bound(d), 0.0)
    a = sample_search.analyse(recs, CONFIG)
    assert all(s["stuck"] == 0 for s in a["stuck"])
    assert all(
        xor_samples.search.bound(d) < n <= g
        for d, n, g in zip(a["d"], a["n"], a["guard"], strict=True)
    )
    claim = judged(recs)
    assert claim["verdict"] == stats.INCONCLUSIVE, claim["reason"]
    assert "upper end exceeds d^4" in claim["reason"]


def test_a_stuck_share_at_a_guard_below_the_line_is_inconclusive():
    """``n_max = 2^17``: the guard stops below ``d^4 (ln d)^2`` at every ``d`` (below ``d^4``
    from 32 on), so a stuck share of 0.3 there cannot refute the bound."""
    config = xor_samples.config.Config(d_values=DS, seeds=128, n_max=2**17)
    claim = judged(searches(lambda d: 20 * d, 0.3, config), config)
    assert claim["verdict"] == stats.INCONCLUSIVE, claim["reason"]
    assert "a guard that n_max stops below d^4 (ln d)^2" in claim["reason"]
    assert "larger n_max" in claim["reason"]


def test_the_error_rates_of_the_paper_and_the_rival():
    """Hypotheses fitted to a run with 2 of about 100 stuck per ``d``, 40 simulations per law:
    the paper's law passes (power >= 0.8) and the rival (a quarter stuck) does not (false pass
    <= 0.05; with true rates 0.95 and 0.01 either bound fails with probability below 0.05), and
    the rival is judged not reproduced (false fail of the paper <= 0.05 likewise)."""
    recs = sample_search.run_records(searches(lambda d: 600 * d, 0.02), "fixed", CONFIG.m)
    hyp = xor_samples.calibration.hypotheses(recs, CONFIG)
    assert "0.25 of the population successes stuck" in hyp.rival_law
    rates = calibration.calibrate(xor_samples.verdict.verdict, hyp, CONFIG, (), 40)
    assert rates["power"] >= 0.8 and rates["false_pass"] <= 0.05, rates
    assert rates["false_fail"] <= 0.05, rates
    rng = np.random.default_rng(1)
    with calibration.simulating():
        rival = [
            xor_samples.verdict.verdict(hyp.rival(CONFIG, rng), CONFIG)["verdict"] for _ in range(5)
        ]
    assert rival == [stats.NOT_REPRODUCED] * 5


@pytest.mark.parametrize("d, n_max, reaches", [(16, 2**22, True), (32, 2**22, False)])
def test_where_n_max_caps_the_guard(d, n_max, reaches):
    """The standard preset's exact-sampling sizes: at ``d = 16`` the guard ``2^19`` reaches
    ``d^4 (ln d)^2``; at ``d = 32`` ``n_max = 2^22`` stops it below ``2^23.6``."""
    config = xor_samples.config.Config(n_max=n_max)
    guard = sample_search.grid_n(sample_search.search_range(d, config, xor_samples.search.edge)[2])
    assert (guard >= xor_samples.search.edge(d)) == reaches
    standard = xor_samples.EXPERIMENT.config("standard")
    assert standard.n_max == n_max and not standard.surrogated(d)


def test_only_the_judged_searches_guard_the_line():
    """A tiny run at ``d = 8``: the fixed width's certified search (A7.5a's) has its guard at the
    first grid point above ``d^4 (ln d)^2 = 17,711``; the others (A7.5b's) at ``d^4 = 4096``."""
    config = xor_samples.config.Config(d_values=[8], seeds=4, n_max=2**16, test_samples=256)
    guards = {
        (r["width"], o): r[o]["n_guard"]
        for r in xor_samples.run.run(config)
        for o in ("certified", "test")
    }
    assert guards.pop(xor_samples.run.JUDGED) == sample_search.grid_n(29) == 23170
    assert set(guards.values()) == {8**4}
