"""Every parameter of the public API's functions, fuzzed.

Per parameter of each function of ``attnsep.api`` that takes values from a user (and per
``**options`` field, with an unknown key among them), hypothesis gives a value of the wrong
type, out of range, huge (past int64, within it, with more digits than Python prints), NaN /
inf, empty, unicode, very long, a path of every kind (``fuzz_support.PATHS``) or a random
object, in place of that parameter in a tiny valid call made in a fresh working folder. The
contract:

* the call returns, or raises ``ValueError`` / ``TypeError`` with a one-line message, raised
  on purpose by attnsep's own code (the ``raise`` of a check), not an error of Python, numpy,
  torch or SQLite from deep in a run, and never another type (``RuntimeError``, ``KeyError``,
  ``ZeroDivisionError``, ``OverflowError``, ``MemoryError``, ...);
* a call that raises leaves the working folder as it was;
* an answer within ``LIMIT`` seconds (a resumable run that warned of its length: let go).

Budget (``make test``): the explicit examples plus ``FUZZ_EXAMPLES`` drawn ones per parameter;
``ATTNSEP_FUZZ_EXAMPLES=2000`` draws more.
"""

from __future__ import annotations

import inspect
import math
import re
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import attnsep
from attnsep import api, configs
from attnsep.core.validate import shown
from fuzz_support import (
    FUZZ,
    INTEGERS,
    LIMIT,
    PATHS,
    Slow,
    deadline,
    path_for,
    quick_figures,
    snapshot,
    stock,
    working_folder,
)

SRC = Path(attnsep.__file__).parent
TINY = {"d_values": [16], "m_values": [4], "seeds": 2, "series": ["fixed"]}
"""The one-step experiment's tiny config: its jobs are in the stocked store."""
BASELINE: dict[str, dict[str, Any]] = {
    "xor_one_step": {"d": 8, "m": 4, "seeds": 2},
    "xor_train": {"d": 4, "m": 4, "seeds": 2, "steps": 2},
    "xor_train_v1": {"n": 4, "k": 2, "seeds": 1, "epochs": 2},
    "train_selector": {"T": 4, "q": 2, "m_p": 4, "d": 2, "seeds": 1, "steps": 2, "batch": 4,
                       "eval_size": 2},
    "selection_bounds": {"T": 8, "q": 2},
    "train_fcn": {"task": "xor", "d": 4, "width": 2, "seeds": 1, "steps": 2, "batch": 4,
                  "test_samples": 64},
    "executor": {"name": "process", "workers": 1},
    "run_experiment": {"name": "one-step", "config": TINY, "executor": "inline"},
    "sweep": {"experiment": "one-step", "fixed": TINY, "executor": "inline"},
    "sweep_plan": {"experiment": "one-step", "fixed": TINY, "executor": "inline",
                   "calibration": 0},
    "reproduce_plan": {"names": ["one-step"], "executor": "inline", "calibration": 0},
    "report": {},
    "show": {"name": "one-step"},
    "runs": {},
    "load_runs": {},
    "stored_run": {"job_id": 1},
    "export_runs": {"format": "csv", "output": "out.csv"},
    "frontier_xor": {"d_values": [2], "seeds": 1},
    "frontier_select": {"T_values": [4], "q_values": [1], "d": 1, "seeds": 1},
}  # fmt: skip
"""Tiny, valid calls of the functions that take a user's values; ``reproduce`` is fuzzed
through ``reproduce_plan``, which checks its arguments the same way (``planned``) without
running the experiments."""
RESUMABLE = {"run_experiment", "sweep", "frontier_xor", "frontier_select"}
"""Functions whose jobs are stored as they finish: a long run is announced, not refused."""
OPTIONS = {
    "xor_one_step": configs.OneStepConfig,
    "xor_train": configs.XorTrainConfig,
    "xor_train_v1": configs.V1Config,
    "train_selector": configs.SelectionTrainConfig,
    "train_fcn": configs.XorFCNConfig,
}
"""The config whose fields a function's ``**options`` takes."""

CORE: list[Any] = [
    0, -1, 1.5, 10**30, 2**62, 10**5000, math.nan, math.inf, -math.inf, "", "abc", "é🙂日本",
    "x" * 10_000, None, True, [], [1, 2], {"a": 1}, object(),
]  # fmt: skip
"""Explicit examples of every parameter."""
MORE: list[Any] = [
    -(10**30), 1e308, -0.0, 1e-320, "1", " ", "\udcff", "\x00", [[1]], (), {}, b"bytes",
    [10**30], [math.nan], ["a"], range(3), Path("folder"), 3 + 4j,
]  # fmt: skip
"""Drawn rather than given to every parameter."""
NOPE = "<unknown option>"


@dataclass(frozen=True)
class Target:
    """One parameter (or ``**options`` field) of one function."""

    function: str
    name: str  # a parameter, or a field of ``OPTIONS[function]``, or NOPE

    @property
    def pathlike(self) -> bool:
        return self.name in ("save", "figures", "store", "out", "output", "config_file")

    def __str__(self) -> str:
        return f"{self.function}({self.name})"


def targets() -> list[Target]:
    found = []
    for function in BASELINE:
        params = inspect.signature(getattr(api, function)).parameters
        for name, param in params.items():
            if param.kind is inspect.Parameter.VAR_KEYWORD:  # the config's other fields
                fields = [f for f in OPTIONS[function].model_fields if f not in params]
                found += [Target(function, field) for field in (*fields, NOPE)]
            else:
                found.append(Target(function, name))
    return found


TARGETS = targets()


def test_every_public_function_taking_values_is_fuzzed() -> None:
    """A new function of ``api`` that takes values needs a tiny valid call in BASELINE. Public:
    defined there, or re-exported (``from .engine.runs import runs as runs``)."""
    source = Path(api.__file__).read_text(encoding="utf-8")
    exported = set(re.findall(r"import (\w+) as \1\b", source))
    public = {
        name
        for name, item in vars(api).items()
        if inspect.isfunction(item)
        and not name.startswith("_")
        and (item.__module__ == api.__name__ or name in exported)
        and inspect.signature(item).parameters
    }
    elsewhere = {"plan", "plan_table", "text_tables", "xor_train_figures", "reproduce"}
    assert public - elsewhere == set(BASELINE), public ^ set(BASELINE)


@pytest.fixture(scope="module")
def stocked_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sweep = ["sweep", "one-step", "--executor", "inline", "--quiet"]
    sweep += [word for key, value in TINY.items() for word in ("--set", f"{key}={value}")]
    sweep[-1] = 'series=["fixed"]'  # JSON, as the command reads it
    commands = [sweep, ["frontier", "xor", "--d", "2", "--seeds", "1"]]
    commands.append(["frontier", "select", "--T", "4", "--q", "1", "--d", "1", "--seeds", "1"])
    with quick_figures():
        return stock(tmp_path_factory.mktemp("stocked"), commands)


def deliberate(err: BaseException) -> bool:
    """Whether ``err`` was raised by a ``raise`` of attnsep's own code (a check), not by an
    operation that failed (Python's, a library's) somewhere on the way."""
    last = traceback.extract_tb(err.__traceback__)[-1]
    return Path(last.filename).is_relative_to(SRC) and "raise" in (last.line or "")


def call(target: Target, value: Any) -> None:
    """The baseline call of ``target.function`` with ``target`` set to ``value``."""
    kwargs = dict(BASELINE[target.function])
    if isinstance(value, str) and value in PATHS:
        value = path_for(value, ".npz" if target.name == "save" else "")
    kwargs["nope" if target.name == NOPE else target.name] = value
    getattr(api, target.function)(**kwargs)


def check(target: Target, value: Any, store: Path) -> None:
    paths = target.pathlike and isinstance(value, str) and value in PATHS
    with working_folder(store, paths) as folder, warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        before = snapshot(folder)

        def announced() -> bool:  # a resumable run warned that it will be long
            long = any(type(w.message).__name__ == "LongRun" for w in said)
            return target.function in RESUMABLE and long

        what = f"{target.function}({target.name}={shown(value, 200)})"
        try:
            with deadline(LIMIT, announced):
                call(target, value)
        except Slow:
            assert announced(), f"{what} took more than {LIMIT} s"
        except (ValueError, TypeError) as err:
            line = str(err)
            assert line and "\n" not in line, f"{what} raised a message of many lines: {line!r}"
            stack = "".join(traceback.format_exception(err))
            assert deliberate(err), f"{what} raised {err!r} from deep in a run:\n{stack}"
            assert snapshot(folder) == before, f"{what} raised {line!r} and changed the folder"
        except BaseException as err:
            stack = "".join(traceback.format_exception(err))
            pytest.fail(f"{what} raised {type(err).__name__}, not ValueError:\n{stack}")


def explicit(test: Callable[..., None]) -> Callable[..., None]:
    for value in CORE + PATHS:
        test = example(value=value)(test)
    return test


def pointless(target: Target, value: Any) -> bool:
    """A path kind where no path is taken: just a word there, as ``"abc"`` is."""
    return isinstance(value, str) and value in PATHS and not target.pathlike


def values() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.sampled_from(CORE + MORE),
        INTEGERS,
        st.floats(),
        st.text(),
        st.lists(st.one_of(INTEGERS, st.floats(), st.text(max_size=3)), max_size=4),
        st.dictionaries(st.text(max_size=8), INTEGERS, max_size=3),
    )


@pytest.mark.parametrize("target", TARGETS, ids=str)
@FUZZ
@explicit
@given(value=values())
def test_a_parameter_given_anything_returns_or_raises_one_line(
    target: Target, value: Any, stocked_store: Path
) -> None:
    if not pointless(target, value):
        with quick_figures():
            check(target, value, stocked_store)
