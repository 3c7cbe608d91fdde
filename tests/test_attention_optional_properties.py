"""A map registered without ``Properties`` runs everywhere; A7.3b's property study leaves it out
and says so (SPEC A2, Part E)."""

from __future__ import annotations

import torch

from attnsep import attention
from attnsep.experiments import xor_attention_maps as maps
from test_verdict_attention_properties import CONFIG, learners_and_failers, never

NAME = "_test_plain"


def test_a_map_without_properties_is_registered_and_runs() -> None:
    import attnsep

    @attention.register(NAME)
    def plain(scores: torch.Tensor) -> torch.Tensor:
        return torch.softmax(scores, dim=-1)

    try:
        assert attention.get(NAME) is plain and attention.properties(NAME) is None
        step = attnsep.xor_one_step(d=16, m=4, seeds=2, attention=NAME)
        reference = attnsep.xor_one_step(d=16, m=4, seeds=2, attention="softmax")
        assert step.summary()["success_rate"] == reference.summary()["success_rate"]
    finally:
        attention.unregister(NAME)
    assert NAME not in attention.ATTENTION and NAME not in attention.PROPERTIES


def test_the_property_study_leaves_out_a_map_without_properties() -> None:
    attention.register(NAME)(lambda scores: torch.softmax(scores, dim=-1))
    try:
        (alone,) = maps.verdict.verdict(learners_and_failers(), CONFIG)["companions"]
        records = [*learners_and_failers(), never(NAME)]
        (beyond,) = maps.verdict.verdict(records, CONFIG)["companions"]
    finally:
        attention.unregister(NAME)
    study, _, left_out = beyond["reason"].partition("; left out (no properties declared): ")
    assert left_out.startswith(f"{NAME} (steps inf [inf, inf]")
    assert study == alone["reason"].rstrip(".")  # the separation found without it
    assert beyond["summary"] == alone["summary"]
