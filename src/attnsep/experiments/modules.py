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
    "xor_fixed_embeddings",
    "xor_ffnn_width",
    "xor_sample_baselines",
    "xor_rotated_basis",
    "xor_cls_equivalence",
    "xor_one_head",
    "select_width_qd",
    "select_fixed_pe",
    "select_randomized_pe",
    "select_full_w",
)


def load_all() -> None:
    """Import every experiment module (each registers its experiments on import)."""
    for name in MODULES:
        importlib.import_module(f"{__package__}.{name}")
