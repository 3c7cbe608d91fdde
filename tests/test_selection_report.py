"""``results.length_record``: one evaluation length of a trained selector, averaged over replicas
with the standard error of that average (SPEC B5.3)."""

from __future__ import annotations

import math

import pytest
import torch

from attnsep.exact.selection_bounds import uniform_attention_loss
from attnsep.metrics.selection import LengthEval
from attnsep.results import length_record


def evaluation(exact: bool) -> LengthEval:
    loss = torch.tensor([1.0, 2.0], dtype=torch.float64)
    stderr = torch.tensor([0.3, 0.4], dtype=torch.float64)
    return LengthEval(
        length=16,
        d=2,
        loss=loss,
        stderr=stderr,
        exact=loss - 0.5 if exact else None,
        exact_stderr=stderr / 2 if exact else None,
    )


def test_replica_mean_and_the_standard_error_of_that_mean() -> None:
    record = length_record(evaluation(exact=True), T=8, q=2)
    assert record["loss"] == pytest.approx(1.5)
    assert record["loss_per_coord"] == pytest.approx(0.75)
    # independent evaluation sets: var(mean) = (0.3^2 + 0.4^2) / 2^2
    assert record["stderr"] == pytest.approx(math.sqrt(0.3**2 + 0.4**2) / 2)
    assert record["exact_loss"] == pytest.approx(1.0)
    assert record["exact_stderr"] == pytest.approx(math.sqrt(0.15**2 + 0.2**2) / 2)
    assert record["uniform_attention_loss"] == pytest.approx(
        float(uniform_attention_loss(16, 2, 2))
    )
    assert record["T"] == 16 and not record["in_distribution"]
    assert record["per_replica"]["loss"] == [1.0, 2.0]


def test_no_exact_loss_when_the_exact_form_does_not_apply() -> None:
    record = length_record(evaluation(exact=False), T=16, q=2)
    assert record["in_distribution"]
    assert record["exact_loss"] is None and record["exact_stderr"] is None
    assert record["per_replica"]["exact_loss"] is None
