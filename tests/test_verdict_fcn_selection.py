"""B5.4 verdict (SPEC Part D) on synthetic records: each of the three outcomes, and its parts."""

from __future__ import annotations

import math

from attnsep.exact.selection_bounds import fcn_bottleneck_loss, uniform_attention_loss
from attnsep.experiments import fcn_selection as exp
from attnsep.metrics import stats
from attnsep.search import Probe

CONFIG = exp.Config(settings=[(16, 4, 1), (24, 4, 2), (64, 2, 2)])


def fcn(setting, width, replica, above=1.5, stderr=0.01):
    T, d, q = setting
    floor = float(fcn_bottleneck_loss(T, q, d, width))
    uniform = float(uniform_attention_loss(T, q, d))
    loss = max(floor * above, 0.5 * uniform if width >= T * d else 0.0)
    return {
        "model": "fcn", "T": T, "d": d, "q": q, "width": width, "replica": replica,
        "loss": loss, "stderr": stderr, "floor": floor, "uniform": uniform,
    }  # fmt: skip


def selector(setting, threshold, replicas=4):
    """Probes doubling then bisecting to ``threshold`` (every replica passes from it on)."""
    T, d, q = setting
    sizes = sorted({1, 2, 4, 8, 16, 32, threshold, threshold - 1} & set(range(1, 2 * threshold)))
    probes = [Probe(s, tuple([s >= threshold] * replicas)).as_record() for s in sizes]
    uniform = float(uniform_attention_loss(T, q, d))
    for p in probes:
        p["losses"] = [0.1 * uniform if o else 0.5 * uniform for o in p["outcomes"]]
    return {
        "model": "transformer", "T": T, "d": d, "q": q, "m_p": threshold,
        "width": d + threshold, "uniform": uniform, "loss": 0.1 * uniform, "probes": probes,
    }  # fmt: skip


def records(settings, thresholds, above=1.5):
    out = []
    for setting, m_p in zip(settings, thresholds, strict=True):
        for w in exp.widths(setting, [0.25, 0.5, 1.0, 1.5]):
            out += [fcn(setting, w, e, above) for e in range(2)]
        out.append(selector(setting, m_p))
    return out


def test_agreeing_records_reproduce():
    claim = exp.verdict(records(CONFIG.settings, [4, 12, 16]), CONFIG)
    assert claim["verdict"] == stats.REPRODUCED, claim["reason"]
    names = [e["name"] for e in claim["estimates"]]
    assert "transformer width needed (T=16, d=4, q=1)" in names
    assert any(n.startswith("lowest FCN loss / floor (T=64") for n in names)
    width = next(
        e for e in claim["estimates"] if e["name"].startswith("transformer width needed (T=24")
    )
    assert (width["value"], width["low"], width["high"]) == (16, 16, 16)


def test_an_fcn_below_the_floor_is_not_reproduced():
    data = records(CONFIG.settings, [4, 12, 16])
    victim = next(r for r in data if r["model"] == "fcn" and r["width"] == 24 and r["T"] == 24)
    victim["loss"] = victim["floor"] - 4 * victim["stderr"]
    claim = exp.verdict(data, CONFIG)
    assert claim["verdict"] == stats.NOT_REPRODUCED
    assert "width 24" in claim["reason"]


def test_within_three_standard_errors_is_not_below():
    data = records(CONFIG.settings, [4, 12, 16])
    victim = next(r for r in data if r["model"] == "fcn" and r["width"] == 24 and r["T"] == 24)
    victim["loss"] = victim["floor"] - 2 * victim["stderr"]
    assert exp.verdict(data, CONFIG)["verdict"] == stats.REPRODUCED


def test_too_few_settings_or_a_wide_transformer_is_inconclusive():
    two = exp.verdict(records(CONFIG.settings[:2], [4, 12]), CONFIG)
    assert two["verdict"] == stats.INCONCLUSIVE and "only 2 setting" in two["reason"]
    wide = exp.verdict(records(CONFIG.settings, [4, 40, 16]), CONFIG)  # 4 + 40 > 0.25 * 96
    assert wide["verdict"] == stats.INCONCLUSIVE and "(T=24, d=4, q=2)" in wide["reason"]


def test_noisy_transformer_replicas_widen_the_interval_to_inconclusive():
    data = records(CONFIG.settings, [4, 12, 16])
    t = next(r for r in data if r["model"] == "transformer" and r["T"] == 64)
    at_16 = next(p for p in t["probes"] if p["size"] == 16)
    at_16["outcomes"] = [1, 1, 0, 0]  # passes (half), but resampled replicas often do not
    t["probes"].append({**at_16, "size": 32, "outcomes": [1, 1, 1, 1]})  # 2 + 32 > 0.25 * 128
    claim = exp.verdict(data, CONFIG)
    assert claim["verdict"] == stats.INCONCLUSIVE, claim["reason"]
    width = next(
        e for e in claim["estimates"] if e["name"].startswith("transformer width needed (T=64")
    )
    assert (width["value"], width["high"]) == (18, 34)


def test_fcn_width_needed_is_the_first_grid_width_reaching_the_target():
    setting = (16, 4, 1)  # target 0.2 x uniform = 0.75
    losses = {16: (3.0, 3.0), 32: (2.0, 2.0), 64: (0.7, 0.9), 96: (0.1, 0.1)}
    nets = [{**fcn(setting, w, e), "loss": pair[e]} for w, pair in losses.items() for e in range(2)]
    assert exp._fcn_width_needed(nets) == (96, 64, 96)  # mean 0.8 at 64; replica 0 alone: 64
    never = [{**r, "loss": 3.0} for r in nets]
    assert exp._fcn_width_needed(never) == (math.inf, math.inf, math.inf)
