"""A7.9 — negative control: sparse XOR in a rotated basis (SPEC Part G, item 7), a *finding*.

The transformer's advantage rests on the task being sparse in the basis of its tokens: the
query-vector model (SPEC A2) reads the coordinates ``x_a`` as tokens and attends to positions.
Hide the two relevant coordinates by a random rotation and the advantage should vanish, while a
fully-connected net, whose Gaussian first layer makes its training rotation-equivariant, should
not notice. Gaussian inputs ``x ~ N(0, I_d)``; axis task ``y = -x_i x_j``; rotated task
``y = -<u,x><v,x>`` with ``(u, v)`` a Haar-random orthonormal pair; both ``E y^2 = 1``. The
transformer's population loss is exact (``exact.gaussian_xor``), the MLP's is estimated on
fresh test inputs (``train.gaussian_xor``).
"""

from __future__ import annotations

from ..base import from_package, register
from . import config, figure, run, verdict

EXPERIMENT = register(
    from_package(
        "rotated-basis",
        config,
        run,
        verdict,
        figure,
        kind="finding",
        section="controls and baselines",
        tuned_on=(0, 3),
    )
)
