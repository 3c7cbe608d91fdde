"""The experiments by name (``base.register`` fills it), in a module of its own so that listing
them (``catalog``) does not build the configs' classes."""

from __future__ import annotations

from typing import Protocol


class Listed(Protocol):
    """What listing an experiment reads of it (``base.Experiment`` has it all)."""

    @property
    def name(self) -> str: ...
    @property
    def claim(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def paper(self) -> str: ...
    @property
    def companions(self) -> tuple[str, ...]: ...


REGISTRY: dict[str, Listed] = {}
