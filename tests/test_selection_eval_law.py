"""The law-drawn evaluation of the position block (``metrics.selection.law_exact_loss``)
against the evaluation on explicit encodings (``evaluate_length``): the same law (SPEC B3)."""

import pytest
import torch

from attnsep.metrics.selection import evaluate_length, law_exact_loss
from attnsep.positional_encodings import StochasticPE
from attnsep.tasks.selection import TokenSelection

SIZE = 8000
Z = 4.5  # |difference| / its s.e., for 6 comparisons per kind


def _W(d: int, m_p: int, replicas: int) -> torch.Tensor:
    """A position block with the structure of a trained one (``αI``) plus a generic part."""
    g = torch.Generator().manual_seed(3)
    W = torch.zeros(replicas, d + m_p, d + m_p, dtype=torch.float64)
    W[:, d:, d:] = 2.5 * torch.eye(m_p) + 0.8 * torch.randn(replicas, m_p, m_p, generator=g)
    return W


@pytest.mark.parametrize("kind", ["sphere", "gaussian"])
@pytest.mark.parametrize(("T", "d", "q", "m_p"), [(24, 4, 2, 12), (10, 3, 1, 2)])
def test_law_evaluation_matches_explicit_encodings(kind, T, d, q, m_p):
    W = _W(d, m_p, 3)
    task = TokenSelection(d=d, T=T, q=q)
    explicit = evaluate_length(W, task, StochasticPE(0, 3, m_p, kind), T, 0, SIZE)
    mean, se = law_exact_loss(W[:, d:, d:], d, q, T, kind, 0, SIZE)
    assert explicit.exact is not None and explicit.exact_stderr is not None
    z = (mean - explicit.exact) / torch.sqrt(se**2 + explicit.exact_stderr**2)
    assert bool((z.abs() < Z).all()), (mean, explicit.exact, z)
    # the spread of the per-sequence losses is the same law's too
    ratio = se / explicit.exact_stderr
    assert bool(((ratio > 0.85) & (ratio < 1.15)).all()), ratio


def test_replica_draws_do_not_depend_on_the_ensemble():
    W = _W(2, 6, 3)
    alone, _ = law_exact_loss(W[:1, 2:, 2:], 2, 2, 16, "sphere", 5, 64)
    together, _ = law_exact_loss(W[:, 2:, 2:], 2, 2, 16, "sphere", 5, 64)
    assert torch.equal(alone, together[:1])
    again, _ = law_exact_loss(W[:, 2:, 2:], 2, 2, 16, "sphere", 5, 64)
    assert torch.equal(again, together)


def test_bad_size_is_named():
    with pytest.raises(ValueError, match="eval size"):
        law_exact_loss(_W(2, 2, 1)[:, 2:, 2:], 2, 1, 4, "sphere", 0, 1)
