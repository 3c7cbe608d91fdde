"""The experiment modules, one per claim of SPEC A7 and B5, and ``load_all``, which imports them
so that each registers itself (``base.register``)."""

from __future__ import annotations

import importlib

MODULES = (
    "xor_one_step",
    "xor_width",
    "xor_attention_maps",
    "xor_heads",
    "xor_samples",
    "xor_kparity",
    "select_convergence",
    "select_width",
    "select_length",
    "separation_xor",
    "fcn_selection",
    "separation_select",
)


def load_all() -> None:
    """Import every experiment module (each registers its experiments on import)."""
    for name in MODULES:
        importlib.import_module(f"{__package__}.{name}")
