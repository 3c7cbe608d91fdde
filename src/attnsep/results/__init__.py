"""The typed results of the public API (``attnsep.api``), all of one shape.

Each is a frozen dataclass (around the library's own result, ``raw``, where there is one) with

* ``summary()``: one flat dict of scalars, the numbers a reader looks at first (no per-replica
  lists; ``device``: where it ran, e.g. ``cpu`` or ``cuda:0``);
* ``to_frame()``: a pandas DataFrame, one row per replica or per stored record;
* ``plot()``: a ``matplotlib.figure.Figure`` (drawn without pyplot: works headless);
* ``save(path)``: one ``.npz`` file (``results.saved``), read back by ``attnsep.load(path)``;
* a one-line ``repr``; and ``report()``, the command's JSON object, where a command prints one.
"""

from __future__ import annotations

from .engine import ExperimentResult, FrontierResult, SweepResult
from .fcn import FCNResult, fcn_selection_report, fcn_xor_report
from .files import Result, load
from .selection import SelectorResult, length_record
from .xor import V1_ACCURACY, V1_MARKS, XorStepResult, XorTrainResult, v1_report

__all__ = [
    "V1_ACCURACY",
    "V1_MARKS",
    "ExperimentResult",
    "FCNResult",
    "FrontierResult",
    "Result",
    "SelectorResult",
    "SweepResult",
    "XorStepResult",
    "XorTrainResult",
    "fcn_selection_report",
    "fcn_xor_report",
    "length_record",
    "load",
    "v1_report",
]
