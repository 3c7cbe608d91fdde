"""The public API: what ``attnsep``'s commands compute, callable from Python and notebooks.

Every command of the command line is one function here, with the same numbers: the same
configs, streams and seeds give the same values. Every function validates its input first
(bad input raises a one-line ``ValueError`` naming the value and what is allowed) and loads
torch only when it computes, so importing this module is cheap. Results are frozen types
with ``summary()``, ``to_frame()``, ``plot()`` and ``save(path)`` (read back by
``attnsep.load``; ``attnsep.results``) or plain data.

The functions on the results store (``runs``, ``stored_run``, ``load_runs``, ``export_runs``:
``attnsep.engine.runs``), the plans (``plan``, ``sweep_plan``: ``attnsep.engine.planning``) and
the reproduction (``reproduce``, ``reproduce_plan``, ``report``: ``attnsep.report.reproduction``)
are written beside the layer they belong to and imported here, as are this package's own
modules (``xor``, ``selection``, ``fcn``: the computations; ``running``: experiments through the
engine; ``frontier``; ``guard``: what every computation does around it): this module is the one
door.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..engine.planning import plan as plan
from ..engine.planning import sweep_plan as sweep_plan
from ..engine.runs import export_runs as export_runs
from ..engine.runs import load_runs as load_runs
from ..engine.runs import runs as runs
from ..engine.runs import stored_run as stored_run
from ..report import reproduction
from ..report.reproduction import Reproduction as Reproduction
from ..report.reproduction import report as report
from ..report.reproduction import reproduce as reproduce
from ..report.reproduction import reproduce_plan as reproduce_plan
from .fcn import FCN_TASKS as FCN_TASKS
from .fcn import train_fcn as train_fcn
from .frontier import FRONTIER_SOLVERS as FRONTIER_SOLVERS
from .frontier import frontier_select as frontier_select
from .frontier import frontier_xor as frontier_xor
from .guard import Progress as Progress
from .running import executor as executor
from .running import experiments as experiments
from .running import list_experiments as list_experiments
from .running import plan_table as plan_table
from .running import run_experiment as run_experiment
from .running import show as show
from .running import sweep as sweep
from .running import text_tables as text_tables
from .selection import selection_bounds as selection_bounds
from .selection import train_selector as train_selector
from .xor import xor_one_step as xor_one_step
from .xor import xor_train as xor_train
from .xor import xor_train_figures as xor_train_figures
from .xor import xor_train_v1 as xor_train_v1

if TYPE_CHECKING:
    from ..engine.calibration import CalibrationFailed as CalibrationFailed
    from ..engine.executors import WorkerDied as WorkerDied

REPORT_FOLDER = reproduction.FOLDER
"""Where [`reproduce`][attnsep.api.reproduce] and [`report`][attnsep.api.report] write the
report unless told."""
_ERRORS = {"CalibrationFailed": "calibration", "WorkerDied": "executors"}
"""The engine's errors a caller may catch (``api.CalibrationFailed``: a plan's calibration
could not time a job; ``api.WorkerDied``: a worker died with jobs unfinished), by the module
of ``attnsep.engine`` that raises them."""


def __getattr__(name: str) -> Any:
    """The engine's errors (``_ERRORS``), imported when first asked for: their modules load
    the process machinery, which a command that only checks its input or lists does not need."""
    if name in _ERRORS:
        from importlib import import_module

        return getattr(import_module(f"..engine.{_ERRORS[name]}", __package__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
