"""``attnsep xor | select | fcn | frontier ...``: the commands that each call one library
function, made by ``common.library_command`` from its parameters and its config's fields: one
step and training of the k-head model (SPEC A5, A6), the selector and its bounds (SPEC B3, B4),
the fully-connected baselines (SPEC A7.6, B4, B5.4) and the frontiers (SPEC A7.6, Part C)."""

from __future__ import annotations

from typing import Any

import typer

from .. import api
from ..configs import (
    OneStepConfig,
    SelectionFCNConfig,
    SelectionTrainConfig,
    V1Config,
    XorFCNConfig,
    XorTrainConfig,
)
from .common import library_command

groups = {
    name: typer.Typer(no_args_is_help=True, help=text)
    for name, text in [
        ("xor", "Sparse XOR / k-sparse parity with the query-vector attention model."),
        ("select", "Sparse token selection: the one-layer selector, FCN bounds."),
        ("frontier", "Parameters needed vs problem size: attention vs FCN."),
        ("fcn", "Fully-connected ReLU baselines on sparse XOR and selection."),
    ]
}
"""Each group of commands, with its help."""
FCN = {"skip": "first_replica"}  # the experiments' field
SELECT = {"model": SelectionTrainConfig, "skip": "fixed_positions"}  # set from eval_lengths
FLAGS = {"flags": {"d_values": "--d", "T_values": "--T", "q_values": "--q"}}  # the frontiers' lists
COMMANDS: list[tuple[str, Any, str, dict[str, Any]]] = [
    ("xor one-step", api.xor_one_step, "save", {"model": OneStepConfig}),
    ("xor train", api.xor_train, "save figures", {"model": XorTrainConfig}),
    ("xor train-v1", api.xor_train_v1, "", {"model": V1Config}),
    ("select train", api.train_selector, "eval_lengths eval_size save", SELECT),
    ("select bound", api.selection_bounds, "T q d width", {}),
    ("fcn xor", api.train_fcn, "", {"model": XorFCNConfig, "task": "xor", **FCN}),
    ("fcn select", api.train_fcn, "", {"model": SelectionFCNConfig, "task": "select", **FCN}),
    ("frontier xor", api.frontier_xor, "d_values seeds seed store", FLAGS),
    ("frontier select", api.frontier_select, "T_values q_values d seeds seed solver store", FLAGS),
]
"""Each command: its name, the library function it calls, that function's parameters given as
options, and ``library_command``'s other arguments."""
for label, function, names, more in COMMANDS:
    group, name = label.split()
    groups[group].command(name)(library_command(label, function, names, **more))
