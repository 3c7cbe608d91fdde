"""The sparse-XOR experiments' declared peak memory per job (``Experiment.peak``): positive for
every preset job, larger for larger jobs, and ``train.memory``'s peak of the run where a job is
one such run."""

from __future__ import annotations

import math

import pytest

from attnsep.configs import OneStepConfig, XorFCNConfig, XorTrainConfig
from attnsep.engine.jobs import jobs_for
from attnsep.experiments import base, load_all
from attnsep.train.memory import fcn_peak, one_step_peak, xor_train_peak

NAMES = (
    "polylog-width",
    "attention-maps",
    "head-specialization",
    "kparity-steps",
    "finite-samples",
    "separation-xor",
)


def peak(name: str, **changes) -> float:
    """The peak of the quick preset's config with ``changes``, as a stored job holds it."""
    exp = base.get(name)
    return exp.peak(exp.config("quick", **changes).model_dump(mode="json"))


@pytest.fixture(autouse=True, scope="module")
def _loaded() -> None:
    load_all()


@pytest.mark.parametrize("name", NAMES)
def test_every_quick_and_standard_job_has_a_positive_peak(name: str) -> None:
    exp = base.get(name)
    for preset in ("quick", "standard"):
        jobs = jobs_for(name, exp.config(preset))
        assert jobs and all(exp.peak(job.config) > 0 for job in jobs), preset


def test_polylog_width_is_its_largest_probe_and_grows_with_d_and_seeds() -> None:
    small = {"d_values": [64], "seeds": 8, "m_start": 2, "m_limit": 4}
    steps = [one_step_peak(OneStepConfig(d=64, m=m, seeds=8)) for m in (2, 4)]
    assert peak("polylog-width", **small) == max(steps)
    one = {"d_values": [1024], "seeds": 32}
    assert peak("polylog-width", **{**one, "seeds": 64}) > peak("polylog-width", **one)
    assert peak("polylog-width", **{**one, "d_values": [4096]}) > peak("polylog-width", **one)


def test_head_specialization_is_its_largest_one_step_run() -> None:
    fixed = {"d_values": [64], "schedule_d_values": [], "m": 8, "seeds": 4}
    assert peak("head-specialization", **fixed) == one_step_peak(OneStepConfig(d=64, m=8, seeds=4))
    scheduled = {"d_values": [], "schedule_d_values": [1024], "seeds_schedule": 16}
    m = math.ceil(0.5 * math.log(1024) ** 2)  # the default schedule
    expected = one_step_peak(OneStepConfig(d=1024, m=m, seeds=16))
    assert peak("head-specialization", **scheduled) == expected
    assert peak("head-specialization", **{**fixed, "seeds": 8}) > peak(
        "head-specialization", **fixed
    )
    assert peak("head-specialization", **{**fixed, "d_values": [256]}) > peak(
        "head-specialization", **fixed
    )


def test_separation_xor_is_its_largest_probe_of_either_model() -> None:
    fcn = {"d_values": [], "fcn_d_values": [64], "seeds": 4, "fcn_steps": 10}
    net = XorFCNConfig(d=64, width=8, seeds=4, steps=10, dtype="float32")
    assert peak("separation-xor", **fcn) == fcn_peak(net)
    assert peak("separation-xor", **{**fcn, "fcn_d_values": [128]}) > peak("separation-xor", **fcn)
    transformer = {"d_values": [256], "fcn_d_values": [], "seeds": 8}
    kept = [
        one_step_peak(OneStepConfig(d=256, m=m, seeds=8), keep_embeddings=True)
        for m in (2, 4, 8, 16, math.ceil(math.log(256) ** 2))
    ]
    assert peak("separation-xor", **transformer) == max(kept)
    for bigger in ({"d_values": [1024]}, {"seeds": 16}):
        assert peak("separation-xor", **{**transformer, **bigger}) > peak(
            "separation-xor", **transformer
        )


def test_finite_samples_is_its_larger_search() -> None:
    one = {"d_values": [16], "widths": ["fixed"], "seeds": 8, "multistep_d_values": []}
    one["surrogate_from"] = None
    kept = one_step_peak(OneStepConfig(d=16, m=32, seeds=8), keep_embeddings=True)
    assert peak("finite-samples", **one) == kept
    assert peak("finite-samples", **{**one, "surrogate_from": 16}) > kept  # the Jacobian
    assert peak("finite-samples", **{**one, "seeds": 16}) > kept
    assert peak("finite-samples", **{**one, "d_values": [32]}) > kept
    multi = {"d_values": [], "multistep_d_values": [64], "multistep_n_max": 2**10}
    held = XorTrainConfig(d=64, m=32, seeds=1, steps=4, gradient="fixed", samples=2**10)
    assert peak("finite-samples", **multi, multistep_steps=4) == xor_train_peak(held)
    assert peak("finite-samples", **{**multi, "multistep_n_max": 2**12}) > xor_train_peak(held)


def test_kparity_steps_adds_the_grid_to_its_training_config() -> None:
    job = {
        "series": [{"k": 3, "d_values": [16]}],
        "m_values": [],
        "m": 4,
        "seeds": 2,
        "eta_exponents": [0.0],
        "rules": ["constant"],
        "gradients": ["population"],
    }
    train = xor_train_peak(XorTrainConfig(d=16, m=4, k=3, seeds=2))
    runs, rows = 5 * 2 * 3 * 4, 48 * 2 * 3 * 16  # query vectors and score rows of 2 runs
    assert peak("kparity-steps", **job) == train + 8 * (runs + rows)
    grids = {"population": "eta_exponents", "fixed": "samples_eta_exponents"}
    for rule in ("constant", "capped"):
        for gradient, grid in grids.items():
            run = {**job, "rules": [rule], "gradients": [gradient], grid: [0.0]}
            for bigger in ({"seeds": 4}, {"series": [{"k": 3, "d_values": [32]}]}, {grid: [0, 1]}):
                larger = peak("kparity-steps", **{**run, **bigger})
                assert larger > peak("kparity-steps", **run), (rule, gradient, bigger)


def test_attention_maps_grows_with_each_size() -> None:
    job = {"d": 64, "m": 32, "paper_sizes": [], "maps": ["softmax"], "seeds": 8}
    for bigger in ({"d": 128}, {"m": 64}, {"seeds": 16}, {"paper_sizes": [(256, 32)]}):
        assert peak("attention-maps", **{**job, **bigger}) > peak("attention-maps", **job), bigger
    assert peak("attention-maps", **{**job, "eta_exponents": [0.0, 1.0, 2.0]}) < peak(
        "attention-maps", **job
    )  # the default grid has 25 step sizes
