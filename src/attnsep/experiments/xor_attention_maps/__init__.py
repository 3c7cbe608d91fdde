"""A7.3 — softmax is necessary: steps of GD to a small population loss, per attention map.

Each map (the papers' softmax, linear and erf; beyond them the normalized erf and its
shift-invariant form, SPEC Part D, and the maps of A7.3b that pull softmax's properties apart,
SPEC Part E) runs gradient descent on the exact population loss (SPEC A4)
at every step size of a log grid; per replica the number of steps to reach loss <= ``target`` is
recorded. Each map is judged at its own best step size; after the step budget its
specialization and collapse rates (SPEC A6) carry Wilson intervals and its median steps a
bootstrap interval over replicas. Beside each map's dynamics stands its expressivity ceiling
(SPEC Parts E-F), computed per replica on the run's own embeddings: the largest weight the map
can put on one position.

Every map runs at ``(d, m)``; the papers' maps run at ``paper_sizes`` too. The verdict judges
A7.3 on the papers' maps at the sizes with ``m >= d`` only, where every map can put on one
position all the weight its form allows (SPEC Part F: "the statement, not a proxy"), and returns
two findings as companion entries from the same records: A7.3b (beyond the papers: which
property of the map matters, at ``(d, m)``) and A7.3c (the papers' maps at the sizes with
``m < d``, where linear and erf cannot represent the target: a comparison of expressivity). The
pieces: the config and its presets in ``config``, the jobs in ``run`` (population GD at the whole
grid of step sizes at once in ``descent``), the ceiling in ``ceiling``, each map's numbers with
their intervals in ``stats``, the criterion in ``verdict``, the findings in ``finding`` (A7.3b)
and ``expressivity`` (A7.3c), the criterion's hypotheses in ``calibration``, the figure in
``figure``.
"""

from __future__ import annotations

from ..base import from_package, register
from . import calibration, config, figure, run, verdict

EXPERIMENT = register(
    from_package(
        "attention-maps",
        config,
        run,
        verdict,
        figure,
        calibration,
        # 3: the step sizes run together (descent.GridDescent); 4: each record carries its map's
        # expressivity ceiling per replica (ceiling), and the sizes changed
        version=4,
        criterion_version=3,
        tuned_on=(0, 1, 3),
    )
)
