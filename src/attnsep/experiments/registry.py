"""The experiments by name (``base.register`` fills it), in a module of its own so that listing
them (``catalog``) does not build the configs' classes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import Experiment

REGISTRY: dict[str, Experiment[Any]] = {}
