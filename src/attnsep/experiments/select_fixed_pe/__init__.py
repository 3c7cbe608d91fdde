"""B5.6 — fixed positional encoding fits in distribution and fails out of distribution (SPEC
B5.3, Part G, item B5.6), with stochastic PE beside it.

The paper (seed 003): "Experiments show fixed-PE transformers fail to reach zero OOD loss while
stochastic-PE transformers extrapolate to unseen lengths", and "fixed positional encoding leaves
a strictly nonzero OOD loss even when in-distribution loss converges to zero". B5.3 judges the
stochastic side; this entry judges the fixed side on its own: its training loss going to (near)
zero at the training length ``T`` while its loss at ``T' = 2T, 4T, 8T`` stays a sizable fraction
of uniform attention's.

Training as B5.3 (``select_common.ScaledTraining``): the position block by gradient descent on
the loss exact over the tokens with fresh ``(y, PE)`` draws per step (SPEC B3), from ``W = 0``,
the rate scaled to the rank each mode spans; a fixed PE is one table of ``8T`` rows (positions
``1..max T'``) of which training reads the first ``T``. Evaluation: the fixed set of
``eval_size`` sequences per length of SPEC B5.3, exact over the tokens. The in-distribution loss
curve is the per-step training loss (exact over the tokens, Monte Carlo over the step's batch),
its mean over the ``steps // 20`` steps ending at each of ``checkpoints`` log-spaced steps.

Beside the measurements the figure draws the limit of a fitted fixed PE that sees nothing beyond
``T`` (``exact.blind_pe``): a reference, not part of the criterion.
"""

from __future__ import annotations

from ..base import from_package, register
from . import calibration, config, figure, run, verdict

EXPERIMENT = register(
    from_package(
        "fixed-pe",
        config,
        run,
        verdict,
        figure,
        calibration,
        tuned_on=(0, 3),
    )
)
