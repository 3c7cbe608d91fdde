"""How a job's cost grows with its config, for ``--plan`` at new sizes.

Each experiment counts the work of one of its jobs (``Experiment.work``, helpers in
``experiments.costs``); :func:`fit` turns an experiment's timed jobs into a floor (the fastest
job's seconds: a job's fixed cost) and each job's seconds per unit of work above it, and
:func:`predict` applies the rate of the timed sizes around it (interpolated; the nearest one's
outside them, the median rate far from all of them) to the jobs without a timing. Fitted on
the quick preset's published timings, it predicts the standard preset's within 0.44x to 3.1x
per experiment and 1.07x in total; fitted on both, 36 of the 40 published full-size jobs
within 2x (``docs/cluster.md``).
"""

from __future__ import annotations

import math
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


Model = dict[str, tuple[float, list[tuple[float, float]]]]
"""Per part: ``(floor seconds, [(work, seconds per unit of work above the floor), ...]))``,
one pair per timed job, by work."""
NEAR = 4.0
"""A job outside the timed sizes but within this factor of one is scaled by the nearest one's
rate; a job farther from every timed size by the median rate."""


NOISE = 1.25
"""How much one job's seconds vary from run to run on a shared machine (measured here: whole
presets 25% slower at one time of day than at another). A job within this factor of the floor
is mostly fixed cost: its ``(seconds - floor) / work`` is noise, not a rate."""


def fit(timed: list[tuple[Parts, float]]) -> Model:
    """Each part's floor and rates from the timed jobs of that part alone (``(work,
    seconds)``): the floor is the fastest job's seconds (start-up, evaluation and bookkeeping
    that no work count sees), a job's rate its ``(seconds - floor) / work``, from the jobs
    that took at least :data:`NOISE` times the floor (else from every job above it; every
    job's ``seconds / work`` when they all took the same time). Rates of jobs at the floor,
    near zero, had pulled the median rate far below every real one: paper-scale jobs read 2x
    low (``docs/cluster.md``)."""
    by_part: dict[str, list[tuple[float, float]]] = {}
    for parts, seconds in timed:
        if len(parts) == 1:
            ((part, units),) = parts.items()
            by_part.setdefault(part, []).append((units, seconds))
    model = {}
    for part, pairs in by_part.items():
        floor = min(s for _, s in pairs)
        above = [(w, s) for w, s in pairs if w > 0 and s > floor]
        clear = [(w, s) for w, s in above if s >= NOISE * floor] or above
        rates = [(w, (s - floor) / w) for w, s in clear]
        model[part] = (floor, sorted(rates or [(w, s / w) for w, s in pairs if w > 0]))
    return model


def rate(rates: list[tuple[float, float]], units: float) -> float:
    """Seconds per unit of work at ``units``. Between two timed sizes: the rates of the timed
    sizes just below and just above, interpolated linearly in ``log work`` (log rate; several
    jobs at one size give their median). Outside them: the rate of the timed job nearest in
    work when one is within ``NEAR``x, else the median rate. A rate changes with size (small
    matrices run at a worse rate; a large working set leaves the cache), so the nearest timings
    say most where there are some: a paper-scale job is read from measured paper-scale jobs.
    Leaving each published size out in turn and predicting it from the others, the
    interpolation was within 2x of 63% of the sizes that lie between two others, the nearest
    rate of 59% (``docs/cluster.md``)."""
    if not rates or units <= 0:
        return 0.0
    sizes = sorted({w for w, _ in rates})
    if sizes[0] <= units <= sizes[-1]:
        below = max(w for w in sizes if w <= units)
        above = min(w for w in sizes if w >= units)
        low, high = (statistics.median(r for w, r in rates if w == at) for at in (below, above))
        if below == above:
            return low
        share = math.log(units / below) / math.log(above / below)
        return low ** (1 - share) * high**share
    nearest = min(sizes, key=lambda w: abs(math.log(w / units)))
    if abs(math.log(nearest / units)) > math.log(NEAR):
        return statistics.median(r for _, r in rates)
    return statistics.median(r for w, r in rates if w == nearest)


def fit_configs(name: str, timed: Iterable[tuple[Config, float]]) -> Model:
    """:func:`fit` on ``(config, seconds)`` of jobs of experiment ``name`` (configs without a
    work count, e.g. of another version, left out)."""
    return fit([(parts, s) for config, s in timed if (parts := work(name, config)) is not None])


def predict(model: Model, parts: Parts | None) -> float | None:
    """Seconds of a job with work ``parts``: each part's floor plus its work times the
    :func:`rate` there (None when a part has no timed job to scale)."""
    if not parts or any(part not in model for part in parts):
        return None
    return sum(
        model[part][0] + rate(model[part][1], units) * units for part, units in parts.items()
    )


def estimate(model: Model, name: str, config: Config) -> float | None:
    """Seconds of a job of experiment ``name`` at ``config`` under ``model`` (None: unknown)."""
    return predict(model, work(name, config))
