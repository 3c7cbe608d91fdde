"""Beyond the papers — k-sparse parity with k heads: a few GD steps instead of one, and how often
the heads collapse (SPEC A1, A6; Part F's finding A1.k).

SPEC A1 generalizes sparse XOR to ``y = s prod_{a in S} x_a`` with ``|S| = k`` and the model
to ``H = k`` heads (A2; the anti-symmetric start becomes a regular simplex). Each job runs GD
for one ``(k, d, m)``, one step-size rule and one gradient at every step size of a grid
``eta = 2^j d^k ln d`` (SPEC A5's ``d^2 ln d`` for ``k = 2``; the scores' gradient at a
near-uniform start is of order ``d^-k``), all grid points and replicas at once: plain GD on the
exact population loss by ``train.grid_descent``, the capped step and the fixed-sample runs by
``train.capped_descent``. It records per replica the first step at
which the certified error is ``<= success_tol`` (the one-step claim's success, SPEC A6),
success after one step, and collapse after the last step.
"""

from __future__ import annotations

from ..base import from_package, register
from . import config, figure, run, verdict

SECTION = "beyond the papers"
"""The report section this finding belongs to: not a claim of either paper."""

EXPERIMENT = register(
    from_package(
        "kparity-steps",
        config,
        run,
        verdict,
        figure,
        section=SECTION,
        kind="finding",
        criterion_version=3,
        # 3: a finding (SPEC Part F): collapse rate and steps among the non-collapsed, plain GD
        # beside the capped step, population beside fixed samples
        tuned_on=(0, 1, 3),
        # 3: records carry the rule and the gradient; the capped and fixed-sample runs added
        version=3,
    )
)
