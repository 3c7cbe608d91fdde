"""Small matplotlib helpers shared by the experiment figures (headless, PNG).

Figures are ``matplotlib.figure.Figure`` objects drawn without pyplot: no backend is selected
or changed, so loading the experiments leaves a notebook's plotting as it was. Inside
:func:`captured` they are handed over instead of saved (a result's ``plot()``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import numpy as np

from ..core.io import make_folder, writable_folder

_CAPTURED: ContextVar[list[Any] | None] = ContextVar("captured_figures", default=None)


@contextmanager
def captured() -> Iterator[list[Any]]:
    """Within the block, :func:`figure` appends its figures to the list yielded and saves
    nothing."""
    drawn: list[Any] = []
    token = _CAPTURED.set(drawn)
    try:
        yield drawn
    finally:
        _CAPTURED.reset(token)


@contextmanager
def figure(path: Path, ncols: int = 1, width: float = 5.5, height: float = 4.0) -> Iterator:
    """Yield ``(fig, axes)``; on exit the figure is saved to ``path`` (PNG), or handed to
    :func:`captured`'s list. The folder must exist or be a new folder in one that exists (it
    is made then, one level)."""
    from matplotlib.figure import Figure  # loaded when a figure is drawn, not with the registry

    sink = _CAPTURED.get()
    if sink is None:
        writable_folder(path.parent)
    fig = Figure(figsize=(width * ncols, height))
    axes = fig.subplots(1, ncols, squeeze=False)
    yield fig, list(axes[0])
    fig.tight_layout()
    if sink is not None:
        sink.append(fig)
        return
    make_folder(path.parent)
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp, dpi=110)
    tmp.replace(path)


def rate_band(ax, xs, records, label: str, color=None) -> None:
    """A success-rate line with its Wilson band (records carry ``rate``, ``low``, ``high``)."""
    (line,) = ax.plot(xs, [r["rate"] for r in records], marker="o", label=label, color=color)
    ax.fill_between(
        xs,
        [r["low"] for r in records],
        [r["high"] for r in records],
        color=line.get_color(),
        alpha=0.15,
    )


def bar_lengths(values, lows, highs) -> np.ndarray:
    """Error-bar lengths below and above ``values`` (never negative), for ``errorbar(yerr=)``;
    the caller maps an open upper bound to the height it is drawn to."""
    v = np.asarray(values, dtype=float)
    return np.clip([v - np.asarray(lows, dtype=float), np.asarray(highs, dtype=float) - v], 0, None)
