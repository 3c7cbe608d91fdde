"""The cost model behind ``--plan`` (engine/cost_model.py): every experiment has a work count,
the fit reads a floor and a rate, and the published quick runs predict the standard ones."""

from __future__ import annotations

import math

import pytest

from attnsep.engine import cost_model
from attnsep.engine.published import config_text, published_by_config, published_timings
from attnsep.experiments import base, load_all
from attnsep.report.claims import planned_jobs

load_all()
NAMES = list(base.REGISTRY)


@pytest.mark.parametrize("preset", base.PRESETS)
def test_every_job_of_every_preset_has_a_positive_work_count(preset):
    for name, jobs in planned_jobs(NAMES, preset).items():
        for job in jobs:
            parts = cost_model.work(name, job.config)
            assert parts, (name, job.config)
            assert all(math.isfinite(u) and u > 0 for u in parts.values()), (name, parts)


def test_no_model_for_an_unknown_experiment_or_a_config_of_another_version():
    assert cost_model.work("no-such-experiment", {}) is None
    assert cost_model.work("one-step", {"d_values": [64]}) is None  # fields missing


def test_work_grows_with_the_sizes_it_counts():
    one = base.get("one-step").config("quick", series=["fixed"])
    small, large = (cost_model.work("one-step", one.model_copy(update={"d_values": [d]})
                                    .model_dump()) for d in (64, 256))  # fmt: skip
    assert large[""] == pytest.approx(4 * small[""])
    xor = base.get("separation-xor").config("quick").model_dump()
    parts = cost_model.work("separation-xor", {**xor, "d_values": [16], "fcn_d_values": []})
    assert set(parts) == {"transformer"}


def test_fit_reads_the_floor_and_each_jobs_rate_per_part():
    timed = [
        ({"a": 10.0}, 1.0),  # the fastest: the floor
        ({"a": 20.0}, 3.0),  # (3 - 1) / 20 = 0.1
        ({"a": 40.0}, 9.0),  # 0.2
        ({"a": 100.0}, 31.0),  # 0.3
        ({"b": 5.0}, 2.0),
        ({"a": 1.0, "b": 1.0}, 99.0),  # two parts: not used to fit either
    ]
    model = cost_model.fit(timed)
    assert model["a"] == (1.0, [(20.0, 0.1), (40.0, 0.2), (100.0, pytest.approx(0.3))])
    assert model["b"] == (2.0, [(5.0, 0.4)])  # one job: proportional to the work
    assert cost_model.predict(model, {"c": 1.0}) is None  # never timed
    assert cost_model.predict(model, None) is None and cost_model.fit([]) == {}


def test_a_size_between_timed_sizes_is_scaled_by_their_interpolated_rate():
    model = cost_model.fit([({"a": 10.0}, 1.0), ({"a": 20.0}, 3.0), ({"a": 100.0}, 31.0)])
    share = math.log(50 / 20) / math.log(100 / 20)  # rates 0.1 at 20, 0.3 at 100
    middle = 0.1 ** (1 - share) * 0.3**share
    assert cost_model.predict(model, {"a": 50.0}) == pytest.approx(1.0 + middle * 50)
    assert 0.1 < middle < 0.3
    assert cost_model.predict(model, {"a": 100.0}) == pytest.approx(31.0)  # a timed size
    seeds = cost_model.fit([({"a": 1.0}, 0.0), ({"a": 10.0}, 2.0), ({"a": 10.0}, 4.0)])
    assert cost_model.rate(seeds["a"][1], 10.0) == pytest.approx(0.3)  # two seeds: the median


def test_outside_the_timed_sizes_the_nearest_rate_near_them_and_the_median_far():
    model = cost_model.fit([({"a": 10.0}, 1.0), ({"a": 20.0}, 3.0), ({"a": 100.0}, 31.0)])
    assert cost_model.predict(model, {"a": 300.0}) == pytest.approx(1.0 + 0.3 * 300)  # 100
    assert cost_model.predict(model, {"a": 6.0}) == pytest.approx(1.0 + 0.1 * 6)  # 20 nearest
    far = 100.0 * cost_model.NEAR * 2
    assert cost_model.predict(model, {"a": far}) == pytest.approx(1.0 + 0.2 * far)  # median
    assert cost_model.predict(model, {"a": 0.0}) == 1.0  # no work: the floor


def test_jobs_within_the_timing_noise_of_the_floor_give_no_rate():
    # 1.1 s and 1.2 s against a 1 s floor are fixed cost and noise: their rates (0.002, 0.002)
    # would have been two of the five in the median that prices a job far from them all
    timed = [({"a": 10.0}, 1.0), ({"a": 50.0}, 1.1), ({"a": 100.0}, 1.2)]
    timed += [({"a": 1000.0}, 21.0), ({"a": 2000.0}, 41.0)]  # rate 0.02 each
    model = cost_model.fit(timed)
    assert [w for w, _ in model["a"][1]] == [1000.0, 2000.0]
    far = 2000.0 * cost_model.NEAR * 2
    assert cost_model.predict(model, {"a": far}) == pytest.approx(1.0 + 0.02 * far)
    # no job clear of the noise: those above the floor still give their rates
    model = cost_model.fit([({"a": 10.0}, 1.0), ({"a": 50.0}, 1.1)])
    assert model["a"][1] == [(50.0, pytest.approx(0.1 / 50))]


def preset_seconds(preset: str) -> dict[str, list[tuple[dict, float]]]:
    """Each experiment's published ``(work, seconds)`` of ``preset``'s jobs."""
    published = published_by_config(published_timings())
    out = {}
    for name, jobs in planned_jobs(NAMES, preset).items():
        seconds = [(j.config, published.get((name, config_text(j.config)))) for j in jobs]
        out[name] = [(cost_model.work(name, c), s) for c, s in seconds if s is not None]
    return out


OVERHEAD_BOUND = {
    "kparity-steps": "since its grid descent (10-23x faster on large jobs) each quick job takes "
    "0.2-1.4 s whatever d, nearly all of it Python per step, so the quick jobs show no rate; "
    "the plan fits it on the standard timings too",
    "attention-maps": "since its step sizes run together (version 3) its six quick jobs take "
    "0.2-0.7 s at one and the same work count, so they show no rate either",
    "select-width": "its three quick jobs (T = 8, 16, 32, the law solver, as separation-select's) "
    "take 0.23-0.33 s, nearly all fixed cost; read from them alone its rate predicts the "
    "standard jobs at 0.14x (measured when the quick and standard timings were published again "
    "from one run each of the same code)",
    "fixed-pe": "its eight quick jobs (one per seed and PE mode, 200 steps) take 0.17-0.24 s at "
    "two work counts 11% apart, within the timing noise of the floor: they show no rate",
    "separation-select": "its three quick jobs (T = 8, 16, 32) take 0.36-0.62 s, nearly all "
    "fixed cost; read from them alone its rate predicts the standard jobs at 0.09x (their "
    "off-subset products are all drawn up to T - q = 128, and beyond it the law evaluator's "
    "bulk tables cost what no quick job shows)",
}
"""Experiments whose quick jobs are all fixed cost: no rate can be read off them alone."""


def test_fitted_on_the_published_quick_runs_it_predicts_the_standard_ones():
    """Measured when the model was written: 0.44x to 2.98x per experiment, 1.22x in total;
    now 0.35x (select-full-w) to 2.79x (one-step), 1.12x (``docs/cluster.md``); this
    keeps it there. An experiment whose quick jobs are all fixed cost is checked with the
    model the plan fits on all its published timings instead."""
    quick, standard = preset_seconds("quick"), preset_seconds("standard")
    covered = [name for name in NAMES if quick[name] and standard[name]]
    assert len(covered) >= len(NAMES) - 3, f"published timings cover only {covered}"
    predicted = measured = 0.0
    for name in covered:  # an experiment whose jobs changed is timed again when next published
        model = cost_model.fit(quick[name] + (standard[name] if name in OVERHEAD_BOUND else []))
        guess = sum(cost_model.predict(model, work) for work, _ in standard[name])
        real = sum(s for _, s in standard[name])
        assert 0.25 < guess / real < 4, (name, guess, real)
        predicted, measured = predicted + guess, measured + real
    assert 0.8 < predicted / measured < 1.5


def test_an_experiment_brings_its_own_work_count(monkeypatch):
    """A new experiment registers ``work=``; the engine's cost model reads it from there."""
    one = base.get("one-step")
    toy = base.Experiment(
        name="toy-cost",
        claim="X",
        title="toy",
        paper="toy",
        config_type=one.config_type,
        run=one.run,
        figure=one.figure,
        verdict=one.verdict,
        work=lambda c: {"a": 2.0 * c["n"], "b": 0.0},
        searches=True,
    )
    monkeypatch.setitem(base.REGISTRY, "toy-cost", toy)
    assert cost_model.work("toy-cost", {"n": 3}) == {"a": 6.0}  # zero parts left out
    assert cost_model.work("toy-cost", {}) is None  # a config it cannot count
    assert cost_model.searches("toy-cost") and not cost_model.searches("one-step")
