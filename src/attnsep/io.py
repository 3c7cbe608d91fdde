"""Atomic file output: write beside the target, then rename: no half-written files."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

import numpy as np

from .validate import require


def writable_target(path: str | os.PathLike[str], suffix: str) -> Path:
    """Check that ``path`` ends in ``suffix`` and its folder exists (or can be made), writable."""
    target = Path(path)
    require(target.name.endswith(suffix), f"output file must end in {suffix}, got {str(path)!r}")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ValueError(f"cannot create folder {str(target.parent)!r}: {err.strerror}") from None
    try:
        with tempfile.TemporaryFile(dir=target.parent):
            pass
    except OSError:
        raise ValueError(f"folder {str(target.parent)!r} is not writable") from None
    return target


def atomic_write(path: str | os.PathLike[str], write: Callable[[IO[bytes]], None]) -> Path:
    """Call ``write(handle)`` on a temporary file beside ``path``, then rename it to ``path``."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def save_npz(path: str | os.PathLike[str], **arrays: np.ndarray) -> Path:
    """Write ``arrays`` to an ``.npz`` file atomically."""
    return atomic_write(writable_target(path, ".npz"), lambda handle: np.savez(handle, **arrays))
