"""B5.1 — convergence: gradient descent reaches the optimum of the ``W = αI`` family at every
PE width ``m_p`` (SPEC B5.1, Parts D, E and F).

At a finite ``m_p`` random encodings cross-talk, so even the best ``W = αI`` keeps a loss
(``exact/family.py``: about 0.25, 0.15, 0.09, 0.05, 0.03 at ``m_p = 128 … 2048``, ``d = 10``,
``T = 20``, ``q = 3``; about ``c m_p^(−0.75)``). With i.i.d. sphere encodings and ``q >= 3`` no
finite ``m_p`` reaches zero. The paper's claim is a learning claim (gradient descent converges),
so it is judged on learning (SPEC Part F): the trained loss over the family's best at every
``m_p``, and ``W``'s alignment with ``W*``. That the family's floor falls with ``m_p`` is a fact
of the family, not of learning: its decay exponent, and the trained loss over uniform attention's
at the largest ``m_p``, are reported beside the verdict and do not decide it.

Training (*choice*, by cost; the paper trains the full ``W`` by SGD on fresh batches of 256,
still available as ``trainable="full"``, ``objective="sgd"``): the position block alone, by
gradient descent on the loss exact over the Gaussian tokens with fresh ``(y, PE)`` draws per
step (SPEC B3). The content block then stays ``0``, so the evaluation is exact over the tokens
too, and the token noise of plain SGD is gone. Scaling with ``m_p`` (``ScaledTraining``):
``lr = lr_per_dim · m_p`` keeps the pace of ``α``; the off-diagonal entries of ``W``
random-walk with the ``(y, PE)`` noise, ``‖noise‖² / ‖αI‖² ≈ 1.7e-5 κ² S m_p / B``
(``κ = lr_per_dim / POSITION_LR_PER_DIM``, ``S`` steps, batch ``B``; measured at ``m_p = 256``),
so the batch grows like ``m_p``. Calibrated on seeds 100 and 101 (never the preset's seeds):
``κ = 3``, ``S = 400``, ``B = 4 m_p`` gives ``cos(W, W*) ≈ 0.994`` and a loss within the
evaluation noise (±2%) of the family's best at ``m_p = 512`` (``α = 4.22`` against the best
4.33); ``κ S = 600`` leaves ``α`` 0.2 short (+2%, up to +16% at ``κ S = 300``). Above ``m_p =
512`` the steps grow like the floor's ``m_p^(−0.76)`` falls (``config.steps_at``, version 5:
678 at 1024, 1,148 at 2048), since the family's curvature in ``α`` falls with it.

Cost (one thread, CPU seconds, a shared 2-core machine): a step costs its two products
(``2 B m_p²`` multiply-adds) and ``(q + 1) m_p`` normal draws per sequence (``train.selection``,
:func:`b51_work`); measured, about 0.07, 0.2 and 0.6 ms per sequence at ``m_p = 512``, 1024 and
2048, so a job (``1600 m_p`` sequences) costs about 4, 15, 60 s at ``m_p = 128, 256, 512``,
about 400 s at 1024 and 2000 to 3000 s at 2048 (400 steps), where the products take 0.55 to
0.75 of it (``bench/bench_select_convergence.py``). The ``standard`` preset (4 seeds) therefore
stops at ``m_p = 512`` (about 350 job-seconds with the evaluation and the family's draws);
``m_p = 1024`` alone would add about 1600. Since version 3 the two products run in float32
(``products``; ``W`` and its updates stay float64): B5.1's steps at ``m_p = 512`` take 0.78 of
float64's time and B5.1b's 0.83 (bench row 12), the trained ``W`` within ``2e-7`` (relative)
of float64's; a standard job then took about 4.5, 13.5 and 52 s at ``m_p = 128, 256, 512``
(B5.1b: 19, 51, 182 s), with two other jobs sharing the machine's two cores. In the full
preset's run (400 steps, two jobs on two cores) a job took about 170 s at 1024 and 1,000 s at
2048; one at 2048 trained for 1,200 steps took 2,900 to 3,000 s.
"""

from __future__ import annotations

from ..base import from_package, register
from . import calibration, config, figure, run, verdict

EXPERIMENT = register(
    from_package(
        "select-convergence",
        config,
        run,
        verdict,
        figure,
        calibration,
        version=5,  # 3: float32 products; 4: the replicas by master seed; 5: steps_at
        priced_from=5,  # more steps above m_p = 512
        criterion_version=3,  # 3: judged on learning only (SPEC Part F)
        tuned_on=(0, 1, 3),
    )
)
