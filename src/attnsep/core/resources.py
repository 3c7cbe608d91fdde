"""Resource guards: a computation priced before it allocates (standard library only).

A command that computes checks its config's peak memory (and, where the plan can price it,
its time) before anything is allocated: above the memory this machine has available, or above
``LONG_COMMAND`` seconds for a run that is not resumable, it is refused with one line naming
the estimate and the knobs that shrink it; ``force`` runs it anyway. A long-lived worker hands
the memory its jobs free back to the system (:func:`release_freed_memory`).
"""

from __future__ import annotations

import functools
import gc
import os
import threading
import time
from collections.abc import Callable

from .validate import require

LONG_COMMAND = 3600.0
"""Seconds beyond which a single (not resumable) command is refused unless forced: a run that
long belongs in ``sweep``/``reproduce``, whose finished jobs are stored and resumed."""

STEP_SECONDS = 1e-4
"""The least seconds one training step takes on a CPU, whatever its size (measured: 0.2 to
1.3 ms at the smallest sizes): the plan's models price the work of a step, not its fixed
cost, so a run of very many tiny steps is priced by this instead."""

BASELINE_BYTES = 512 * 2**20
"""What the process holds besides the computation's arrays (the interpreter and torch)."""


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation (``MemAvailable``; None if unknown)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def size(n: float) -> str:
    """Bytes in words: ``1.6 TB``, ``512 MB``."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n / 1e3:.3g} kB"


def duration(seconds: float) -> str:
    """Seconds in words: ``6.1 h``, ``12 min``, ``40 s``."""
    if seconds >= 3600:
        return f"{seconds / 3600:.3g} h"
    return f"{seconds / 60:.2g} min" if seconds >= 60 else f"{seconds:.2g} s"


FORCE = "--force (force=True)"
"""How a run refused by a guard is forced: the command's flag and the API's argument."""


def check_resources(
    what: str,
    peak_bytes: float,
    seconds: float | None,
    knobs: str,
    force: bool = False,
    forced_by: str | None = FORCE,
) -> None:
    """Refuse ``what`` (one ``ValueError`` line) when ``peak_bytes`` exceed the available memory
    or ``seconds`` exceed ``LONG_COMMAND``, unless ``force``; ``knobs`` says what shrinks it,
    ``forced_by`` how to force it (``None``: it cannot be)."""
    if force:
        return
    free = available_memory()
    peak = peak_bytes + BASELINE_BYTES
    anyway = "" if forced_by is None else f", or pass {forced_by} to run anyway"
    require(
        free is None or peak <= free,
        f"{what} needs about {size(peak)} of memory, {size(free or 0)} is available; "
        f"lower {knobs}{anyway}",
    )
    require(
        seconds is None or seconds <= LONG_COMMAND,
        f"{what} is priced at about {duration(seconds or 0)} here, over the "
        f"{duration(LONG_COMMAND)} a single command may take; lower {knobs}, run it as a "
        "resumable `attnsep sweep` (a cluster: --executor ray), or pass --force (force=True)",
    )


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, looked up once (``None``: a C library without it)."""
    import ctypes

    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None


def release_freed_memory(collect: bool = True, freeze: bool = False) -> bool:
    """Hand the C heap's freed pages back to the system (glibc's ``malloc_trim``), after a
    garbage collection unless ``collect`` is false; whether it could (not on a C library
    without it). A worker calls it after each job: glibc keeps the pages of freed blocks below
    its (self-raising, up to 32 MB) mmap threshold, so a long-lived worker's resident memory
    grows by what each job freed (measured: 3.6 GB held after one attention-maps job of the
    full preset, 0.31 GB after the trim; a worker grew to 18 GB in its fourth job and was
    killed for memory).

    With ``freeze``, what survives the collection is frozen (``gc.freeze``): the next
    collection scans only what was made since, not again the ~180k objects of a worker's
    torch, numpy and experiment modules (0.09 s a collection, against 0.2 ms frozen; bench
    row ``worker_gc``). Frozen objects are still freed when no reference is left; only a
    cycle among them would stay, so a process whose objects come and go (a notebook running
    jobs inline) does not freeze."""
    if collect:
        gc.collect()
        if freeze:
            gc.freeze()
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)  # a foreign call: other threads run meanwhile
    return True


def keep_releasing_freed_memory(period: float) -> bool:
    """:func:`release_freed_memory` (no garbage collection) every ``period`` seconds from a
    daemon thread, for the life of the process; whether it can. Within a long job glibc's heap
    keeps what each step freed wherever a block the step kept pins it: an attention-maps job of
    the full preset (erf, ``d = 2048``) grew to 21 GB resident and was killed for memory.
    Trimmed every period, only the pages the job touches again are faulted back in."""
    if not release_freed_memory(collect=False):
        return False

    def trim() -> None:
        while True:
            time.sleep(period)
            release_freed_memory(collect=False)

    threading.Thread(target=trim, name="release-freed-memory", daemon=True).start()
    return True
