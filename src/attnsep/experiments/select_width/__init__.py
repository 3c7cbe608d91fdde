"""B5.2 — width: ``m_p*(T)``, the smallest PE width whose trained selector reaches the success
target, and its growth law ``a + b (ln T)^p`` (``p`` free) decided against ``c T^alpha`` (SPEC
B5.2, Parts E and F; the verdict is ``verdict``).

Per ``(T, q, d)`` the search bisects on the integer ``m_p``; every probe keeps each replica's
outcome, so the bootstrap over replicas re-runs the search on the stored probes. Three solvers
(``selection_threshold``), all on the position block from ``W = 0``:

* ``population`` (default): gradient descent on the population loss. By the rotation symmetry
  of the encodings its path is ``W = α(t) I`` and it comes to rest at the first minimum of the
  ``W = αI`` family's loss; each replica is an independent Monte Carlo estimate of that loss.
* ``law``: the same descent, each replica's loss evaluated through the law of the encodings'
  products (``exact.family_law``: the upper tail drawn exactly, the bulk by its exact moments),
  at a cost that does not grow with ``T`` — how ``T`` reaches ``2^16`` (held against the direct
  draw in ``tests/test_family_law.py``).
* ``sgd``: stochastic gradient descent on the full position block, each probe trained until a
  stopping rule says it converged, beside the family's threshold as a yardstick. Its noise in
  the ``m_p² − 1`` directions off ``I`` needs a batch growing with ``m_p``: at ``T = 1024,
  m_p = 200`` a batch of 64 stalls at 0.54 x uniform where the family reaches 0.25.

With the position block alone the loss is ``d`` times a ``d``-free function of ``W``, so
``m_p*`` does not depend on ``d`` under either solver (tested); ``d`` enters C's width
``d + m_p*`` additively. The law is fitted per ``(q, d)`` series (*choice*: the paper's
``Õ(q log T)`` at fixed ``q`` is ``a + b (ln T)^p``, ``Õ`` hiding polylog factors).

The criterion's error rates are measured by simulation (``calibration.hypotheses``, SPEC Parts
E, F): each simulated run redraws the law's parameters from their fits to bootstrap draws of the
run, each replica's latent threshold is drawn around that law with the run's replica noise, and
searched by ``search.smallest_passing`` exactly as ``population_threshold`` searches.
"""

from __future__ import annotations

from ..base import from_package, register
from . import calibration, config, figure, run, verdict

EXPERIMENT = register(
    from_package(
        "select-width",
        config,
        run,
        verdict,
        figure,
        calibration,
        searches=True,
        version=5,
        criterion_version=4,
        tuned_on=(0, 1, 3),
    )
)
