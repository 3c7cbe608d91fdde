"""The Part C (token selection) verdict on synthetic searches: agreeing, contradicting and
undecidable records (SPEC Part C, D)."""

from __future__ import annotations

import json
import math

import numpy as np

from attnsep import selection_threshold as sel
from attnsep.configs import SELECTION_TARGET
from attnsep.experiments import separation_select
from attnsep.metrics import stats
from attnsep.search import smallest_passing

D = 16
STANDARD = [8, 16, 32, 64, 128, 256]


def records(law, Ts, qs=(1, 2, 4), seeds=32, spread=(0.8, 1.0)):
    """Real searches over synthetic replicas (replica ``r`` succeeds from ``law(T, q) u_r``)."""
    out = []
    for q in qs:
        for T in Ts:
            need = np.ceil(law(T, q) * np.random.default_rng(0).uniform(*spread, seeds))
            m, probes = smallest_passing(lambda w, n=need: n <= w, sel.RATE, 2, 1 << 16)
            fcn = separation_select.fcn_min_width(T, D, q, SELECTION_TARGET)
            rows = [{**p.as_record(), "steps": [1], "rules": ["plateau"]} for p in probes]
            out.append({"T": T, "q": q, "d": D, "m_star": m, "probes": rows, "fcn_width": fcn})
    return out


def judged(recs, Ts=STANDARD):
    claim = separation_select.verdict(recs, separation_select.Config(d=D, T_values=Ts))
    json.dumps(claim, allow_nan=False)
    return claim


def test_log_width_is_reproduced_and_the_fcn_bound_is_linear():
    claim = judged(records(lambda T, q: 30 + 25 * q * math.log(T), STANDARD))
    assert claim["verdict"] == stats.REPRODUCED, claim["reason"]
    assert "affine in T: True" in claim["measured"]
    names = [e["name"] for e in claim["estimates"]]
    assert "d + m_p*(T=256, q=4)" in names


def test_linear_width_is_not_reproduced():
    claim = judged(records(lambda T, q: 20 * q * T, STANDARD))
    assert claim["verdict"] == stats.NOT_REPRODUCED, claim["reason"]
    alpha = next(e for e in claim["estimates"] if e["name"].endswith("alpha (q=4)"))
    assert alpha["low"] >= separation_select.CONTRADICTING_ALPHA


def test_too_few_sizes_is_inconclusive():
    claim = judged(records(lambda T, q: 30 + 25 * q * math.log(T), [8, 16]), [8, 16])
    assert claim["verdict"] == stats.INCONCLUSIVE
    assert "at least 3 values of T" in claim["reason"]


def test_fcn_bound_grows_exactly_linearly():
    Ts = [8, 16, 32, 64, 128, 256]
    widths = [separation_select.fcn_min_width(T, D, 2, SELECTION_TARGET) for T in Ts]
    growth = separation_select.fcn_growth(Ts, widths)
    assert growth["affine"] and abs(growth["slope"] - 0.8 * D) < 0.05
    assert not separation_select.fcn_growth(Ts, [T * T for T in Ts])["affine"]
