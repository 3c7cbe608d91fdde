"""The experiment packages, one per claim of SPEC A7 and B5 (``built_ins.BUILT_IN``), and
``load_all``, which imports them so that each registers itself (``base.register``)."""

from __future__ import annotations

import importlib

from .built_ins import BUILT_IN

MODULES = tuple(entry["package"] for entry in BUILT_IN)


def load_all() -> None:
    """Import every experiment package (each registers its experiment on import)."""
    for name in MODULES:
        importlib.import_module(f"{__package__}.{name}")
