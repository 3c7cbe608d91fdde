"""Small matplotlib helpers shared by the experiment figures (headless, PNG).

Figures are ``matplotlib.figure.Figure`` objects drawn without pyplot: no backend is selected
or changed, so loading the experiments leaves a notebook's plotting as it was. Inside
:func:`captured` they are handed over instead of saved (a result's ``plot()``)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import numpy as np

from ..core.io import make_folder, writable_folder

DPI = 110
"""Resolution of the figures (dots per inch): drawn, laid out and saved at this one."""

PNG = {"compress_level": 3}
"""Pillow's PNG options: zlib level 3 encodes in two thirds of the default level's time for
files under 2% larger."""

_MATH_PARSERS: dict[type, Any] = {}
"""One mathtext parser per renderer class, shared by all figures (see :func:`_share_mathtext`)."""

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
    # loaded when a figure is drawn, not with the registry
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    sink = _CAPTURED.get()
    if sink is None:
        writable_folder(path.parent)
    fig = Figure(figsize=(width * ncols, height), dpi=DPI)
    # An Agg canvas of its own (no pyplot backend is chosen): the layout and the save then
    # use one renderer at one dpi, so each text's extent is measured once, not per pass.
    canvas = FigureCanvasAgg(fig)
    axes = fig.subplots(1, ncols, squeeze=False)
    yield fig, list(axes[0])
    _share_mathtext(canvas.get_renderer())
    fig.tight_layout()
    # The layout is final: with its engine left in place, the save would draw the whole
    # figure once more only to lay it out again.
    fig.set_layout_engine(None)
    if sink is not None:
        sink.append(fig)
        return
    make_folder(path.parent)
    # a temporary file of this process's own: two reports written into one folder at once
    # would otherwise write into one file, and the second rename would find it gone
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp.png")
    try:
        fig.savefig(tmp, dpi=DPI, pil_kwargs=dict(PNG))
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def _share_mathtext(renderer) -> None:
    """Let ``renderer`` use the mathtext parser of the first renderer of its class.

    The parser caches its parses, which cost milliseconds each (log-axis tick labels such as
    ``2^{5}`` are mathtext); with a parser per renderer every figure parsed them anew."""
    if hasattr(renderer, "mathtext_parser"):
        renderer.mathtext_parser = _MATH_PARSERS.setdefault(
            type(renderer), renderer.mathtext_parser
        )


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
