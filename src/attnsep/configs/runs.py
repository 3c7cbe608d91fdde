"""What a reproduction runs: the presets, the plan's calibration budget, and the master seeds of
the preregistration and of a replication (SPEC Part D, E, F)."""

from __future__ import annotations

PRESET_HELP = {
    "quick": "The quick preset (default): about a minute on 2 cores; may be inconclusive.",
    "standard": "The sizes that separate the papers' laws from their rivals (SPEC Part D): "
    "about 25 minutes on 2 cores.",
    "full": "Paper-scale sizes, for a GPU or a cluster.",
}
"""The experiments' presets (``experiments.base.PRESETS``) and what each is for."""

CALIBRATION_BUDGET = 1.0
"""Seconds per experiment the plan's calibration may spend timing jobs (``--calibration``,
``engine.calibration``)."""

PREREGISTRATION_SEED = 3
"""The exploratory master seed whose run each criterion's error rates are fitted to, before any
confirmatory run (SPEC Part E, ``report.preregistration``); never judged in a replication."""
REPLICATION_FIRST_SEED = 4
"""``--replicate N`` judges master seeds ``4, 5, ...``: the first seeds no criterion was written
on and no error rate was fitted to (``report.replication``)."""
REPLICATION_MAX = 100
"""The most master seeds one replicated reproduction judges."""
REPLICATION_SHARE = 0.8
"""A replicated claim publishes the verdict reached on at least this share of its seeds (4 of
5), else ``unstable``."""
