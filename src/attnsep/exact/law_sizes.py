"""The sizes of ``exact.family``'s search and of ``exact.family_law`` (SPEC B5.2), in a module
without numpy or torch, so that a job's memory and work are priced (``Experiment.peak``,
``Experiment.work``: the plan) without loading them."""

GRID_POINTS = 32
"""The search over ``alpha``: a grid of this many points in ``ln(1 + alpha)`` ..."""
GOLDEN_ROUNDS = 30
"""... then this many golden-section rounds, one new evaluation each."""

TOP = 32
"""Expected number of off-subset products drawn exactly per sequence (the upper tail)."""
TABLE = 2**16 + 1
"""Points of the tabulated distribution function of ``θ`` on ``[0, π]``."""
NODES = 32
"""Gauss-Legendre quadrature nodes of the bulk's moments."""
MOMENT_STEP = 2e-4
"""Spacing of ``family_law.moment_table`` in ``ln(1 + c)``: its interpolation error is ~1e-11
in ``log`` (the rounding of the values; ``tests/test_family_law.py``)."""
MIN_OCTAVE = 12
"""The smallest table reaches ``c = 2^12``: one table serves most of a width's search."""
