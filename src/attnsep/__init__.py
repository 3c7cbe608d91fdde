"""attnsep: the sparse-XOR and sparse-token-selection separations as rerunnable experiments.

The public API (:mod:`attnsep.api`) is loaded on first use, so ``import attnsep`` stays fast
and does not import torch::

    import attnsep
    step = attnsep.xor_one_step(d=256, m=16, seeds=32)
    step.summary()["success_rate"]
    step.save("step.npz"); attnsep.load("step.npz")
"""

from __future__ import annotations

from importlib import metadata
from typing import TYPE_CHECKING, Any

__version__ = metadata.version("attnsep")

__all__ = [
    "__version__",
    "xor_one_step",
    "xor_train",
    "xor_train_v1",
    "train_selector",
    "selection_bounds",
    "train_fcn",
    "frontier_xor",
    "frontier_select",
    "list_experiments",
    "show",
    "run_experiment",
    "sweep",
    "sweep_plan",
    "reproduce",
    "reproduce_plan",
    "load_runs",
    "export_runs",
    "XorStepResult",
    "SelectorResult",
    "FCNResult",
    "ExperimentResult",
    "SweepResult",
    "XorTrainResult",
    "FrontierResult",
    "load",
]
_HOME = {name: "results" if name[0].isupper() else "api" for name in __all__[1:]}
_HOME["load"] = "results"
"""The module each public name lives in: functions in ``api``, result types and ``load`` (a
saved result back) in ``results``."""

if TYPE_CHECKING:
    from .api import (
        export_runs,
        frontier_select,
        frontier_xor,
        list_experiments,
        load_runs,
        reproduce,
        reproduce_plan,
        run_experiment,
        selection_bounds,
        show,
        sweep,
        sweep_plan,
        train_fcn,
        train_selector,
        xor_one_step,
        xor_train,
        xor_train_v1,
    )
    from .results import (
        ExperimentResult,
        FCNResult,
        FrontierResult,
        SelectorResult,
        SweepResult,
        XorStepResult,
        XorTrainResult,
        load,
    )


def __getattr__(name: str) -> Any:
    """Load the API (and with it torch) when one of its names is first used (PEP 562)."""
    if name in _HOME:
        from importlib import import_module

        return getattr(import_module(f".{_HOME[name]}", __name__), name)
    raise AttributeError(f"module 'attnsep' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
