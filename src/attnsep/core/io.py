"""File input and output: outputs go only into folders that exist, written beside the target
and renamed (no half-written files); ``.npz`` files are read without pickle (no code runs)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .validate import require, shown

if TYPE_CHECKING:
    import numpy.typing as npt


STORE_PATH = Path("results") / "attnsep.sqlite"
"""The results store unless one is given (``engine.store``; ``--store``)."""
REPORT_FOLDER = Path("results") / "report"
"""The report's folder unless one is given (``report.reproduction``; ``--out``): made with its
parents; a folder given is made one level deep (its parent must exist)."""


def named(path: str | os.PathLike[str], what: str = "path") -> Path:
    """``path`` as a ``Path`` the system can look up: not a path at all is one ``TypeError``
    line, a name the system refuses (too long, a null byte) one ``ValueError`` line, instead
    of an error from the first operation that touches it (``what``: the name in the line)."""
    if not isinstance(path, str | os.PathLike) or isinstance(os.fspath(path), bytes):
        raise TypeError(f"{what} must be a path (str or os.PathLike), got {shown(path)}")
    target = Path(path)
    try:
        os.stat(target)  # Path.exists() would answer False for a null byte
    except (FileNotFoundError, NotADirectoryError):
        pass  # missing: said by the check that needs it
    except (OSError, ValueError) as err:
        why = err.strerror if isinstance(err, OSError) else str(err)
        raise ValueError(f"{what} {shown(str(target))} cannot be used: {why}") from None
    return target


def existing_folder(path: str | os.PathLike[str]) -> Path:
    """``path`` as an existing folder that can be written into (nothing is created: a user's
    output goes only into a folder that exists)."""
    folder = named(path)
    require(folder.exists(), f"folder {str(folder)!r} does not exist; create it first")
    require(folder.is_dir(), f"{str(folder)!r} exists and is not a folder")
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError:
        raise ValueError(f"folder {str(folder)!r} is not writable") from None
    return folder


def writable_folder(path: str | os.PathLike[str], *, default: bool = False) -> Path:
    """Check that ``path`` is an output folder, creating nothing: an existing writable folder,
    or a new one whose parent exists (:func:`make_folder` makes it, one level, when something
    is written). ``default``: the tool's own default folder (e.g. ``results/report``), whose
    missing parents may be made too."""
    folder = named(path)
    if folder.exists() or folder == Path("."):
        return existing_folder(folder)
    if not default:
        try:
            existing_folder(folder.parent)
        except ValueError as err:
            raise ValueError(f"cannot create folder {str(folder)!r}: {err}") from None
        return folder
    existing = folder
    while not existing.exists():
        existing = existing.parent
    require(existing.is_dir(), f"cannot create folder {str(folder)!r}: {str(existing)!r} is a file")
    existing_folder(existing)
    return folder


def make_folder(path: str | os.PathLike[str], *, default: bool = False) -> Path:
    """Make the output folder ``path`` checked by :func:`writable_folder` (its parents too
    only for the tool's own ``default`` folder)."""
    folder = Path(path)
    folder.mkdir(parents=default, exist_ok=True)
    return folder


def writable_target(path: str | os.PathLike[str], suffix: str, *, default: bool = False) -> Path:
    """Check that ``path`` ends in ``suffix`` and that its folder exists and is writable
    (``default``: the tool's own default file, e.g. ``results/runs.csv``, whose folder may
    still be made)."""
    target = named(path)
    require(target.name.endswith(suffix), f"output file must end in {suffix}, got {str(path)!r}")
    if default:
        writable_folder(target.parent, default=True)
    else:
        existing_folder(target.parent)
    return target


def _umask() -> int:
    """The process's umask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path: str | os.PathLike[str], write: Callable[[IO[bytes]], object]) -> Path:
    """Call ``write(handle)`` on a temporary file beside ``path``, then rename it to ``path``.
    The folder must exist (nothing else is created)."""
    return atomic_writes({path: write})[0]


def atomic_writes(
    writers: dict[str | os.PathLike[str], Callable[[IO[bytes]], object]],
) -> list[Path]:
    """:func:`atomic_write` for files that belong together (a report's ``claims.json`` and
    ``index.html``): every file is written to its temporary file first, and only then are
    they all renamed, so a failure or a signal while writing leaves each file as it was, never
    a new one beside an old one. The folders must exist; the paths written are returned."""
    temporary: list[tuple[str, Path]] = []
    try:
        for path, write in writers.items():
            target = Path(path)
            existing_folder(target.parent)
            prefix = f".{target.name[:200]}."  # a name near the limit leaves room for the rest
            fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=target.parent)
            temporary.append((tmp, target))
            os.fchmod(fd, 0o666 & ~_umask())  # mkstemp's 0600 would make the file private
            with os.fdopen(fd, "wb") as handle:
                write(handle)
        for tmp, target in temporary:
            os.replace(tmp, target)
    except BaseException:
        for tmp, _ in temporary:
            Path(tmp).unlink(missing_ok=True)
        raise
    return [target for _, target in temporary]


def save_npz(path: str | os.PathLike[str], **arrays: npt.ArrayLike) -> Path:
    """Write ``arrays`` to an ``.npz`` file atomically (into an existing folder)."""
    import numpy as np

    def write(handle: IO[bytes]) -> None:
        # numpy's stub: a keyword could be ``allow_pickle``, which takes a bool
        np.savez(handle, **arrays)  # type: ignore[arg-type]

    return atomic_write(writable_target(path, ".npz"), write)


def load_npz(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The arrays of the ``.npz`` file at ``path`` by name, read without pickle: a file holding
    Python objects (which could run code when unpickled) is refused with one line, never
    unpickled."""
    import zipfile

    import numpy as np

    file = named(path)
    name = str(path)
    require(file.is_file(), f"no file {name!r}")
    with file.open("rb") as handle:
        require(handle.read(4) == b"PK\x03\x04", f"{name!r} is not an .npz file")
    try:
        with np.load(file, allow_pickle=False) as saved:
            return {key: saved[key] for key in saved.files}
    except ValueError as err:
        if "pickle" not in str(err):
            raise ValueError(f"{name!r} is not a readable .npz file ({err})") from None
        raise ValueError(
            f"{name!r} holds Python objects (pickled data), refused: only plain arrays load"
        ) from None
    except (OSError, EOFError, zipfile.BadZipFile) as err:
        raise ValueError(f"{name!r} is not a readable .npz file ({err})") from None
