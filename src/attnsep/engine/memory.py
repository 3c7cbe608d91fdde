"""The memory jobs hold while they run, from each experiment's estimate (``Experiment.peak``):
a run whose jobs cannot fit this machine is refused before a store is opened, and a plan says
what its jobs need beside what is available."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core import resources
from ..core.resources import BASELINE_BYTES, check_resources, size
from .jobs import Job

if TYPE_CHECKING:
    from .executors import Executor


def peak(job: Job) -> float | None:
    """The most memory (bytes) ``job`` holds, by its experiment's estimate (``None``: none)."""
    from ..experiments import base

    estimate = base.get(job.experiment).peak
    return None if estimate is None else float(estimate(job.config))


def at_once(executor: Executor) -> int | None:
    """How many jobs run side by side on this machine: a process pool's workers, one inline,
    ``None`` for a backend whose jobs run elsewhere (Ray)."""
    if not executor.local:
        return None
    return executor.workers if executor.name == "process" else 1


@dataclass(frozen=True)
class Need:
    """The memory of the ``running`` largest jobs side by side (their peaks and one process's
    baseline each), the largest of them, and what this machine has available."""

    bytes: float
    running: int
    largest: Job
    available: int | None

    @property
    def fits(self) -> bool:
        return self.available is None or self.bytes <= self.available

    def as_dict(self) -> dict[str, Any]:
        return {
            "bytes": self.bytes,
            "running": self.running,
            "largest": self.largest.experiment,
            "available": self.available,
            "fits": self.fits,
        }

    def sentence(self) -> str:
        """``memory: the 2 largest jobs side by side (a one-step job the largest) need about
        2.1 GB; 20 GB available``."""
        jobs = "the largest job" if self.running == 1 else f"the {self.running} largest jobs"
        free = "unknown" if self.available is None else size(self.available)
        return (
            f"memory: {jobs} side by side (a {self.largest.experiment} job the largest) need "
            f"about {size(self.bytes)}; {free} available"
        )


def need(jobs: list[Job], executor: Executor) -> Need | None:
    """What ``jobs`` hold at most while ``executor`` runs them (``None``: no job has an
    estimate, none to run, or Ray)."""
    side_by_side = at_once(executor)
    sized = [(p, job) for job in jobs if (p := peak(job)) is not None]
    if side_by_side is None or not sized:
        return None
    sized.sort(key=lambda pair: pair[0], reverse=True)
    running = sized[:side_by_side]
    total = sum(p + BASELINE_BYTES for p, _ in running)
    return Need(total, len(running), running[0][1], resources.available_memory())


def check_memory(jobs: list[Job], executor: Executor, knobs: str) -> None:
    """Refuse (one ``ValueError`` line) running ``jobs`` when the largest of them side by side
    need more memory than this machine has available (:func:`need`); ``knobs``: what lowers
    it."""
    found = need(jobs, executor)
    if found is not None:
        what = (
            f"a {found.largest.experiment} job"
            if found.running == 1
            else f"{found.running} jobs side by side (a {found.largest.experiment} job the largest)"
        )
        check_resources(what, found.bytes - BASELINE_BYTES, None, knobs, forced_by=None)
