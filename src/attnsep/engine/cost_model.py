"""How a job's cost grows with its config, for ``--plan`` at new sizes.

Each experiment counts the work of one of its jobs (``Experiment.work``, helpers in
``experiments.costs``); :func:`fit` turns an experiment's timed jobs into a floor (the fastest
job's seconds: a job's fixed cost) and seconds per unit of work above it, and :func:`predict`
applies them to the jobs without a timing. Fitted on the quick preset's published timings, it
predicted the standard preset's within 0.44x to 3.0x per experiment and 1.22x in total
(``docs/cluster.md``).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable

from ..experiments import base
from ..experiments.costs import Config, Parts


def work(name: str, config: Config) -> Parts | None:
    """The work of one job of ``name`` by part (one part ``""`` unless its models differ), as
    the experiment counts it (``Experiment.work``); None when it has no count or the config is
    from another version of the experiment."""
    try:
        count = base.get(name).work
    except ValueError:  # not an experiment of this version
        return None
    if count is None:
        return None
    try:
        units = count(config)
    except (KeyError, TypeError, ValueError):  # a config from another version of the experiment
        return None
    parts = units if isinstance(units, dict) else {"": units}
    return {part: float(u) for part, u in parts.items() if u > 0}


def searches(name: str) -> bool:
    """Whether experiment ``name``'s work takes a searched threshold from the paper's law."""
    return base.get(name).searches


Model = dict[str, tuple[float, float]]
"""Per part: ``(floor seconds, seconds per unit of work)``."""


def fit(timed: list[tuple[Parts, float]]) -> Model:
    """Each part's ``(floor, rate)`` from the timed jobs of that part alone (``(work,
    seconds)``): the floor is the fastest job's seconds (start-up, evaluation and bookkeeping
    that no work count sees), the rate the median of ``(seconds - floor) / work`` over the
    other jobs (over all of them when they took the same time)."""
    by_part: dict[str, list[tuple[float, float]]] = {}
    for parts, seconds in timed:
        if len(parts) == 1:
            ((part, units),) = parts.items()
            by_part.setdefault(part, []).append((units, seconds))
    model = {}
    for part, pairs in by_part.items():
        floor = min(s for _, s in pairs)
        rates = [(s - floor) / w for w, s in pairs if s > floor] or [s / w for w, s in pairs]
        model[part] = (floor, statistics.median(rates))
    return model


def fit_configs(name: str, timed: Iterable[tuple[Config, float]]) -> Model:
    """:func:`fit` on ``(config, seconds)`` of jobs of experiment ``name`` (configs without a
    work count, e.g. of another version, left out)."""
    return fit([(parts, s) for config, s in timed if (parts := work(name, config)) is not None])


def predict(model: Model, parts: Parts | None) -> float | None:
    """Seconds of a job with work ``parts``: each part's floor plus its rate times the work
    (None when a part has no timed job to scale)."""
    if not parts or any(part not in model for part in parts):
        return None
    return sum(model[part][0] + model[part][1] * units for part, units in parts.items())


def estimate(model: Model, name: str, config: Config) -> float | None:
    """Seconds of a job of experiment ``name`` at ``config`` under ``model`` (None: unknown)."""
    return predict(model, work(name, config))
