"""Part C's jobs: per ``(T, q)`` B5.2's ``m_p*`` search beside the FCN's proven minimum width
(SPEC B4), and the cost and memory of a job (SPEC Parts C, E, F)."""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

from .. import costs
from ..base import Record
from ..select_width.run import search_peak, width_search_work
from .config import Config


def split(config: Config) -> list[Config]:
    return [
        config.model_copy(update={"T_values": [T], "q_values": [q]})
        for q in config.q_values
        for T in config.T_values
    ]


@lru_cache(maxsize=512)
def fcn_min_width(T: int, d: int, q: int, target: float) -> int:
    """The smallest first-layer width any FCN on ``[vec X ; 1_y]`` needs to reach ``target`` x
    the uniform loss, proven (SPEC B4): a width-``w`` net sees ``y`` and ``w`` linear
    functionals of ``vec X``, whose least loss is ``fcn_bottleneck_loss``; exact arithmetic.
    That loss does not increase with ``w`` (it drops the ``Td - w`` smallest eigenvalues), so
    the first width under the limit is found by bisection on ``[0, Td]``."""
    from ...exact.selection_bounds import fcn_bottleneck_loss, uniform_attention_loss

    limit = uniform_attention_loss(T, q, d) * Fraction(target)
    low, high = 0, T * d  # the loss at Td is 0: high always passes
    while low < high:
        mid = (low + high) // 2
        if fcn_bottleneck_loss(T, q, d, mid) <= limit:
            high = mid
        else:
            low = mid + 1
    return low


def fcn_params(T: int, d: int, width: int) -> int:
    """Trainable parameters of the two-layer FCN of first-layer ``width`` on ``[vec X ; 1_y]``
    (``Td + T`` inputs, ``d`` outputs)."""
    from ...models.mlp import count

    return count(T * d + T, width, d)


def run(config: Config) -> list[Record]:
    out = []
    for q in config.q_values:
        for T in config.T_values:
            record = config.threshold(T, q, config.d)
            fcn = fcn_min_width(T, config.d, q, config.target)
            out.append({**record, "fcn_width": fcn})
    return out


# --- cost (``attnsep reproduce --plan``): the work of one job ---------------------------------


def work(c: costs.Config) -> costs.Parts:
    return width_search_work(c, [c["d"]])


def peak(c: costs.Config) -> float:
    """The transformer's search (``select_width.run.search_peak``); the FCN's bound is exact
    arithmetic on a few numbers."""
    return search_peak(Config(**c))
