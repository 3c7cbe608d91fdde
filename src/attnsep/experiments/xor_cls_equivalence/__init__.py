"""A3 — the standard one-layer transformer with a CLS token trains like the query-vector model
(SPEC A3; SPEC Part G, item 3).

The CLS block of ``models.cls_transformer`` (CLS token at position 0, tokens
``[x_i e_content ; v_i]``, full ``W_Q``, ``W_K``, ``W_V`` per head, SPEC A3's structural mask)
and the query-vector model of SPEC A2 are trained side by side from the same state mapped
through ``theta_h = W_K,hᵀ W_Q,h e_cls`` (orthogonal key blocks), the CLS block on its query
side, each by its own autograd, for ``steps`` steps of size ``eta = eta_scale d^2 ln d``
(``train.cls_descent``). Per step and replica: both losses and both attention rows; the rounding
twin (one ulp off at the start) and the control (``W_Q`` and ``W_K`` trained) beside them.
"""

from __future__ import annotations

from ..base import from_package, register
from . import calibration, config, figure, run, verdict

EXPERIMENT = register(
    from_package(
        "cls-equivalence",
        config,
        run,
        verdict,
        figure,
        calibration,
        tuned_on=(0, 3),
    )
)
