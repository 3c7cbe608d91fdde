"""Part C, token selection — width needed vs ``T``: the trained transformer's ``d + m_p*``
against the FCN's proven minimum first-layer width (SPEC Part C, E, F).

A *check* (SPEC Part F): the FCN side is the theorem (``fcn_min_width``, SPEC B4): any FCN on
``[vec X ; 1_y]`` reaching the target needs first-layer width ``>= ⌈Td − target·d (T − 1)⌉``
(``ceil(0.8 T d + 0.2 d)`` at target 0.2) — exact, affine in ``T`` (the bound is the dense first
layer's). The verdict confirms it numerically: the width found by bisection on the floor's
eigenvalue form (``exact.selection_bounds.fcn_bottleneck_loss``) equals the closed form solved
for ``w``, and is affine in ``T`` to within the rounding; a failure is a bug in attnsep.

The transformer side reuses B5.2's machinery (``selection_threshold``: bisection on ``m_p``,
population gradient descent from ``W = 0``, or SGD to a stopping rule with ``solver="sgd"``;
per-replica outcomes stored). Its width ``d + m_p*`` and the ratio FCN / transformer per ``T``
are reported with bootstrap intervals and drawn; its growth law is judged in B5.2 only (the same
law, one verdict). Trained FCNs are B5.4's subject and are not trained here.
"""

from __future__ import annotations

from ..base import from_package, register
from . import config, figure, run, verdict

EXPERIMENT = register(
    from_package(
        "separation-select",
        config,
        run,
        verdict,
        figure,
        searches=True,
        version=5,
        kind="check",
        criterion_version=3,
        tuned_on=(0, 1, 3),
    )
)
