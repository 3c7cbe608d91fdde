"""The B5.2 verdict on synthetic searches: agreeing, contradicting and undecidable records
(SPEC B5.2, Part D)."""

from __future__ import annotations

import json
import math

import numpy as np

from attnsep import selection_threshold as sel
from attnsep.experiments import select_width
from attnsep.metrics import stats
from attnsep.search import smallest_passing

STANDARD = [8, 16, 32, 64, 128, 256]


def records(law, Ts, qs=(1, 2, 4), ds=(8, 32), seeds=32, spread=(0.8, 1.0), vary=False):
    """Real threshold searches over synthetic replicas: replica ``r`` succeeds from width
    ``law(T, q, d) * u_r`` on (``u_r`` uniform in ``spread``, the same at every size unless
    ``vary``)."""
    out = []
    for q in qs:
        for d in ds:
            for T in Ts:
                need = np.ceil(
                    law(T, q, d) * np.random.default_rng(T * vary).uniform(*spread, seeds)
                )
                m, probes = smallest_passing(lambda w, n=need: n <= w, sel.RATE, 2, 1 << 16)
                rows = [
                    {**p.as_record(), "steps": [100] * seeds, "rules": ["plateau"] * seeds}
                    for p in probes
                ]
                out.append({"T": T, "q": q, "d": d, "m_star": m, "family_m": m, "probes": rows})
    return out


def log_law(T, q, d):
    return 30 + 25 * q * math.log(T)


def power_law(T, q, d):
    return 10 * q * T**0.7


def judged(recs, config=None):
    config = config or select_width.Config(T_values=STANDARD)
    claim = select_width.verdict(recs, config)
    json.dumps(claim, allow_nan=False)
    return claim


def test_log_law_records_are_reproduced():
    claim = judged(records(log_law, STANDARD))
    assert claim["verdict"] == stats.REPRODUCED, claim["reason"]
    assert set(claim["decided"].values()) == {"paper"}
    assert all(claim["d_slopes_agree"].values())
    names = [e["name"] for e in claim["estimates"]]
    assert "m_p*(T=256, q=4, d=32)" in names and "b / q (q=2, d=8)" in names


def test_power_law_records_are_not_reproduced():
    claim = judged(records(power_law, STANDARD))
    assert claim["verdict"] == stats.NOT_REPRODUCED, claim["reason"]
    alpha = next(e for e in claim["estimates"] if e["name"] == "power exponent alpha (q=1, d=8)")
    assert alpha["low"] <= 0.7 <= alpha["high"] + 0.01


def test_too_few_sizes_is_inconclusive():
    claim = judged(records(log_law, [8, 16]), select_width.Config(T_values=[8, 16]))
    assert claim["verdict"] == stats.INCONCLUSIVE
    assert "at least 3 values of T" in claim["reason"]


def test_noisy_records_are_inconclusive_and_name_a_separating_T():
    recs = records(log_law, [8, 16, 32, 64], seeds=8, spread=(0.3, 1.0), vary=True)
    claim = judged(recs)
    assert claim["verdict"] == stats.INCONCLUSIVE, claim["reason"]
    assert "T = " in claim["reason"] or "no T" in claim["reason"]


def test_a_d_dependent_slope_is_inconclusive():
    claim = judged(records(lambda T, q, d: log_law(T, q, d) * (1 + (d > 8)), STANDARD))
    assert set(claim["decided"].values()) == {"paper"}
    assert claim["verdict"] == stats.INCONCLUSIVE
    assert "d's slopes b disagree" in claim["reason"]
