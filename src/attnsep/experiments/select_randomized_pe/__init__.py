"""B5.3d — the randomized-positional-encoding protocol: train on mixed lengths up to 40, test up
to 500 (SPEC B5.3, Part G, item B5.3d), a *finding* beside B5.3.

The protocol is that of Ruoss et al. (2023, "Randomized Positional Encodings Boost Length
Generalization of Transformers"): training sequences of every length up to 40 (here each step
one length uniform in ``[q + 1, 40]`` for its whole batch, ``train.selection_lengths``), test
lengths up to 500. Both PE modes train the position block by gradient descent on the loss exact
over the tokens (SPEC B3) for the same steps at the same width ``m_p``, the rate scaled to the
rank each spans (``select_common.ScaledTraining``: ``m_p``, or ``min(m_p, 40)`` for a fixed
table). Fixed PE: one table for positions ``1..500``, of which training reads only the first 40;
stochastic PE: this paper's encoding, a fresh random unit vector per position of every sequence
(SPEC B2). Beside stochastic PE: the ``W = αI`` family at the trained ``α`` (the trained
position block's mean diagonal, ``tr W_pp / m_p``) at every test length, one independent draw
of the family's products per seed (``select_common.family_loss_at``).

Names: this paper's "stochastic positional encoding" (fresh random encodings per sequence) is not
the stochastic positional encoding of Liutkus et al. (2021, "Relative positional encoding for
Transformers with linear complexity"), a relative encoding for linear-complexity attention
drawn from random features of a positional kernel; nor is it Ruoss et al.'s randomized encoding
(the sorted positions of a random subset of a longer range): only their protocol is borrowed.
"""

from __future__ import annotations

from ..base import from_package, register
from . import config, figure, run, verdict

EXPERIMENT = register(
    from_package(
        "randomized-pe",
        config,
        run,
        verdict,
        figure,
        kind="finding",
        tuned_on=(0, 3),
    )
)
