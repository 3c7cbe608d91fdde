"""B5.5 — the width's ``d``- and ``q``-dependence with the whole ``W`` trained: ``m_p*(d, q)`` of
SGD on the full ``W``, content block included, at one length ``T`` (SPEC Part G, item B5.5;
SPEC B2, B3; the verdict is ``verdict``).

B5.2 trains the position block alone, where ``m_p*`` cannot depend on ``d`` (the loss is ``d``
times a ``d``-free function); here the content rows ``W_xp`` are trained too, so their sampling
noise (``d x m_p`` entries, tokens of norm ``√d``) may make the needed PE width grow with ``d``.
Per ``(d, q)`` the search bisects on ``m_p`` (``train.selection_full.full_threshold``), each
probe trained by SGD to the stopping rule of ``selection_threshold``, every replica's outcome
kept. Beside it the ``W = αI`` family's threshold ``m_p^fam`` (what population descent on the
position block reaches, ``d``-free).
"""

from __future__ import annotations

from ..base import from_package, register
from . import calibration, config, figure, run, verdict

EXPERIMENT = register(
    from_package(
        "select-width-qd",
        config,
        run,
        verdict,
        figure,
        calibration,
        searches=True,
        tuned_on=(0, 3),
    )
)
