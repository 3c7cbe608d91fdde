"""B5.4's error rates (SPEC Part E): FCNs at or above the floor (the theorem) against FCNs below
it by the criterion's own margin (a bug the check must catch), as simulated runs of the FCNs."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ...metrics import calibration, stats
from ..base import Record
from .config import Config, Setting, widths
from .run import fcn_record
from .verdict import MARGIN, setting_of


def _fcn_noise(nets: list[Record]) -> tuple[float, float]:
    """``(evaluation s.e. / loss, replica spread of ln loss)`` of trained nets: the medians over
    nets and over ``(setting, width)`` groups of two or more replicas (0 when none)."""
    relative = stats.median(r["stderr"] / r["loss"] for r in nets)
    groups: dict[tuple, list[float]] = {}
    for r in nets:
        groups.setdefault((*setting_of(r), r["width"]), []).append(math.log(r["loss"]))
    spreads = [float(np.std(v, ddof=1)) for v in groups.values() if len(v) >= 2]
    return relative, stats.median(spreads) if spreads else 0.0


def _fcn_mean_loss(nets: list[Record]) -> Callable[[Setting, int, float, float], float]:
    """The nets' measured mean loss at ``(setting, width)``; elsewhere the median over measured
    nets of loss / floor (below ``Td``) or loss / uniform (at or above ``Td``) times that
    yardstick: ``mean_loss(setting, width, floor, uniform)``."""
    groups: dict[tuple, list[float]] = {}
    for r in nets:
        groups.setdefault((*setting_of(r), r["width"]), []).append(r["loss"])
    above = [r["loss"] / r["floor"] for r in nets if r["floor"] > 0]
    past = [r["loss"] / r["uniform"] for r in nets if r["floor"] == 0]
    ratio = stats.median(above) if above else 1.0
    share = stats.median(past) if past else 0.0

    def mean_loss(setting: Setting, width: int, floor: float, uniform: float) -> float:
        measured = groups.get((*setting, width))
        if measured:
            return float(np.mean(measured))
        return ratio * floor if floor > 0 else share * uniform

    return mean_loss


def hypotheses(records: list[Record], config: Config) -> calibration.Hypotheses:
    """FCNs at or above the floor (the theorem) against FCNs below it (a bug the check must
    catch), simulating runs at ``config``'s settings, widths and replicas (SPEC Part E); the
    transformer, reported beside the check, is not simulated.

    Theorem: each net's true loss is the measured mean at its ``(setting, width)`` (elsewhere the
    median measured loss / floor, or loss / uniform at ``w >= Td``) times a log-normal replica
    factor with the measured spread, never below the floor; its evaluation s.e. is the measured
    median fraction of the loss, and the loss read is true + s.e. x N(0, 1). Below: every net
    with a positive floor has true loss floor − 3 s.e. (below the floor by the criterion's own
    margin), the rest as the theorem's."""
    from ...exact.selection_bounds import fcn_bottleneck_loss, uniform_attention_loss

    nets = [r for r in records if r["model"] == "fcn"]
    relative, replica_spread = _fcn_noise(nets) if nets else (0.01, 0.0)
    mean_loss = _fcn_mean_loss(nets)

    def simulate(below: bool) -> calibration.Simulate:
        def draw(cfg: Config, rng: np.random.Generator) -> list[Record]:
            out: list[Record] = []
            for setting in cfg.settings:
                T, d, q = setting
                uniform = float(uniform_attention_loss(T, q, d))
                for w in widths(setting, cfg.width_fractions):
                    floor = float(fcn_bottleneck_loss(T, q, d, w))
                    centre = mean_loss(setting, w, floor, uniform)
                    for e in range(cfg.fcn_replicas):
                        true = max(floor, centre * math.exp(replica_spread * rng.normal()))
                        if below and floor > 0:
                            true = floor * (1 - MARGIN * relative)
                        se = relative * true
                        loss = true + se * rng.normal()
                        out.append(fcn_record(setting, w, e, loss, se, floor, uniform))
            return out

        return draw

    return calibration.Hypotheses(
        paper=simulate(below=False),
        rival=simulate(below=True),
        paper_law="FCN losses at or above the floor at their measured means (the theorem)",
        rival_law=f"every FCN with a positive floor at floor x (1 - {MARGIN:g} x {relative:.2g}):"
        f" below it by {MARGIN:g} measured s.e. (a bug)",
        noise=f"FCN evaluation s.e. {relative:.2g} x loss, replica spread {replica_spread:.2g} in "
        "ln loss",
    )
