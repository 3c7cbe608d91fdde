"""Atomic file output: write beside the target, then rename: no half-written files."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING

from .validate import require

if TYPE_CHECKING:
    import numpy.typing as npt


def writable_folder(path: str | os.PathLike[str]) -> Path:
    """Check that ``path`` is (or can become) a writable folder, creating nothing.

    The nearest existing ancestor must be a writable folder; the folder itself is made when
    something is written into it.
    """
    folder = Path(path)
    require(not folder.exists() or folder.is_dir(), f"{str(folder)!r} exists and is not a folder")
    existing = folder
    while not existing.exists():
        existing = existing.parent
    require(existing.is_dir(), f"cannot create folder {str(folder)!r}: {str(existing)!r} is a file")
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError:
        where = "" if existing == folder else f"cannot create folder {str(folder)!r}: "
        raise ValueError(f"{where}folder {str(existing)!r} is not writable") from None
    return folder


def writable_target(path: str | os.PathLike[str], suffix: str) -> Path:
    """Check that ``path`` ends in ``suffix`` and that its folder is (or can become) writable."""
    target = Path(path)
    require(target.name.endswith(suffix), f"output file must end in {suffix}, got {str(path)!r}")
    writable_folder(target.parent)
    return target


def atomic_write(path: str | os.PathLike[str], write: Callable[[IO[bytes]], object]) -> Path:
    """Call ``write(handle)`` on a temporary file beside ``path``, then rename it to ``path``."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def save_npz(path: str | os.PathLike[str], **arrays: npt.ArrayLike) -> Path:
    """Write ``arrays`` to an ``.npz`` file atomically."""
    import numpy as np

    def write(handle: IO[bytes]) -> None:
        # numpy's stub: a keyword could be ``allow_pickle``, which takes a bool
        np.savez(handle, **arrays)  # type: ignore[arg-type]

    return atomic_write(writable_target(path, ".npz"), write)
