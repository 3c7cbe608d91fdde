"""B5.4 — FCNs cannot: trained MLP loss vs first-layer width against the exact floor, and the
width each model needs at a fixed loss, in several ``(T, d, q)`` settings (SPEC B4, B5.4, Parts
D, F). A *check* (SPEC Part F): the floor is a theorem, confirmed numerically on trained nets.

* FCN: MLPs on ``[vec X ; 1_y]`` (``train.fcn.train_selection``) at widths ``f·Td`` for each
  fraction ``f`` of the grid, ``fcn_replicas`` nets each; the floor at width ``w`` is
  :func:`fcn_bottleneck_loss` (the least loss of any predictor that sees ``w`` linear
  functionals of ``vec X`` and ``y``; equal to SPEC B4's ``(Td − w)(T − q)/(qT(T − 1))`` for
  ``d ≤ w ≤ Td``). The FCN's width needed is the smallest grid width whose mean loss over the
  nets is ``≤ TARGET × uniform``.
* Transformer: the stochastic-PE selector, position block trained on the population loss
  (``train.selection``, lr :func:`selector_lr`), its exact-over-tokens loss on
  ``eval_size`` fresh sequences, encodings drawn by law (``metrics.selection.law_exact_loss``:
  the explicit encodings of the full preset's ``T = 128`` search held 4 GB at ``m_p = 128``
  and could not be held at ``m_p = 1024``); ``m_p*`` is the smallest ``m_p`` (bisection,
  ``search.smallest_passing``) at which at least half of the replicas reach ``TARGET ×
  uniform``; its width needed is ``d + m_p*``.

Thresholds carry bootstrap intervals over replicas (``stats.threshold_draws``).
"""

from __future__ import annotations

from ..base import from_package, register
from . import calibration, config, figure, run, verdict

EXPERIMENT = register(
    from_package(
        "fcn-selection",
        config,
        run,
        verdict,
        figure,
        calibration,
        searches=True,
        version=5,  # 3: FCNs in float32; 4: the transformer by law; 5: narrow layers (rounding)
        kind="check",
        criterion_version=3,
        tuned_on=(0, 1, 3),
    )
)
