"""The library's configs (``attnsep.configs``): one home per default, limits as constraints,
one-line errors, and the torch-side registries they mirror."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

from attnsep import attention, configs
from attnsep.configs import (
    PE_KINDS,
    OneStepConfig,
    V1Config,
    XorFCNConfig,
    XorTrainConfig,
    default,
    default_eta,
)
from attnsep.core import device
from attnsep.exact import family, parity
from attnsep.experiments import xor_heads, xor_kparity, xor_one_step
from attnsep.metrics import selection
from attnsep.models import query_heads, selector
from attnsep.train import selection_threshold, threshold_laws


def test_checkable_names_match_the_registries_they_stand_for() -> None:
    assert sorted(configs.ATTENTION_MAPS) == sorted(attention.ATTENTION)
    code = (  # the built-in list, as configs has it before any map is registered
        "from attnsep import configs; before = sorted(configs.ATTENTION_MAPS)\n"
        "from attnsep import attention; assert before == sorted(attention.ATTENTION), before"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert configs.INITS == query_heads.INITS
    assert configs.TRAINABLE == selector.TRAINABLE
    assert configs.PE_KINDS == PE_KINDS
    assert list(configs.DType.__args__) == list(device.DTYPES)
    assert configs.MAX_EXACT_HEADS == parity.MAX_EXACT_HEADS
    assert configs.EVAL_SIZE == selection.EVAL_SIZE
    assert configs.FAMILY_SAMPLES == family.SAMPLES
    assert configs.SELECTION_TARGET == selection_threshold.TARGET
    assert configs.SELECTION_RIVAL_MIN_ALPHA == threshold_laws.RIVAL_MIN_ALPHA


def test_the_step_size_defaults_to_the_configs_scale() -> None:
    scale = inspect.signature(default_eta).parameters["scale"].default
    assert scale == default(OneStepConfig, "eta_scale") == 16.0
    assert OneStepConfig(d=30).step_size() == default_eta(30)


def test_experiment_configs_take_the_library_defaults() -> None:
    one = xor_one_step.config.Config()
    assert one.eta_scale == default(OneStepConfig, "eta_scale")
    assert one.success_tol == default(OneStepConfig, "success_tol")
    assert one.m_values == [default(OneStepConfig, "m")]
    assert xor_heads.config.Config().m == default(OneStepConfig, "m")
    assert xor_kparity.config.Config().success_tol == default(XorTrainConfig, "success_tol")


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: OneStepConfig(d=1), "d must be an integer >= 2, got 1"),
        (lambda: OneStepConfig(d=8, noise=0.5), "noise must be in [0, 0.5), got 0.5"),
        (
            lambda: OneStepConfig(d=8, init="x"),
            "init must be one of antisymmetric, independent, orthogonal; ",
        ),
        (lambda: OneStepConfig(d=8, eta=float("inf")), "eta must be a finite number > 0, got inf"),
        (lambda: OneStepConfig(d=8, stop=True), "unknown field 'stop'; allowed: d, m,"),
        (lambda: OneStepConfig(), "d is required (an integer >= 2)"),
        (lambda: V1Config(target=1.5), "target must be in (0, 1], got 1.5"),
        (lambda: V1Config(n=4, k=5), "k must be <= n=4, got 5"),
        (lambda: XorFCNConfig(early_stop=1), "early_stop must be true or false, got 1"),
        (lambda: XorTrainConfig(d=8, cube_fraction=1.0), "cube fraction must be in (0, 1)"),
        (lambda: OneStepConfig(d=8).replace(m=0), "m must be an integer >= 1, got 0"),
    ],
)
def test_a_bad_value_is_one_line_naming_it_and_what_is_allowed(build, message) -> None:
    with pytest.raises(ValueError) as info:
        build()
    assert "\n" not in str(info.value)
    assert message in str(info.value)


def test_replace_keeps_the_other_fields_and_the_type() -> None:
    config = OneStepConfig(d=8, m=4, support=[1, 3])
    changed = config.replace(seed=5)
    assert isinstance(changed, OneStepConfig) and changed.seed == 5
    assert changed.model_dump(exclude={"seed"}) == config.model_dump(exclude={"seed"})
    assert config.support == (1, 3)
