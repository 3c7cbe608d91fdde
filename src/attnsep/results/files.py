"""``attnsep.load``: a saved result back as its type, from this format (``results.saved``) or
from the ``.npz`` files ``--save`` wrote before it (``xor one-step``, ``xor train``,
``select train``)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable

import numpy as np
import torch

from ..configs import OneStepConfig, XorTrainConfig
from ..core.device import torch_threads
from ..core.validate import require
from ..metrics.parity import assigned_mass, collapsed, specialized
from ..metrics.selection import evaluate_lengths
from ..models.query_heads import QueryHeads
from ..positional_encodings import FixedPE, encodings_for
from ..tasks.selection import TokenSelection
from ..train.one_step import OneStepResult
from ..train.selection import SelectionTrainConfig, SelectionTrainResult
from ..train.xor_train import XorTrajectories
from . import saved
from .common import config_from
from .engine import ExperimentResult, FrontierResult, SweepResult
from .fcn import FCNResult
from .selection import SelectorResult
from .xor import TRAJECTORY_ARRAYS, XorStepResult, XorTrainResult

Result = (
    XorStepResult
    | XorTrainResult
    | SelectorResult
    | FCNResult
    | ExperimentResult
    | SweepResult
    | FrontierResult
)
"""Every result type ``save`` writes and ``load`` reads."""
TYPES: dict[str, type[Result]] = {
    kind.__name__: kind
    for kind in (
        XorStepResult,
        XorTrainResult,
        SelectorResult,
        FCNResult,
        ExperimentResult,
        SweepResult,
        FrontierResult,
    )
}
UNKNOWN_DEVICE = "unknown"
"""The device of a result read from an older file, which did not record it."""


def load(path: str | os.PathLike[str]) -> Result:
    """The result saved at ``path`` by its ``save(path)``, as its type (``XorStepResult``,
    ``XorTrainResult``, ``SelectorResult``, ``FCNResult``, ``ExperimentResult``,
    ``SweepResult`` or ``FrontierResult``), equal in content to the one saved.

    Also reads the ``.npz`` files ``attnsep xor one-step --save``, ``xor train --save`` and
    ``select train --save`` wrote before this format: what they lack is computed again from
    what they hold (the masses from ``V`` and ``theta``; the evaluation losses from ``W``, the
    seed and the sizes), and their ``device`` and ``seconds`` are unknown. Anything else (a
    file that is no saved result, pickled objects, a damaged file) is a one-line
    ``ValueError``; nothing is ever unpickled.
    """
    header, arrays = saved.read(path)
    name = str(path)
    if header is None:
        return _legacy(name, arrays)
    kind = header["type"]
    require(kind in TYPES, f"{name!r} holds a {kind!r}, not a result this attnsep knows")
    try:
        loaded: Result = TYPES[kind].from_saved(header, arrays)
        return loaded
    except (KeyError, TypeError, ValueError, AssertionError) as err:
        detail = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ValueError(f"{name!r} is a damaged saved {kind} ({detail})") from None


def _legacy(name: str, arrays: dict[str, np.ndarray]) -> Result:
    """An ``.npz`` without a header: one of the older ``--save`` files, or refused."""
    keys = set(arrays)
    readers: list[tuple[set[str], Callable[[dict[str, np.ndarray]], Result]]] = [
        ({"V", "theta_after", "support", "config"}, _old_step),
        ({"scalars", "population_loss", "mass", "config"}, _old_training),
        ({"W", "train_losses", "eval_lengths", "config"}, _old_selector),
    ]
    for needs, reader in readers:
        if needs <= keys:
            try:
                return reader(arrays)
            except (KeyError, TypeError, ValueError) as err:
                detail = str(err).strip().splitlines()[0]
                raise ValueError(f"{name!r}: an older saved result, damaged ({detail})") from None
    raise ValueError(f"{name!r} is not a saved attnsep result (no {saved.HEADER!r} entry)")


def _old_step(arrays: dict[str, np.ndarray]) -> XorStepResult:
    """``xor one-step --save`` before this format: ``V``, ``theta`` before and after, the
    supports, ``eta``, losses, certified errors, the config; the masses, specialization and
    collapse are computed again from ``V`` and ``theta_after``."""
    config = config_from(OneStepConfig, json.loads(saved.text(arrays["config"])))
    V, theta = torch.from_numpy(arrays["V"]), torch.from_numpy(arrays["theta_after"])
    support = torch.from_numpy(arrays["support"])
    gamma = QueryHeads(V, config.attention, config.sign).weights(theta)
    raw = OneStepResult(
        config=config,
        eta=float(arrays["eta"]),
        support=arrays["support"],
        theta_before=arrays["theta_before"],
        theta_after=arrays["theta_after"],
        loss_before=arrays["loss_before"],
        loss_after=arrays["loss_after"],
        mass_after=assigned_mass(gamma, support).numpy(),
        certified_error=arrays["certified_error"],
        specialized=specialized(gamma, support).numpy(),
        collapsed=collapsed(gamma, support).numpy(),
        embeddings=arrays["V"],
        device=UNKNOWN_DEVICE,
    )
    return XorStepResult(raw)


def _old_training(arrays: dict[str, np.ndarray]) -> XorTrainResult:
    """``xor train --save`` before this format: every array, the config and ``scalars``
    (``eta``, ``seconds``, ``diverged_at``) as JSON text."""
    config = config_from(XorTrainConfig, json.loads(saved.text(arrays["config"])))
    scalars = json.loads(saved.text(arrays["scalars"]))
    raw = XorTrajectories(
        config=config,
        eta=float(scalars["eta"]),
        seconds=float(scalars["seconds"]),
        diverged_at=scalars["diverged_at"],
        device=UNKNOWN_DEVICE,
        **{key: arrays[key] for key in TRAJECTORY_ARRAYS if key in arrays},
    )
    return XorTrainResult(raw)


def _old_selector(arrays: dict[str, np.ndarray]) -> SelectorResult:
    """``select train --save`` before this format: ``W``, ``P`` (fixed PE), the curve, the
    config and the evaluation's seed, size and lengths; the evaluation losses are computed
    again (the same sets: the same numbers); ``seconds`` is unknown (0)."""
    config = config_from(SelectionTrainConfig, json.loads(saved.text(arrays["config"])))
    W = torch.from_numpy(arrays["W"])
    encodings = FixedPE(torch.from_numpy(arrays["P"])) if "P" in arrays else encodings_for(config)
    raw = SelectionTrainResult(config, W, encodings, torch.from_numpy(arrays["train_losses"]))
    size = int(arrays["eval_size"])
    lengths = [int(length) for length in arrays["eval_lengths"]]
    with torch_threads(1):
        task = TokenSelection.of(config)
        rows = evaluate_lengths(W, task, encodings, lengths, int(arrays["seed"]), size)
    return SelectorResult(raw, tuple(rows), 0.0, size)
