"""The stopping rule of a trained selector's probe (SPEC B5.2: each point trained to
convergence, a stopping rule, not a fixed budget), used by ``selection_threshold.converge`` and
``selection_full``.

After every ``chunk`` steps each replica's loss is evaluated on one fixed *monitor* draw (the
same sequences every time, so successive values differ by training, not by sampling) (*choice*).
A chunk that raised a replica's monitor loss is undone and its rate halved; a chunk that lowered
it multiplies the rate by ``grow`` (the "bold driver": plain GD from ``W = 0`` crawls at large
``T``, where the gradient is of order ``1/T``, and a fixed rate fast enough for that start
overshoots later). A chunk whose gain is below ``plateau`` times both the current loss and the
gain since ``W = 0`` (the second keeps the slow start from reading as flat) is a *plateau*: the
first ``anneals`` plateaus divide the rate by ``anneal_factor`` and stop its growth (a
stochastic gradient at the bold driver's rate stalls on its own noise floor, which shrinks with
the rate); the next one stops the replica. A replica stops, and keeps its ``W``, at the first
of: monitor loss ``<= reached x target x`` uniform (rule ``reached``: the monitor loss never
rises, so it has succeeded); within ``near_best`` of the ``W = αI`` family's best loss at
``(T, q, m_p)`` (``near-best``); a plateau after the annealing (``plateau``); or ``max_steps``
(``cap``) (the state: :class:`BoldDriver`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from ..core.validate import int_at_least, positive_finite, require


@dataclass(frozen=True)
class Stopping:
    """When a probe's training stops (see the module docstring); steps come in ``chunk``s."""

    chunk: int = 25
    near_best: float = 0.03
    plateau: float = 0.01
    grow: float = 1.5  # the rate's factor after a chunk that lowered the monitor loss
    anneals: int = 3  # plateaus that divide the rate before one stops the replica
    anneal_factor: float = 4.0
    reached: float = 0.5  # stop a replica whose monitor loss is below this x target x uniform
    max_steps: int = 3000
    monitor: int = 512  # sequences of the fixed monitor draw

    def __post_init__(self) -> None:
        int_at_least("chunk", self.chunk, 1)
        positive_finite("near_best", self.near_best)
        positive_finite("plateau", self.plateau)
        require(0 < self.reached < 1, f"reached must be in (0, 1), got {self.reached!r}")
        require(self.grow >= 1, f"grow must be >= 1, got {self.grow!r}")
        int_at_least("anneals", self.anneals, 0)
        require(self.anneal_factor > 1, f"anneal_factor must be > 1, got {self.anneal_factor!r}")
        int_at_least("max_steps", self.max_steps, self.chunk)
        int_at_least("monitor", self.monitor, 2)


@dataclass
class BoldDriver:
    """Each replica's rate and stopping state under ``stop`` (module docstring): the rate
    ``lr`` and its growth factor ``grow`` (``E x 1 x 1``), the monitor loss at ``W = 0`` and
    after the last kept chunk (``E``), the losses ``reach`` and ``near`` at which ``reached``
    and ``near-best`` fire, and per replica its rule (``"cap"`` while it trains), steps and
    plateaus."""

    stop: Stopping
    lr: torch.Tensor
    initial: torch.Tensor
    reach: float
    near: float
    grow: torch.Tensor = field(init=False)
    previous: torch.Tensor = field(init=False)
    rules: list[str] = field(init=False)
    steps: list[int] = field(init=False)
    plateaus: list[int] = field(init=False)

    def __post_init__(self) -> None:
        E = len(self.initial)
        self.grow = torch.full((E, 1, 1), self.stop.grow, dtype=torch.float64)
        self.previous = self.initial
        self.rules, self.steps = ["cap"] * E, [self.stop.max_steps] * E
        self.plateaus = [0] * E

    @classmethod
    def of(
        cls,
        stop: Stopping,
        lr: float,
        initial: torch.Tensor,
        target: float,
        uniform: float,
        best: float,
    ) -> BoldDriver:
        """Before the first chunk: rate ``lr``, monitor loss ``initial``; ``reached`` at
        ``stop.reached x target x uniform``, ``near-best`` within ``stop.near_best`` of ``best``."""
        rate = torch.full((len(initial), 1, 1), lr, dtype=torch.float64)
        return cls(
            stop, rate, initial, stop.reached * target * uniform, (1 + stop.near_best) * best
        )

    def going(self, step: int) -> bool:
        """Whether training goes on after ``step`` steps."""
        return step < self.stop.max_steps and "cap" in self.rules

    def running(self) -> torch.Tensor:
        """``E x 1 x 1``: 1 for a replica still training, else 0."""
        return torch.tensor([r == "cap" for r in self.rules])[:, None, None]

    def judge(
        self, W: torch.Tensor, start: torch.Tensor, current: torch.Tensor, step: int
    ) -> torch.Tensor:
        """After a chunk from ``start`` to ``W`` ending at ``step`` with monitor loss ``current``
        (``E``): ``W`` with every chunk that made the monitor loss worse undone at half the rate
        (the others grow it), and each running replica's rule, steps and annealing updated."""
        stop, previous = self.stop, self.previous
        worse = ~torch.isfinite(current) | (current > previous)
        W = torch.where(worse[:, None, None], start, W)
        self.lr = torch.where(worse[:, None, None], self.lr / 2, self.lr * self.grow)
        current = torch.where(worse, previous, current)
        gain = torch.where(worse, math.inf, previous - current)
        flat = gain < stop.plateau * torch.minimum(current, self.initial - current)
        rules, steps, plateaus = self.rules, self.steps, self.plateaus
        for e in (e for e in range(len(rules)) if rules[e] == "cap"):
            if current[e] <= self.reach:
                rules[e], steps[e] = "reached", step
            elif current[e] <= self.near:
                rules[e], steps[e] = "near-best", step
            elif flat[e] and plateaus[e] < stop.anneals:
                plateaus[e] += 1
                self.lr[e] /= stop.anneal_factor
                self.grow[e] = 1.0
            elif flat[e]:
                rules[e], steps[e] = "plateau", step
        self.previous = current
        return W
