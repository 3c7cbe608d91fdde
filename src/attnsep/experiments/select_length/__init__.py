"""B5.3 — length generalization: train at ``T``, evaluate at ``T' = T, 2T, 4T, 8T, 16T``;
stochastic PE against fixed PE and uniform attention, the family ``W = αI`` **at the trained
``α``** beside them (SPEC B5.3, Parts E and F); B5.3b — in distribution, how fast fixed and
stochastic PE's training losses converge (a companion entry).

B5.3 is judged on its uniform-relative parts only (Part F): once a trained ``W`` is close to
``αI``, a loss within 1.5 x the family at the trained ``α`` is near-automatic, so that
comparison is reported, not judged. The family's loss at ``T'`` with ``α`` fixed at its best
for the training length ``T`` (``at_train_alpha``, one independent draw per seed) is what a
``W`` learned at ``T`` that had found the family's optimum there scores at ``T'``. The family's
best re-tuned at ``T'`` (``best_family_loss``) is kept beside it: no ``W`` trained at ``T`` can
meet it, since the best ``α`` grows with ``T'`` (``exact/family.py``, ``d = 10``, ``q = 3``,
``m_p = 256``: ``α = 4.0`` at ``T = 20``, ``6.6`` at ``320``; the trained-``α`` family sits 1.2,
1.9, 3.2, 4.5 times above the re-tuned best at ``2T … 16T``). Both are read from the stored
records.

B5.3b (``convergence``) reads the per-step training losses each run stores
(``step_losses``, on the run's first record): the steps a run needs until its running mean stays
within 10% of its own final loss.

Training: as B5.1 (``select_common.ScaledTraining``): by default the position block by gradient
descent on the loss exact over the tokens; the evaluation uses the fixed set of ``eval_size``
sequences per length of SPEC B5.3 (128, as in the paper), exact over the tokens. Both PE modes
train at the same width ``m_p`` and for the same steps; the rate is scaled to the rank each
spans (``m_p`` for stochastic PE, ``min(m_p, T)`` for a fixed table).

B5.3c, the corollary (a companion entry, ``corollary``): the loss at ``T' = 4T``
of stochastic PE trained at ``T``, against ``m_p`` (``corollary_widths``), beside the family at
the trained ``α`` with the same ``m_p``; its records carry ``"role": "corollary"`` and B5.3's
and B5.3b's analyses leave them out (:func:`main_records`).
"""

from __future__ import annotations

from ..base import from_package, register
from . import calibration, config, figure, run, verdict

EXPERIMENT = register(
    from_package(
        "length-generalization",
        config,
        run,
        verdict,
        figure,
        calibration,
        version=4,  # 4: each run's per-step training losses (B5.3b)
        criterion_version=3,  # 3: B5.3 on its uniform-relative parts, B5.3b on convergence
        tuned_on=(0, 1, 3),
    )
)
