"""SPEC Part G, item 2a — an FFNN's parameters grow linearly in ``d`` through its dense first
layer, not its width (claim A7.8; the paper, seed 000: "Feed-Forward Neural Networks (FFNNs)
require a number of parameters scaling at least linearly with the input dimension d
(specifically Ω(d)) to discover the hidden support and achieve low loss. This linear dependency
arises from the dense, fully connected first layer of FFNNs, which couples the weight dimension
to the input size.").

Measured by training: the two-layer ReLU net ``sum_k a_k relu(w_k . x + b_k) + c`` of SPEC A7.6
(``models.mlp``) trained by SGD on fresh samples every step with A7.6's step budget and early
stopping (``train.fcn``; one replica per support, stream ``(seed, e, ...)``). A replica succeeds
under A7.6's one definition: test sign error ``<= 1%`` on 8192 fresh samples. ``w*(d)``: the
smallest hidden width whose success rate over the replicas is ``>= 0.9``, by doubling from 2 then
bisection, plus probes at ``2 w*`` and ``4 w*`` for the bootstrap (``fcn_search``; width 1 is
not probed: one ReLU unit's sign is a
halfspace of ``x``, which errs on at least a quarter of the cube). ``P*(d) = w*(d + 2) + 1``,
the net's trainable parameters at ``w*``. Per-replica outcomes are stored at every probe, so
``w*``, ``P*`` and their exponents in ``d`` get bootstrap intervals over the replicas.
"""

from __future__ import annotations

from ..base import from_package, register
from . import calibration, config, figure, run, verdict

EXPERIMENT = register(
    from_package(
        "ffnn-width",
        config,
        run,
        verdict,
        figure,
        calibration,
        tuned_on=(0, 3),
        searches=True,
    )
)
