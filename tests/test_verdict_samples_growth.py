"""The A7.5b finding (``xor_samples.growth``, SPEC A7.5, Part F) on simulated searches: its
entry's fields (a finding, beyond the papers, no calibration, its figure), the one-step exponent
per series, the surrogate's validated range, the related work, and the multi-step fit: ``c d``
against ``c d^2`` by held-out relative error, the exponent with its interval."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attnsep.experiments import xor_samples
from attnsep.experiments.xor_samples import growth as xor_samples_growth
from attnsep.experiments.xor_samples import multistep
from attnsep.experiments.xor_samples import search as sample_search
from attnsep.metrics import stats

DS = [2**k for k in range(4, 13)]
STEP_DS = [16, 32, 64, 128, 256]
CONFIG = xor_samples.config.Config(
    d_values=DS, seeds=64, n_max=2**40, surrogate_n_max=2**40, multistep_d_values=STEP_DS
)
RATES = {d: (0.9, 0, 58) for d in DS}


def run(laws: dict[str, object], steps_law=None, config=CONFIG, spread=0.5, seed=0, surrogate=64):
    """Simulated records: one one-step series per width (``laws``: width -> ``n*(d)``, exact
    sampling below ``surrogate``), and with ``steps_law`` the multi-step series (4 steps)."""
    rng = np.random.default_rng(seed)
    out = []
    for width, law in laws.items():
        searches = sample_search.simulate(law, spread, RATES, config, rng)
        for rec in sample_search.run_records(searches, width, 32):
            rec["gradient"] = "surrogate" if rec["d"] >= surrogate else "exact-samples"
            out.append(rec)
    if steps_law is not None:
        search = multistep.search_of(config, STEP_DS[0])
        search = multistep.Search(**{**search.__dict__, "d_values": STEP_DS})
        searches = sample_search.simulate(steps_law, spread, RATES, search, rng)
        for rec in sample_search.run_records(searches, "fixed", 32):
            out.append({**rec, "steps": 4, "gradient": "exact-samples"})
    return out


def entry(records, config=CONFIG):
    claim = xor_samples.verdict.verdict(records, config)
    (companion,) = claim["companions"]
    json.dumps(claim, allow_nan=False)
    return companion


def named(entry, name):
    return next(e for e in entry["estimates"] if e["name"] == name)


def linear(d):
    return 300.0 * d


def quadratic(d):
    return 2.0 * d**2


def test_the_entry_is_a_finding_beyond_the_papers_with_its_figure():
    found = entry(run({"fixed": quadratic, "schedule": quadratic}, linear))
    assert found["verdict"] == stats.FINDING and found["kind"] == "finding"
    assert found["claim"] == "A7.5b" and found["section"] == "beyond the papers"
    assert found["calibration"] is None
    assert found["figures"] == ["figures/finite_samples_growth.png"]
    assert "O(d)" in found["paper"]
    assert "Dandi et al. 2023" in found["reason"] and "trained models" in found["reason"]
    assert "validated against exact sampling only at d <= 256" in found["reason"]
    assert "from the Gaussian surrogate" in found["measured"] and "d >= 64" in found["measured"]
    lead = named(found, "exponent alpha (test, fixed width)")
    assert lead["low"] <= 2 <= lead["high"] and lead["high"] - lead["low"] < 0.5
    assert (
        f"alpha = {stats.fmt_interval(lead['value'], lead['low'], lead['high'])}"
        in (found["reason"])
    )
    names = [e["name"] for e in found["estimates"]]
    assert "n* (certified, schedule width, d=4096)" in names
    assert "n* (4 GD steps, test, d=256)" in names
    assert "stuck rate (4 GD steps, certified, d=16)" in names


def test_exact_sampling_everywhere_is_said():
    found = entry(run({"fixed": linear}, surrogate=10**6))
    assert "every n* by exact sampling" in found["reason"]
    assert not any("GD steps" in e["name"] for e in found["estimates"])  # none run


@pytest.mark.parametrize("law, slope, better", [(linear, 1, "c d "), (quadratic, 2, "c d^2 ")])
def test_the_multistep_fit_says_which_law_predicts(law, slope, better):
    """Multi-step ``n*`` growing like ``d`` (or ``d^2``): the exponent's interval holds 1 (2),
    the held-out errors' difference is interval-separated from 0 in favour of that law."""
    found = entry(run({"fixed": quadratic}, law))
    alpha = named(found, "exponent alpha (4 GD steps, test)")
    assert alpha["low"] <= slope <= alpha["high"], alpha
    paper = named(found, "c d held-out relative error (4 GD steps, test)")
    rival = named(found, "c d^2 held-out relative error (4 GD steps, test)")
    assert (paper["value"] < rival["value"]) == (slope == 1)
    assert f"{better}predicts the larger d's better" in found["reason"]


def test_multistep_fit_on_too_few_sizes_reports_no_comparison():
    config = CONFIG.model_copy(update={"multistep_d_values": STEP_DS[:2]})
    records = [r for r in run({"fixed": linear}, linear) if r.get("steps", 1) == 1 or r["d"] < 64]
    a = multistep.fit(records, config)
    assert a is not None and a["held_out"] is None and len(a["d"]) == 2
    found = entry(records, config)
    assert "held out" not in found["reason"] and "4 GD steps" in found["reason"]


def test_the_figures_are_drawn(tmp_path):
    records = run({"fixed": quadratic, "schedule": quadratic}, linear)
    paths = xor_samples.figure.figure(records, CONFIG, tmp_path)
    assert [p.name for p in paths] == ["finite_samples.png", xor_samples_growth.FIGURE]
    assert all(p.stat().st_size > 0 for p in paths)
