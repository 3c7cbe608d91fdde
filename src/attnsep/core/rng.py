"""Reproducible random streams.

A stream is named by the user's ``seed`` plus a tuple of keys (replica index, what is drawn,
block index, ...). Each name maps to an independent generator through numpy's
``SeedSequence``, so a replica's draws never depend on how many replicas share a batch, on
the executor, or on a chunk size.
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # torch is loaded by the first generator, so numpy-only streams start fast
    import torch


def _key(part: int | str) -> int:
    return zlib.crc32(part.encode()) if isinstance(part, str) else int(part)


def stream_seed(seed: int, *keys: int | str) -> int:
    """A 63-bit seed for the stream named ``(seed, *keys)``."""
    sequence = np.random.SeedSequence(entropy=int(seed), spawn_key=[_key(k) for k in keys])
    return int(sequence.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))


def generator(seed: int, *keys: int | str) -> torch.Generator:
    """A CPU ``torch.Generator`` for the stream named ``(seed, *keys)``.

    Draws happen on the CPU and are moved afterwards, so a seed gives the same numbers on
    every device.
    """
    import torch

    return torch.Generator().manual_seed(stream_seed(seed, *keys))
