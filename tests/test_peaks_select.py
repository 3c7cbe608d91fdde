"""The peak memory the token-selection experiments declare per job (``Experiment.peak``):
positive for every job, growing with each size knob, and equal to ``train.memory``'s estimates
where it reuses them."""

from __future__ import annotations

import pytest

from attnsep.configs import SelectionTrainConfig
from attnsep.engine.jobs import jobs_for
from attnsep.experiments import base, load_all
from attnsep.experiments.select_convergence import run as convergence
from attnsep.experiments.select_length import run as length
from attnsep.experiments.select_width import run as width
from attnsep.experiments.separation_select import run as separation
from attnsep.train.memory import selection_evaluation_peak, selection_peak

NAMES = ("select-convergence", "select-width", "length-generalization", "separation-select")
SMALL = {"d": 4, "T": 8, "q": 2, "seeds": [0]}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("preset", ["quick", "standard"])
def test_every_job_declares_a_positive_peak(name: str, preset: str) -> None:
    load_all()
    exp = base.get(name)
    jobs = jobs_for(name, exp.config(preset))
    assert jobs and all(exp.peak(job.config) > 0 for job in jobs)


def peak_of(module, **fields) -> float:  # noqa: ANN001
    return module.peak(module.Config(**fields).model_dump())


def test_select_convergence_grows_with_width_and_evaluation() -> None:
    one = {**SMALL, "paper_widths": []}
    assert peak_of(convergence, **one, pe_dims=[16]) < peak_of(convergence, **one, pe_dims=[64])
    assert peak_of(convergence, **one, pe_dims=[16, 64]) == peak_of(
        convergence, **one, pe_dims=[64]
    )  # the widest run, not the sum
    assert peak_of(convergence, **one, pe_dims=[16], eval_size=512) < peak_of(
        convergence, **one, pe_dims=[16], eval_size=4096
    )
    paper = {**SMALL, "pe_dims": []}
    assert peak_of(convergence, **paper, paper_widths=[16]) < peak_of(
        convergence, **paper, paper_widths=[32]
    )


def test_select_convergence_reuses_the_evaluation_bytes() -> None:
    """Its evaluation dominates here: ``evaluation_bytes`` and one more copy of the encodings."""
    c = {**SMALL, "pe_dims": [16], "paper_widths": [], "eval_size": 4096, "family_samples": 64}
    train = SelectionTrainConfig(
        d=4, T=8, q=2, pe_dim=16, trainable="position", objective="population", batch=64
    )
    expected = selection_evaluation_peak(train, [8], 4096) + 8.0 * 4096 * 8 * 16
    assert peak_of(convergence, **c) == pytest.approx(expected)


def test_training_bytes_is_selection_peak_for_explicit_steps() -> None:
    fixed = SelectionTrainConfig(d=4, T=8, q=2, pe="fixed", pe_dim=16, batch=32, steps=10)
    assert convergence.training_bytes(fixed) == selection_peak(fixed)
    law = fixed.model_copy(update={"pe": "stochastic"})
    assert 0 < convergence.training_bytes(law) < selection_peak(law)  # no B x T x D encodings


def test_length_generalization_grows_with_width_and_lengths() -> None:
    one = {**SMALL, "pes": ["stochastic"]}
    assert peak_of(length, **one, pe_dim=16) < peak_of(length, **one, pe_dim=64)
    assert peak_of(length, **one, factors=[1, 2]) < peak_of(length, **one, factors=[1, 2, 16])
    corollary = {**SMALL, "pes": [], "corollary_widths": [16]}
    assert peak_of(length, **corollary) < peak_of(length, **{**corollary, "corollary_widths": [64]})


def test_length_generalization_fixed_reuses_the_config_estimates() -> None:
    c = {**SMALL, "pes": ["fixed"], "pe_dim": 16, "factors": [1, 2, 4], "eval_size": 32}
    train = SelectionTrainConfig(
        d=4,
        T=8,
        q=2,
        pe="fixed",
        pe_dim=16,
        fixed_positions=32,
        trainable="position",
        objective="population",
        steps=400,
        batch=64,
    )
    expected = max(selection_peak(train), selection_evaluation_peak(train, [8, 16, 32], 32))
    assert peak_of(length, **c) == expected


WIDTH = {"T_values": [512], "q_values": [2], "seeds": 2, "samples": 256}


@pytest.mark.parametrize("module", [width, separation])
def test_width_searches_grow_with_their_sizes(module) -> None:  # noqa: ANN001
    law = {**WIDTH, "solver": "law"}
    assert peak_of(module, **{**law, "T_values": [32]}) < peak_of(module, **law)
    assert peak_of(module, **law) < peak_of(module, **{**law, "samples": 8192})
    drawn = {**WIDTH, "solver": "population"}
    assert peak_of(module, **drawn) < peak_of(module, **{**drawn, "T_values": [4096]})
    assert peak_of(module, **drawn) < peak_of(module, **{**drawn, "m_limit": 8192})
    sgd = {**WIDTH, "solver": "sgd", "m_limit": 256}
    assert peak_of(module, **sgd) < peak_of(module, **{**sgd, "seeds": 8})
    assert peak_of(module, **sgd) < peak_of(module, **{**sgd, "eval_size": 8192})


def test_population_search_is_the_family_at_the_widest_probe() -> None:
    c = {**WIDTH, "solver": "population", "m_limit": 64}
    assert peak_of(width, **c) == convergence.family_bytes(256, 512, 2, 64)
    assert peak_of(separation, **c) == peak_of(width, **c)


def test_mirrored_sizes_match_their_sources() -> None:
    """``select_width`` copies these sizes so that planning need not import torch."""
    from attnsep.exact import family_law
    from attnsep.train.stopping import Stopping

    assert Stopping().monitor == width.MONITOR
    sizes = (width.NODES, width.MOMENT_STEP, width.MIN_OCTAVE, width.TOP, width.TABLE)
    expected = (family_law.NODES, family_law.MOMENT_STEP, family_law.MIN_OCTAVE)
    assert sizes == (*expected, family_law.TOP, family_law.TABLE)
