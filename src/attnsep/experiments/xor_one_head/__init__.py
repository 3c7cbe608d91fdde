"""A7.10 — one head instead of two on sparse XOR, at the sizes where two heads succeed
(SPEC A7.10; SPEC Part G, item 8), a *finding*.

On the replicas of SPEC A7.1 (same master seed, embeddings, supports and ``theta_1`` at each
``d``, width on A7.1's schedule ``m(d) = ceil(c (ln d)^2)``), three models take one population
step with SPEC A5's ``eta`` and then capped gradient descent to a step budget
(``train.tied_heads``): the two-head model, one head used twice (tied queries,
``f = -(g.x)^2``) and one head alone (``f = -(g.x)``). Reported, no verdict: success (SPEC A6's
certified error ``<= success_tol``) after the step and after the budget with Wilson intervals,
the mean final loss with bootstrap intervals, and the best loss each ablation can reach at all.
"""

from __future__ import annotations

from ..base import from_package, register
from . import config, figure, run, verdict

EXPERIMENT = register(
    from_package(
        "one-head",
        config,
        run,
        verdict,
        figure,
        kind="finding",
        section="controls and baselines",
        tuned_on=(0, 3),
    )
)
