"""Bad input through the Python API: a one-line ``ValueError`` naming the value.

The same classes as ``test_reliability_cli.py`` (impossible sizes, unknown names, non-finite
or negative rates, bad supports, wrong types, unusable stores), for the config constructors,
the closed forms and the results store.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable

import pytest

from attnsep.configs import SelectionFCNConfig, XorFCNConfig
from attnsep.engine.store import Store
from attnsep.exact import selection_bounds as exact_selection
from attnsep.tasks.parity import SparseParity
from attnsep.tasks.selection import TokenSelection
from attnsep.train.one_step import OneStepConfig
from attnsep.train.selection import SelectionTrainConfig

NAN, INF = math.nan, math.inf


def case(build: Callable[[], object], *names: str, id: str):
    return pytest.param(build, names, id=id)


CASES = [
    # ---------------------------------------------------------------- OneStepConfig
    case(lambda: OneStepConfig(d=1), "d", "got 1", id="one-step d=1"),
    case(lambda: OneStepConfig(d=True), "d", "True", id="one-step d=True"),
    case(lambda: OneStepConfig(d=8.0), "d", "8.0", id="one-step d=8.0"),
    case(lambda: OneStepConfig(d="8"), "d", "'8'", id="one-step d='8'"),
    case(lambda: OneStepConfig(d=8, m=0), "m", "got 0", id="one-step m=0"),
    case(lambda: OneStepConfig(d=8, seeds=0), "seeds", "got 0", id="one-step seeds=0"),
    case(lambda: OneStepConfig(d=8, k=9), "k", "9", id="one-step k>d"),
    case(lambda: OneStepConfig(d=8, k=0), "k", "got 0", id="one-step k=0"),
    case(lambda: OneStepConfig(d=8, seed=-1), "seed", "-1", id="one-step seed=-1"),
    case(lambda: OneStepConfig(d=8, sign=0), "sign", "0", id="one-step sign=0"),
    case(lambda: OneStepConfig(d=8, attention="bogus"), "attention", "'bogus'", id="attention"),
    case(lambda: OneStepConfig(d=8, attention=None), "attention", "None", id="attention=None"),
    case(lambda: OneStepConfig(d=8, init="bogus"), "init", "'bogus'", id="one-step init"),
    case(lambda: OneStepConfig(d=8, dtype="float16"), "dtype", "float16", id="one-step dtype"),
    case(lambda: OneStepConfig(d=8, device="tpu"), "device", "tpu", id="one-step device"),
    case(lambda: OneStepConfig(d=8, eta=NAN), "eta", "nan", id="eta=nan"),
    case(lambda: OneStepConfig(d=8, eta=-1.0), "eta", "-1", id="eta=-1"),
    case(lambda: OneStepConfig(d=8, eta=INF), "eta", "inf", id="eta=inf"),
    case(lambda: OneStepConfig(d=8, eta=0.0), "eta", "0", id="eta=0"),
    case(lambda: OneStepConfig(d=8, eta="1"), "eta", "'1'", id="eta='1'"),
    case(lambda: OneStepConfig(d=8, eta=True), "eta", "True", id="eta=True"),
    case(lambda: OneStepConfig(d=8, eta_scale=NAN), "eta", "nan", id="eta_scale=nan"),
    case(lambda: OneStepConfig(d=8, samples=0), "samples", "0", id="samples=0"),
    case(lambda: OneStepConfig(d=8, samples=2.5), "samples", "2.5", id="samples=2.5"),
    case(lambda: OneStepConfig(d=8, noise=0.5), "noise", "0.5", id="noise=0.5"),
    case(lambda: OneStepConfig(d=8, noise=NAN), "noise", "nan", id="noise=nan"),
    case(lambda: OneStepConfig(d=8, success_tol=INF), "tol", "inf", id="success_tol=inf"),
    case(lambda: OneStepConfig(d=8, replica_batch=0), "batch", "0", id="replica_batch=0"),
    case(lambda: OneStepConfig(d=8, support=(3, 3)), "support", "[3, 3]", id="support repeats"),
    case(lambda: OneStepConfig(d=8, support=(0, 8)), "support", "[0, 8]", id="support >= d"),
    case(lambda: OneStepConfig(d=8, support=(-1, 2)), "support", "-1", id="support < 0"),
    case(lambda: OneStepConfig(d=8, support=(1, 2, 3)), "support", "[1, 2, 3]", id="support k+1"),
    case(lambda: OneStepConfig(d=8, support=(1.0, 2.0)), "support", "1.0", id="support floats"),
    case(lambda: OneStepConfig(d=8, support=(True, 2)), "support", "True", id="support bool"),
    case(lambda: OneStepConfig(d=8, support=3), "support", "3", id="support not a sequence"),
    # ---------------------------------------------------------------- SelectionTrainConfig
    case(lambda: SelectionTrainConfig(d=0), "d", "got 0", id="select d=0"),
    case(lambda: SelectionTrainConfig(T=4, q=5), "q=5", "T=4", id="select q>T"),
    case(lambda: SelectionTrainConfig(q=0), "q", "got 0", id="select q=0"),
    case(lambda: SelectionTrainConfig(T=2.5), "T", "2.5", id="select T=2.5"),
    case(lambda: SelectionTrainConfig(pe_dim=0), "pe_dim", "0", id="select pe_dim=0"),
    case(lambda: SelectionTrainConfig(steps=0), "steps", "0", id="select steps=0"),
    case(lambda: SelectionTrainConfig(batch=0), "batch", "0", id="select batch=0"),
    case(lambda: SelectionTrainConfig(seeds=0), "seeds", "0", id="select seeds=0"),
    case(lambda: SelectionTrainConfig(seed=-1), "seed", "-1", id="select seed=-1"),
    case(lambda: SelectionTrainConfig(fixed_positions=3), "fixed_positions", "3", id="fixed<T"),
    case(lambda: SelectionTrainConfig(pe="bogus"), "pe", "'bogus'", id="select pe"),
    case(lambda: SelectionTrainConfig(pe=["fixed"]), "pe", "fixed", id="select pe=list"),
    case(lambda: SelectionTrainConfig(pe_kind="bogus"), "pe_kind", "'bogus'", id="pe_kind"),
    case(lambda: SelectionTrainConfig(trainable="x"), "trainable", "'x'", id="trainable"),
    case(lambda: SelectionTrainConfig(objective="x"), "objective", "'x'", id="objective"),
    case(lambda: SelectionTrainConfig(objective="population"), "population", id="pop+full"),
    case(lambda: SelectionTrainConfig(lr=NAN), "lr", "nan", id="select lr=nan"),
    case(lambda: SelectionTrainConfig(lr=-1.0), "lr", "-1", id="select lr=-1"),
    case(lambda: SelectionTrainConfig(lr=INF), "lr", "inf", id="select lr=inf"),
    case(lambda: SelectionTrainConfig(lr="3"), "lr", "'3'", id="select lr='3'"),
    # ---------------------------------------------------------------- XorFCNConfig
    case(lambda: XorFCNConfig(d=1), "d", "got 1", id="fcn-xor d=1"),
    case(lambda: XorFCNConfig(width=0), "width", "0", id="fcn-xor width=0"),
    case(lambda: XorFCNConfig(depth=0), "depth", "0", id="fcn-xor depth=0"),
    case(lambda: XorFCNConfig(seeds=0), "seeds", "0", id="fcn-xor seeds=0"),
    case(lambda: XorFCNConfig(first_replica=-1), "first_replica", "-1", id="first_replica"),
    case(lambda: XorFCNConfig(steps=0), "steps", "0", id="fcn-xor steps=0"),
    case(lambda: XorFCNConfig(batch=0), "batch", "0", id="fcn-xor batch=0"),
    case(lambda: XorFCNConfig(k=0), "k", "0", id="fcn-xor k=0"),
    case(lambda: XorFCNConfig(noise=0.5), "noise", "0.5", id="fcn-xor noise"),
    case(lambda: XorFCNConfig(lr=NAN), "lr", "nan", id="fcn-xor lr=nan"),
    case(lambda: XorFCNConfig(lr=-1.0), "lr", "-1", id="fcn-xor lr=-1"),
    case(lambda: XorFCNConfig(lr=INF), "lr", "inf", id="fcn-xor lr=inf"),
    case(lambda: XorFCNConfig(optimizer="bogus"), "optimizer", "'bogus'", id="fcn optimizer"),
    case(lambda: XorFCNConfig(loss="bogus"), "loss", "'bogus'", id="fcn-xor loss"),
    case(lambda: XorFCNConfig(dtype="x"), "dtype", "'x'", id="fcn-xor dtype"),
    case(lambda: XorFCNConfig(device="x"), "device", "'x'", id="fcn-xor device"),
    case(lambda: XorFCNConfig(success_tol=2.0), "success_tol", "2.0", id="fcn-xor tol"),
    case(lambda: XorFCNConfig(test_samples=0), "test_samples", "0", id="fcn-xor test=0"),
    case(lambda: XorFCNConfig(samples=0), "samples", "0", id="fcn-xor samples=0"),
    case(lambda: XorFCNConfig(samples=2.5), "samples", "2.5", id="fcn-xor samples=2.5"),
    case(lambda: XorFCNConfig(samples="5"), "samples", "'5'", id="fcn-xor samples='5'"),
    # ---------------------------------------------------------------- SelectionFCNConfig
    case(lambda: SelectionFCNConfig(d=0), "d", "got 0", id="fcn-select d=0"),
    case(lambda: SelectionFCNConfig(T=4, q=5), "q=5", "T=4", id="fcn-select q>T"),
    case(lambda: SelectionFCNConfig(width=0), "width", "0", id="fcn-select width=0"),
    case(lambda: SelectionFCNConfig(seeds=0), "seeds", "0", id="fcn-select seeds"),
    case(lambda: SelectionFCNConfig(lr=NAN), "lr", "nan", id="fcn-select lr=nan"),
    case(lambda: SelectionFCNConfig(lr=-1.0), "lr", "-1", id="fcn-select lr=-1"),
    case(lambda: SelectionFCNConfig(lr=INF), "lr", "inf", id="fcn-select lr=inf"),
    case(lambda: SelectionFCNConfig(eval_samples=1), "eval_samples", "1", id="eval_samples=1"),
    case(lambda: SelectionFCNConfig(samples=0), "samples", "0", id="fcn-select samples=0"),
    case(lambda: SelectionFCNConfig(samples=2.5), "samples", "2.5", id="fcn-select samples=2.5"),
    # ---------------------------------------------------------------- tasks, closed forms
    case(lambda: SparseParity(1), "d", "got 1", id="SparseParity d=1"),
    case(lambda: SparseParity(8, k=9), "k", "9", id="SparseParity k>d"),
    case(lambda: TokenSelection(2, 4, 5), "q=5", "T=4", id="TokenSelection q>T"),
    case(lambda: exact_selection.uniform_attention_loss(4, 5), "q=5", id="uniform q>T"),
    case(lambda: exact_selection.zero_predictor_loss(0), "q", "0", id="zero q=0"),
    case(lambda: exact_selection.orthonormal_loss(NAN, 8, 2), "alpha", "nan", id="alpha=nan"),
    case(lambda: exact_selection.orthonormal_loss(INF, 8, 2), "alpha", "inf", id="alpha=inf"),
    case(lambda: exact_selection.fcn_loss_floor(4, 5), "q=5", id="floor q>T"),
    case(lambda: exact_selection.fcn_loss_floor(4, 2, 2, -1), "width", "-1", id="floor width<0"),
    case(lambda: exact_selection.fcn_loss_floor(4, 2, None, 3), "d", id="floor width no d"),
    case(lambda: exact_selection.fcn_bottleneck_loss(4, 5, 2, 1), "q=5", id="bottleneck q>T"),
]


@pytest.mark.parametrize(("build", "names"), CASES)
def test_bad_api_input_is_a_one_line_value_error(build, names):
    with pytest.raises(ValueError) as info:
        build()
    message = str(info.value)
    assert message and "\n" not in message, repr(message)
    for name in names:
        assert name in message, f"{name!r} not in {message!r}"


# ---------------------------------------------------------------- the results store


def newer_store(path):
    Store(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
    db.commit()
    db.close()
    return path


@pytest.mark.parametrize(
    ("make", "names"),
    [
        (lambda tmp: (tmp / "text.sqlite").write_text("not sqlite\n") and tmp / "text.sqlite", ()),
        (lambda tmp: (tmp / "bin.sqlite").write_bytes(b"\0" * 4096) and tmp / "bin.sqlite", ()),
        (lambda tmp: newer_store(tmp / "newer.sqlite"), ("99",)),
        (lambda tmp: "/proc/s.sqlite", ()),
        (lambda tmp: (tmp / "afile").write_text("x") and tmp / "afile" / "s.sqlite", ()),
        (lambda tmp: tmp, ()),  # a folder
    ],
    ids=["text file", "zeros", "newer schema", "unwritable folder", "under a file", "a folder"],
)
def test_unusable_store_is_a_one_line_value_error_naming_it(tmp_path, make, names):
    path = make(tmp_path)
    with pytest.raises(ValueError) as info:
        Store(path)
    message = str(info.value)
    assert "\n" not in message and str(path) in message, message
    for name in names:
        assert name in message, message
