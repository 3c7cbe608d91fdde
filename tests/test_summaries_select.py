"""The short summaries of the selection experiments' verdicts (B5.1 to B5.7): per branch of each
verdict, the deciding fact with its number, within ``stats.SUMMARY_CHARS`` and drawn from the
reason or the measured text (SPEC Part F)."""

from __future__ import annotations

import re

import pytest

import test_verdict_select_convergence as b51
import test_verdict_select_convergence_paper as b51b
import test_verdict_select_fixed_pe as b56
import test_verdict_select_full_w as b57
import test_verdict_select_length as b53
import test_verdict_select_randomized_pe as b53d
import test_verdict_select_width as b52
import test_verdict_select_width_qd as b55
from attnsep.metrics import calibration, stats

NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[+-]\d+)?")


def summary(claim: dict, verdict: str, *said: str) -> str:
    """``claim``'s summary, checked: ``verdict``, at most 60 characters on one line without a
    final full stop, holding each of ``said``, every number in it one of the reason's, the
    measured text's or the criterion's."""
    text = claim["summary"]
    assert claim["verdict"] == verdict, claim["reason"]
    assert 0 < len(text) <= stats.SUMMARY_CHARS and "\n" not in text and not text.endswith(".")
    for words in said:
        assert words in text, text
    source = " ".join((claim["reason"], claim["measured"], claim["criterion"]))
    shown = set(NUMBER.findall(source))
    assert set(NUMBER.findall(text)) <= shown, (text, claim["reason"])
    return text


def test_fitting_takes_the_first_short_enough_text():
    long = "x" * 61
    assert stats.fitting(long, "short", "shorter") == "short"
    assert len(stats.fitting(long, "word " * 20)) <= stats.SUMMARY_CHARS  # the last one, clipped


# --- B5.1 and B5.1b ------------------------------------------------------------------------------


def test_b51_summaries():
    def judged(recs, config=b51.CONFIG):
        return b51.exp.verdict.verdict(recs, config)

    assert summary(judged(b51.records()), stats.REPRODUCED) == (
        "GD within 1.1x of the family's best to m_p=512; worst 1.02"
    )
    far = judged(b51.records(excess=1.5))
    summary(far, stats.NOT_REPRODUCED, "GD >= 1.49x the family's best at m_p=128")
    wide = judged(b51.records(excess=1.05, noise=0.15, seed=3))
    summary(wide, stats.INCONCLUSIVE, "spans 1.1 at m_p=128")
    tilted = judged(b51.records(cos=0.97))
    assert summary(tilted, stats.INCONCLUSIVE) == "cos(W, W*) < 0.98 on a seed at m_p=128"
    few = judged(b51.records(seeds=2))
    assert summary(few, stats.INCONCLUSIVE) == "needs 4 seeds per width, got 2"
    assert judged([], b51.exp.config.Config())["summary"] == "no B5.1 records (pe_dims empty)"


def test_b51b_summaries():
    def judged(**kwargs):
        return b51b.paper.verdict(b51b.records(**kwargs), b51b.CONFIG)

    assert summary(judged(), stats.REPRODUCED) == (
        "SGD within 1.1x of the family's best to m_p=512; worst 1.02"
    )
    stalled = judged(excess={128: 1.0, 256: 1.02, 512: 1.3})
    summary(stalled, stats.NOT_REPRODUCED, "at m_p=512, alpha learned", "SGD >= 1.29x")
    short = judged(excess=1.3, alpha=0.85)
    summary(short, stats.INCONCLUSIVE, "alpha short: more steps")
    summary(judged(excess=1.09, noise=0.05), stats.INCONCLUSIVE, "spans 1.1")
    assert summary(judged(seeds=3), stats.INCONCLUSIVE) == "needs 4 seeds per width, got 3"


# --- B5.2 and B5.5 -------------------------------------------------------------------------------


def test_b52_summaries():
    polylog = b52.judged(b52.records(b52.polylog_law, b52.STANDARD))
    summary(polylog, stats.REPRODUCED, "both rules side with (ln T)^p")
    power = b52.judged(b52.records(b52.power_law, b52.STANDARD))
    summary(power, stats.NOT_REPRODUCED, "grows like T^alpha", "3 of 3 series")
    Ts = [32, 64, 128]
    few = b52.judged(b52.records(b52.polylog_law, Ts), b52.select_width.config.Config(T_values=Ts))
    assert summary(few, stats.INCONCLUSIVE) == "only 3 values of T; the growth rules need 4"
    config = b52.select_width.config.Config(T_values=b52.STANDARD, q_values=[2])
    unreached = b52.judged(b52.records(b52.power_law, b52.STANDARD, qs=(2,), limit=512), config)
    summary(unreached, stats.INCONCLUSIVE, "not reached at q=2, d=8")
    with calibration.simulating():
        simulated = b52.judged(b52.records(b52.polylog_law, Ts), b52.select_width.config.Config())
    assert simulated["summary"] == "simulated"


def test_b55_summaries():
    linear = b55.judged(b55.records(lambda d, q: 3 + 4 * q))
    summary(linear, stats.REPRODUCED, "< 0.25; linear in q predicts q=8")
    wide = b55.judged(b55.records(lambda d, q: (3 + 4 * q) * d / 8))
    summary(wide, stats.NOT_REPRODUCED, ">= 0.5: width grows with d")
    square = b55.judged(b55.records(lambda d, q: 2 * q * q))
    assert summary(square, stats.NOT_REPRODUCED) == "a + c q^2 predicts q=8 better"
    between = b55.judged(b55.records(lambda d, q: (3 + 4 * q) * (d / 8) ** 0.37))
    summary(between, stats.INCONCLUSIVE, "d-exponent 0.377", "undecided")
    qs = (2, 4)
    few = b55.judged(b55.records(lambda d, q: 3 + 4 * q, qs=qs), b55.config(qs=qs))
    assert summary(few, stats.INCONCLUSIVE) == "too few q's (3 needed)"
    missing = b55.judged(b55.records(lambda d, q: 3 + 4 * q if d < 64 else 5000, limit=512))
    summary(missing, stats.INCONCLUSIVE, "m_p* not reached at", "(d=64, q=2)")
    with calibration.simulating():
        simulated = b55.judged(b55.records(lambda d, q: 3 + 4 * q))
    assert simulated["summary"] == "simulated"


# --- B5.3, B5.3b, B5.3c and B5.3d ----------------------------------------------------------------


def test_b53_summaries():
    def judged(recs):
        return b53.exp.verdict.verdict(recs, b53.CONFIG)

    passing = judged(b53.records(b53.near_trained, b53.fails_ood))
    summary(passing, stats.REPRODUCED, "stochastic PE <= 0.292x uniform to 8T", "fixed PE >=")
    failing = judged(b53.records(b53.fails_ood, b53.fails_ood))
    summary(failing, stats.NOT_REPRODUCED, "uniform at 2T (>= 0.5)")
    wider = judged(
        b53.records(lambda t: 2 * b53.AT_TRAIN[t] if t > 20 else b53.AT_TRAIN[t], b53.fails_ood)
    )
    assert summary(wider, stats.INCONCLUSIVE) == (
        "stochastic PE above 0.5x uniform at T'=160: larger m_p"
    )
    across = judged(b53.records(b53.near_trained, lambda t: 0.5 * b53.uniform(t), noise=0.1))
    summary(across, stats.INCONCLUSIVE, "fixed PE's interval reaches below 0.5x uniform")
    few = judged(b53.records(b53.near_trained, b53.fails_ood, seeds=2))
    assert summary(few, stats.INCONCLUSIVE) == "needs 4 seeds per PE mode, got 2"


@pytest.mark.parametrize(
    ("converge", "verdict", "said"),
    [
        ({"stochastic": 60, "fixed": 66}, stats.REPRODUCED, "the steps, inside [0.5, 2]"),
        ({"stochastic": 60, "fixed": 300}, stats.NOT_REPRODUCED, "fixed PE needs 4.55x"),
        ({"stochastic": 200, "fixed": 40}, stats.NOT_REPRODUCED, "fixed PE needs 0.218x"),
        ({"stochastic": 60, "fixed": 120}, stats.INCONCLUSIVE, "the steps, across 2"),
    ],
)
def test_b53b_summaries(converge, verdict, said):
    recs = b53.records(b53.near_trained, b53.fails_ood, converge=converge, noise=0.05)
    summary(b53.in_distribution.verdict(recs, b53.CONFIG), verdict, said)


def test_b53b_few_curves():
    recs = b53.records(b53.near_trained, b53.fails_ood, seeds=3)
    few = b53.in_distribution.verdict(recs, b53.CONFIG)
    assert summary(few, stats.INCONCLUSIVE) == "needs 4 seeds' curves per PE mode, got 3"


def test_b53c_summaries():
    def judged(recs):
        return b53.exp.corollary.verdict(recs, b53.COROLLARY)

    falling = judged(b53.corollary_records())
    summary(falling, stats.REPRODUCED, "the loss at 4T falls with m_p: b = -0.552")
    rising = judged(b53.corollary_records(lambda w: 1.5 * (w / 32) ** 0.15))
    summary(rising, stats.NOT_REPRODUCED, "the loss at 4T does not fall with m_p")
    summary(judged(b53.corollary_records(lambda w: 1.5)), stats.INCONCLUSIVE, ">= 0")
    far = judged(b53.corollary_records(lambda w: 2 * b53.FAMILY_4T[w]))
    assert summary(far, stats.INCONCLUSIVE) == "stochastic PE > 1.5x the family at m_p=32"
    few = judged(b53.corollary_records(widths=[64, 256]))
    assert summary(few, stats.INCONCLUSIVE) == "needs 3 widths x 4 seeds; got 2 widths, 8 seeds"


def test_b53d_summary():
    claim = b53d.exp.verdict.verdict(b53d.records(), b53d.CONFIG)
    assert summary(claim, stats.FINDING) == (
        "at T' = 500: stochastic PE 0.459x, fixed PE 0.917x uniform"
    )
    assert b53d.exp.verdict.verdict([], b53d.CONFIG)["summary"] == "no test length was measured"


# --- B5.6 and B5.7 -------------------------------------------------------------------------------


def test_b56_summaries():
    fixed, stochastic = b56.FIXED, b56.STOCHASTIC
    assert summary(b56.judge(b56.records()), stats.REPRODUCED) == (
        "fixed PE fits at T (0.00782 x uniform), fails at 2T (0.62)"
    )
    general = b56.judge(b56.records({**fixed, 2: 0.3, 4: 0.4, 8: 0.5}))
    summary(general, stats.NOT_REPRODUCED, "fixed PE generalizes: 0.3", "at 2T")
    unfit = b56.judge(b56.records({**fixed, 1: 0.7}))
    summary(unfit, stats.NOT_REPRODUCED, "fixed PE does not fit: 0.684")
    better = b56.judge(b56.records(fixed, {**stochastic, 4: 0.95}))
    summary(better, stats.NOT_REPRODUCED, "fixed PE beats stochastic at 4T: 0.751")
    across = b56.judge(b56.records(fixed={**fixed, 2: 0.52}, noise=0.3))
    summary(across, stats.INCONCLUSIVE, "reaches below 0.5 x uniform at T'=40")
    loose = b56.judge(b56.records(fixed={**fixed, 1: 0.12}))
    summary(loose, stats.INCONCLUSIVE, "fixed PE at T 0.117 x uniform, upper end > 0.1")
    few = b56.judge(b56.records(seeds=2))
    assert summary(few, stats.INCONCLUSIVE) == "needs 4 seeds per PE mode, got 2"
    short = b56.judge(b56.records(factors=[1, 2]))
    assert summary(short, stats.INCONCLUSIVE) == "T' = 80 not measured (needs T, 2T and 4T)"


def test_b57_summaries():
    assert summary(b57.judged(b57.records()), stats.REPRODUCED) == (
        "GD within 1.1x of the floor to m_p=512, a stable minimum"
    )
    stalled = b57.judged(b57.records(ratio=1.8))
    assert summary(stalled, stats.NOT_REPRODUCED) == (
        "GD >= 1.8x the family's best at m_p=512 (> 1.5)"
    )
    saddle = b57.judged(b57.records(kappa=-0.3))
    summary(saddle, stats.NOT_REPRODUCED, "a saddle: negative curvature, symmetric at m_p=")
    summary(b57.judged(b57.records(noise=0.3)), stats.INCONCLUSIVE, "spans 1.1 at m_p=512")
    fast = b57.judged(b57.records(lr=0.5))
    summary(fast, stats.INCONCLUSIVE, "GD's step unstable (rho >= 2): content at m_p=64")
    broken = b57.records()
    broken[0]["check"]["content"] = 1e-3
    summary(b57.judged(broken), stats.INCONCLUSIVE, "autograd", "m_p=64")
