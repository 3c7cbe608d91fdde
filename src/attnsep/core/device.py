"""Device and dtype selection (``--device auto|cpu|cuda``, ``--dtype float64|float32``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch

from .validate import one_of, require

DTYPES = {"float64": torch.float64, "float32": torch.float32}


def resolve_device(name: str = "auto") -> torch.device:
    """``auto`` picks CUDA when available, else the CPU."""
    one_of("device", name, ["auto", "cpu", "cuda"])
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    require(
        name != "cuda" or torch.cuda.is_available(),
        "device 'cuda' asked for, but no CUDA device is available",
    )
    return torch.device(name)


def device_name(device: torch.device) -> str:
    """The device as results name it: ``cpu``, or ``cuda:N`` with the index of the device used
    (``torch.device("cuda")`` means the current one)."""
    if device.type == "cuda" and device.index is None:
        return f"cuda:{torch.cuda.current_device()}"
    return str(device)


def resolve_dtype(name: str = "float64") -> torch.dtype:
    one_of("dtype", name, list(DTYPES))
    return DTYPES[name]


@contextmanager
def torch_threads(count: int = 1) -> Iterator[None]:
    """Run the block with ``count`` torch threads, then restore the previous setting.

    Many small ensemble tensors run faster on one thread on a shared machine (measured on
    2 cores: 15.6 ms per selection step with one thread, 79 ms with two), and a fixed count
    keeps float results identical across executors.
    """
    previous = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
