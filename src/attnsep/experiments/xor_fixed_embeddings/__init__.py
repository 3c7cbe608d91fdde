"""SPEC Part G, item 1 — linear classifiers on fixed embeddings need a dimension exponential in
``k`` (claim A7.7; the paper, seed 000: "linear classifiers with fixed embeddings fail to learn
this task unless their embedding dimension scales exponentially with k").

The model: a linear readout on ``N`` frozen random features ``phi_j(x) = relu(w_j . x / sqrt(d) +
b_j)``, ``w_j ~ N(0, I_d)``, ``b_j ~ N(0, 1)`` (``features="step"``: ``1{w_j . x / sqrt(d) + b_j >
0}``), fitted by exact least squares over the whole cube ``{-1,+1}^d`` (the population optimum of
a linear readout, ``d <= 16``), so a failure is the embedding's, not the training's
(``exact.fixed_features``). The target: the ``k``-sparse parity ``y = prod_{a in S} x_a``, ``S``
uniform per replica. Success: A7.6's one definition, sign error ``<= 1%``, evaluated exactly
over the cube. Per replica ``N_r`` is the smallest ``N`` (features nested: the first ``N`` of one
draw) whose readout succeeds, all ``N`` at once from one incremental QR (features that are zero
or affine on the whole cube add nothing, so ``N_r`` may exceed ``2^d`` at small ``d``).
``N*(d, k)``: the smallest ``N``
reached by ``>= 90%`` of replicas. The number of Walsh functions of degree ``<= k``, ``sum_{j <=
k} C(d, j) ~ d^k / k!``, is drawn beside it.
"""

from __future__ import annotations

from ..base import from_package, register
from . import calibration, config, figure, run, verdict

EXPERIMENT = register(
    from_package(
        "fixed-embeddings",
        config,
        run,
        verdict,
        figure,
        calibration,
        tuned_on=(0, 3),
        searches=True,
    )
)
