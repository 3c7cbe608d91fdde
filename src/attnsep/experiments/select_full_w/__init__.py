"""B5.7 — population gradient descent on the full ``W`` (``(d + m_p)²`` entries, from ``W = 0``)
converges to the ground truth ``W*`` (SPEC B2, B3; SPEC Part G, item B5.7).

The paper analyses gradient descent on the population loss and proves that it "converges to
zero population loss" with ``W`` aligned with the ground truth (seed 003: "GD with stochastic PE
converges to zero population loss with transformer width Θ(d + q log T)"; metric: "cosine
similarity to ground-truth weights"). B5.1 trains the position block alone; this entry takes the
full ``W``. Path of every result (``train.full_w``, its docstring proves it): the logits read only
``W_xp = W[:d, d:]`` and ``W_pp = W[d:, d:]`` (the query's content is 0, so ``W[:, :d]`` has
gradient 0); ``x → −x`` keeps ``W_xp = 0`` on the population-gradient path, so the loss stays
exact over the Gaussian tokens; the rotation invariance of stochastic encodings keeps ``W_pp =
αI``. Population GD on the full ``W`` at rate ``lr_per_dim · m_p`` is therefore exactly GD on
``α`` at rate ``lr_per_dim``, run here to a stopping rule (``samples`` common ``(y, PE)`` draws),
and ``cos(W, W*) = 1`` on it. What is not given by symmetry is measured: the autograd gradient of
the full ``W`` (explicit encodings and tokens, mirrored tokens) in ``W[:, :d]`` and ``W_xp``,
which must vanish up to rounding; GD's loss against the ``W = αI`` family's best (the first
minimum GD meets could be a worse one); and whether the limit is a minimum of the full ``W`` or a
saddle that any perturbation (rounding, sampling) leads GD away from: the Hessian's eigenvalue on
each of its invariant blocks (symmetric traceless and antisymmetric ``W_pp``, ``W_xp``), over the
scale's ``L''(α)``.

Cost (one thread): a job is ``steps`` evaluations of ``samples x T`` softmax weights, the family's
best, 7 exact-over-tokens losses of ``curvature_samples`` sequences at width ``m_p`` (two
``m_p²`` products each) and 3 sampled ones with tokens; about 0.5 s at ``m_p = 128`` and 2 s at
512 (``standard``: 16 jobs).
"""

from __future__ import annotations

from ..base import from_package, register
from . import calibration, config, figure, run, verdict

EXPERIMENT = register(
    from_package(
        "select-full-w",
        config,
        run,
        verdict,
        figure,
        calibration,
        tuned_on=(0, 3),
    )
)
