"""SPEC Part G, item 2b — sample-complexity baselines beside A7.5b's ``n*(d)`` (finding A7.5c;
the paper, seed 000, on its ``d^4`` bound: "The authors acknowledge that this bound is likely
loose compared to empirical observations (which suggest O(d) scaling) and to known bounds for
FFNNs").

Three ways to learn the 2-sparse parity from samples, each replica reading samples until it has
the task, ``n*(d)`` the 90% quantile of those counts over replicas (bootstrap 95% interval over
replicas, ``inf`` when more than 10% never get there within the budget):

* **Gaussian elimination over GF(2)** on noiseless samples (``exact.gf2``): samples until the
  inputs span ``GF(2)^d``, when the parity vector is determined; it ignores the sparsity. Its
  exact law, ``P(n vectors span) = prod_{i<d}(1 - 2^(i-n))``, is checked against the simulation
  (largest gap between the two distribution functions against the DKW 95% band).
* **Pair search**: samples until one pair of coordinates is consistent with every label; it
  uses the sparsity and sits near the information floor ``log2 C(d, 2)`` (a label is one bit).
* **A two-layer ReLU MLP trained by online SGD** (``train.fcn_online``: width ``width``,
  ``batch`` fresh samples a step, learning rate ``min(lr, lr_scale x batch / d)``): samples
  consumed until its sign error on held-out samples first reaches ``<= 1%`` (A7.6's success
  definition), checked on a geometric grid of steps; budget ``max_samples``.

Reported, not judged: ``n*(d)`` per method, the exponents of ``n* = c d^alpha`` with bootstrap
intervals, beside the lines ``d`` (the elimination's floor) and ``d^4`` (Corollary 3's
sufficiency bound for the one-step transformer, A7.5a).
"""

from __future__ import annotations

from ..base import from_package, register
from . import config, figure, run, verdict

EXPERIMENT = register(
    from_package(
        "sample-baselines",
        config,
        run,
        verdict,
        figure,
        kind="finding",
        section="controls and baselines",
        tuned_on=(0, 3),
    )
)
