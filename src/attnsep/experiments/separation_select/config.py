"""Part C's config: B5.2's ``m_p*`` search at one token dimension ``d``, and its presets (SPEC
Parts C, E, F)."""

from __future__ import annotations

from pydantic import Field

from ..select_width.config import WidthSearch


class Config(WidthSearch):
    """Per ``(T, q)`` at fixed ``d``: the transformer width ``d + m_p*`` (``m_p*`` as in B5.2:
    the smallest ``m_p`` whose descent reaches loss ``<= target x`` uniform in 90% of ``seeds``
    replicas) and the FCN's proven minimum first-layer width at the same target.

    Criterion (a check, SPEC Parts C, F; criterion version 3, written after the standard data
    of master seeds 0, 1 and 3 were seen). **confirmed**: at every ``(T, q)`` the FCN's minimum
    first-layer width found by bisection on the floor's eigenvalue form
    (``fcn_bottleneck_loss``) equals SPEC B4's bound ``(Td − w)(T − q) / (qT(T − 1)) <= target
    x`` uniform solved for ``w``, ``⌈Td − target·d (T − 1)⌉``, and per ``q`` with at least 3
    ``T``'s these widths are affine in ``T`` to within the rounding (every residual of the
    least-squares line ``<= 1``). **check failed** otherwise: the two are one theorem computed
    two ways, so a failure is a bug in attnsep (``exact.selection_bounds`` or this module), not
    a verdict on the paper. Reported, not decided on: the transformer's ``d + m_p*`` per ``(T,
    q)`` and the width ratio FCN / transformer with their bootstrap 95% intervals (the
    transformer's growth law is B5.2's verdict).
    """

    d: int = Field(default=16, ge=1, description="Token dimension d.")


PRESETS = {
    "quick": {
        "d": 16,
        "q_values": [2],
        "T_values": [8, 16, 32],
        "seeds": 4,
        "samples": 512,
        "solver": "law",
    },
    "standard": {
        "d": 16,
        "q_values": [2, 4],
        "T_values": [32, 128, 512, 2048, 8192, 32768, 65536],
        "seeds": 8,
        "samples": 1024,
        "solver": "law",
        "m_limit": 4096,
    },
    "full": {
        "d": 64,
        "q_values": [2, 3, 4, 8],
        "T_values": [2**k for k in range(5, 17)],
        "seeds": 16,
        "samples": 4096,
        "solver": "law",
        "m_limit": 8192,
    },
}
