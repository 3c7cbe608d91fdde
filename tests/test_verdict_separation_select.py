"""The Part C (token selection) check on synthetic searches: the FCN's minimum width confirmed
against the theorem's closed form, a corrupted one failed as a bug, the transformer's width and
the ratio reported (SPEC Parts C, F)."""

from __future__ import annotations

import json
import math

import numpy as np

from attnsep.configs import SELECTION_TARGET
from attnsep.experiments import separation_select
from attnsep.metrics import stats
from attnsep.train import selection_threshold as sel
from attnsep.train.search import smallest_passing

D = 16
STANDARD = [32, 128, 512, 2048, 8192, 32768, 65536]  # the standard preset's T_values


def records(law, Ts, qs=(2, 4), seeds=32, spread=(0.8, 1.0)):
    """Real searches over synthetic replicas (replica ``r`` succeeds from ``law(T, q) u_r``)."""
    out = []
    for q in qs:
        for T in Ts:
            need = np.ceil(law(T, q) * np.random.default_rng(0).uniform(*spread, seeds))
            m, probes = smallest_passing(lambda w, n=need: n <= w, sel.RATE, 2, 1 << 16)
            fcn = separation_select.run.fcn_min_width(T, D, q, SELECTION_TARGET)
            rows = [{**p.as_record(), "steps": [1], "rules": ["plateau"]} for p in probes]
            out.append({"T": T, "q": q, "d": D, "m_star": m, "probes": rows, "fcn_width": fcn})
    return out


def log_width(T, q):
    return 30 + 25 * q * math.log(T)


def linear_width(T, q):
    return 20 * q * T


def judged(recs, Ts=STANDARD, qs=(2, 4)):
    config = separation_select.config.Config(d=D, T_values=Ts, q_values=list(qs))
    claim = separation_select.verdict.verdict(recs, config)
    json.dumps(claim, allow_nan=False)
    return claim


def test_the_exact_fcn_width_is_confirmed():
    claim = judged(records(log_width, STANDARD))
    assert claim["verdict"] == stats.CONFIRMED and claim["kind"] == "check", claim["reason"]
    assert "affine in T: True" in claim["measured"] and "judged in B5.2" in claim["reason"]
    names = [e["name"] for e in claim["estimates"]]
    assert "d + m_p*(T=512, q=4)" in names
    assert not any("exponent" in n for n in names)  # the growth law is B5.2's verdict


def test_the_check_does_not_depend_on_the_transformer():
    """A transformer whose width grows like T is reported, not judged: the check stays
    confirmed (C's transformer side is B5.2's law, one verdict)."""
    Ts = STANDARD[:4]
    claim = judged(records(linear_width, Ts), Ts)
    assert claim["verdict"] == stats.CONFIRMED, claim["reason"]


def test_the_closed_form_is_the_bound_solved_for_w():
    for T, d, q in [(16, 2, 1), (20, 10, 3), (65536, 16, 8), (5, 1, 4)]:
        for target in (0.05, 0.2, 0.9):
            closed = separation_select.verdict.closed_form_width(T, d, target)
            assert separation_select.run.fcn_min_width(T, d, q, target) == closed
    assert separation_select.verdict.closed_form_width(16, 2, 0.2) == math.ceil(0.8 * 32 + 0.2 * 2)


def test_a_width_off_the_bound_fails_the_check_as_a_bug():
    recs = records(log_width, STANDARD)
    victim = next(r for r in recs if (r["T"], r["q"]) == (2048, 4))
    victim["fcn_width"] += 1
    claim = judged(recs)
    assert claim["verdict"] == stats.CHECK_FAILED and claim["kind"] == "check"
    assert "at T=2048, q=4" in claim["reason"] and "bug in attnsep" in claim["reason"]


def test_widths_not_affine_in_T_fail_the_check():
    Ts = [8, 16, 32, 64]
    growth = separation_select.verdict.fcn_growth(Ts, [T * T for T in Ts])
    assert not growth["affine"]
    recs = records(log_width, Ts, qs=(2,))
    for r in recs:
        r["fcn_width"] = r["T"] ** 2
    claim = judged(recs, Ts, qs=(2,))
    assert claim["verdict"] == stats.CHECK_FAILED
    assert "not affine in T" in claim["reason"]


def test_the_width_ratio_is_reported_per_T():
    recs = records(log_width, STANDARD)
    claim = judged(recs)
    ratio = {e["name"]: e for e in claim["estimates"] if e["name"].startswith("FCN / transformer")}
    assert len(ratio) == 2 * len(STANDARD)
    r = next(r for r in recs if (r["T"], r["q"]) == (2048, 2))
    e = ratio["FCN / transformer width (T=2048, q=2)"]
    assert e["value"] == r["fcn_width"] / (D + r["m_star"])
    assert e["low"] <= e["value"] <= e["high"]
    values = [ratio[f"FCN / transformer width (T={T}, q=2)"]["value"] for T in STANDARD]
    assert values == sorted(values)  # the FCN's width grows faster


def test_fcn_bound_grows_exactly_linearly():
    Ts = [8, 16, 32, 64, 128, 256]
    widths = [separation_select.run.fcn_min_width(T, D, 2, SELECTION_TARGET) for T in Ts]
    growth = separation_select.verdict.fcn_growth(Ts, widths)
    assert growth["affine"] and abs(growth["slope"] - 0.8 * D) < 0.05
    assert not separation_select.verdict.fcn_growth(Ts, [T * T for T in Ts])["affine"]
