"""What every computing entry point of the API does around its computation: the config built
from its parameters (one-line errors), the save target checked, the memory and time guard
(``core.resources``), progress started, and the result saved — in that order, so that nothing
is computed or written for input that fails a check."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from ..core.io import writable_target
from ..core.resources import check_resources
from ..core.validate import callback, require

Progress = Callable[[int, int], None]
"""Called as ``progress(done, total)``: once with 0 before the first step, then after each."""
R = TypeVar("R")


def config_of(config_type: type[BaseModel], named: dict[str, Any], options: dict[str, Any]) -> Any:
    """``config_type(**named, **options)``; a field the function sets itself is a one-line
    ``ValueError``, an unknown one too (the config's own check: ``configs.ConfigBase``)."""
    for key in options:
        require(key not in named, f"{key!r} is set by this function from its parameters")
    return config_type(**named, **options)


def guarded_run(
    compute: Callable[[], R],
    guard: tuple[str, float, float | None, str],
    force: bool,
    *,
    save: str | Path | None = None,
    progress: Progress | None = None,
    steps: int = 0,
) -> R:
    """``compute()`` once its input has passed every check: ``save`` (an ``.npz`` target, written
    with the result's ``save`` after), ``progress`` (called with ``(0, steps)`` first) and the
    guard ``(what, peak bytes, seconds, knobs)`` of ``check_resources`` (``force`` lifts it)."""
    callback("progress", progress)
    if save is not None:
        writable_target(save, ".npz")
    what, peak, seconds, knobs = guard
    check_resources(what, peak, seconds, knobs, force)
    if progress is not None:
        progress(0, steps)
    result = compute()
    if save is not None:
        result.save(save)  # type: ignore[attr-defined]
    return result
