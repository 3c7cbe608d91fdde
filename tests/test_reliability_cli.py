"""Bad input to every ``attnsep`` command: exit 2, one ``error:`` line, nothing written.

DESIGN.md: "Bad input (CLI or API): a one-line message naming the bad value and what is
allowed; CLI exits with code 2; no traceback; nothing written half-way."

Each row runs in a fresh folder (the working directory) holding the same fixtures: a text
file posing as a store, a store from a newer schema, a good store, config files with an
unknown key or a wrong type, and a plain file ``afile`` where a folder is expected. The
computations behind every command are replaced by a guard, so a bad value that slips past
validation fails the row at once (instead of training for minutes); only rows marked
``compute`` run the real thing (their bad value can only show up while computing).
"""

from __future__ import annotations

import gc
import io
import shlex
import sqlite3
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest

from attnsep.cli import main
from attnsep.engine.store import Store


class ComputeReached(AssertionError):
    """Raised by the guards: validation let a bad value through to the computation."""


@dataclass(frozen=True)
class Row:
    args: tuple[str, ...]
    names: tuple[str, ...]  # each must occur in the error line; "a|b" accepts either
    compute: bool = False  # run the real computation (no guard)


@dataclass
class Outcome:
    code: object
    stdout: str
    stderr: str


SMALL = "--d 2 --T 4 --q 1 --pe-dim 8 --steps 5"  # select train: tiny, should a guard be lifted
FAST = "--executor inline --quiet"  # engine commands: jobs in-process, no progress bar


def row(command: str, *names: str, compute: bool = False):
    """A row: the command line (shell syntax) and what its error line must name."""
    args = tuple(shlex.split(command))
    return pytest.param(Row(args, names, compute), id=command[:90])


ROWS = [
    # ------------------------------------------------------------ xor one-step
    row("xor one-step --d 1", "d must", "got 1"),
    row("xor one-step --d 8 --m 0", "m must", "got 0"),
    row("xor one-step --d 8 --seeds 0", "seeds", "got 0"),
    row("xor one-step --d 8 --k 9", "k must be <= d=8", "got 9"),
    row("xor one-step --d 8 --k 0", "k must", "got 0"),
    row("xor one-step --d 8 --attention bogus", "attention", "'bogus'"),
    row("xor one-step --d 8 --init bogus", "init", "'bogus'"),
    row("xor one-step --d 8 --dtype float16", "dtype", "'float16'"),
    row("xor one-step --d 8 --device tpu", "device", "'tpu'"),
    row("xor one-step --d 8 --eta nan", "eta must", "got nan"),
    row("xor one-step --d 8 --eta -1", "eta must", "> 0", "got -1"),
    row("xor one-step --d 8 --eta inf", "eta must", "got inf"),
    row("xor one-step --d 8 --eta 1e400", "eta must", "got inf"),
    row("xor one-step --d 8 --eta fast", "--eta", "'auto'", "'fast'"),
    row("xor one-step --d 8 --eta-scale nan", "eta", "nan"),
    row("xor one-step --d 8 --eta-scale -1", "eta", "-1"),
    row("xor one-step --d 8 --samples 0", "samples must", "got 0"),
    row("xor one-step --d 8 --samples 1.5", "--samples", "'population'", "'1.5'"),
    row("xor one-step --d 8 --noise 0.5", "noise", "0.5"),
    row("xor one-step --d 8 --noise nan", "noise", "nan"),
    row("xor one-step --d 8 --success-tol nan", "tol", "nan"),
    row("xor one-step --d 8 --seed -1", "seed", "got -1"),
    row("xor one-step --d 8 --support 3,3", "support", "[3, 3]"),
    row("xor one-step --d 8 --support 0,8", "support", "[0, 8]", "[0, 8)"),
    row("xor one-step --d 8 --support -1,2", "support", "[-1, 2]"),
    row("xor one-step --d 8 --support 1,2,3", "support", "[1, 2, 3]"),
    row("xor one-step --d 8 --support 1,,2", "--support", "'1,,2'"),
    row("xor one-step --d 8 --support a,b", "--support", "'a,b'"),
    row("xor one-step --d 8 --save /proc/x.npz", "/proc"),
    row("xor one-step --d 8 --save out.txt", "out.txt", ".npz"),
    row("xor one-step --d 8 --save afile/x.npz", "afile"),
    # an overflowing step shows only while computing; its --save file must not be written
    row(
        "xor one-step --d 64 --seeds 2 --attention linear --eta 1e300 --save run.npz",
        "eta=1e+300",
        compute=True,
    ),
    # ------------------------------------------------------------ select train
    row(f"select train {SMALL} --d 0", "d must", "got 0"),
    row(f"select train {SMALL} --T 4 --q 5", "q=5", "T=4"),
    row(f"select train {SMALL} --q 0", "q must", "got 0"),
    row(f"select train {SMALL} --seeds 0", "seeds", "got 0"),
    row(f"select train {SMALL} --steps 0", "steps", "got 0"),
    row(f"select train {SMALL} --batch 0", "batch", "got 0"),
    row(f"select train {SMALL} --pe-dim 0", "pe", "got 0"),
    row(f"select train {SMALL} --seed -1", "seed", "got -1"),
    row(f"select train {SMALL} --pe bogus", "pe", "'bogus'"),
    row(f"select train {SMALL} --pe-kind bogus", "pe", "'bogus'"),
    row(f"select train {SMALL} --trainable bogus", "trainable", "'bogus'"),
    row(f"select train {SMALL} --lr nan", "lr", "nan"),
    row(f"select train {SMALL} --lr -1", "lr", "-1"),
    row(f"select train {SMALL} --lr inf", "lr", "inf"),
    row(f"select train {SMALL} --lr 0", "lr", "0"),
    # a finite rate so large that W overflows after one step: seen only while training
    row(
        "select train --d 50 --T 4 --q 1 --pe-dim 4 --steps 4 --batch 16 --lr 1e308",
        "lr",
        compute=True,
    ),
    row(f"select train {SMALL} --eval-lengths 20,x", "--eval-lengths", "x"),
    row(f"select train {SMALL} --eval-lengths 20,,40", "--eval-lengths", "'20,,40'"),
    row(f"select train {SMALL} --eval-lengths 0", "eval length must", "got 0"),
    row(f"select train {SMALL} --eval-size 1", "eval size", "got 1"),
    row(f"select train {SMALL} --save /proc/x.npz", "/proc"),
    row(f"select train {SMALL} --save out.txt", "out.txt", ".npz"),
    # ------------------------------------------------------------ select bound
    row("select bound --T 4 --q 5", "q=5", "T=4"),
    row("select bound --T 0 --q 1", "T must", "got 0"),
    row("select bound --T 4 --q 0", "q must", "got 0"),
    row("select bound --T 4 --q 1 --d 0", "d must", "got 0"),
    row("select bound --T 4 --q 1 --width 3", "width needs d"),
    row("select bound --T 4 --q 1 --d 2 --width -1", "width", "-1"),
    # ------------------------------------------------------------ fcn
    row("fcn xor --d 1", "d must", "got 1"),
    row("fcn xor --d 8 --width 0", "width", "got 0"),
    row("fcn xor --d 8 --seeds 0", "seeds", "got 0"),
    row("fcn xor --d 8 --steps 0", "steps", "got 0"),
    row("fcn xor --d 8 --batch 0", "batch", "got 0"),
    row("fcn xor --d 8 --seed -1", "seed", "got -1"),
    row("fcn xor --d 8 --lr nan", "lr", "nan"),
    row("fcn xor --d 8 --lr -1", "lr", "-1"),
    row("fcn xor --d 8 --lr inf", "lr", "inf"),
    row("fcn xor --d 8 --optimizer bogus", "optimizer", "'bogus'"),
    row("fcn xor --d 8 --loss bogus", "loss", "'bogus'"),
    row("fcn select --d 0", "d must", "got 0"),
    row("fcn select --T 4 --q 5", "q=5", "T=4"),
    row("fcn select --width 0", "width", "got 0"),
    row("fcn select --seeds 0", "seeds", "got 0"),
    row("fcn select --steps 0", "steps", "got 0"),
    row("fcn select --lr nan", "lr", "nan"),
    row("fcn select --lr -1", "lr", "-1"),
    row("fcn select --lr inf", "lr", "inf"),
    # ------------------------------------------------------------ frontier
    row("frontier xor --d 1", "d must", "got 1"),
    row("frontier xor --d 16,,32", "--d", "'16,,32'"),
    row("frontier xor --d 16,", "--d", "'16,'"),
    row("frontier xor --d 16,x", "--d", "'16,x'"),
    row("frontier xor --d 32,16", "d must be increasing", "[32, 16]"),
    row("frontier xor --d 16,16", "d must be increasing", "[16, 16]"),
    row("frontier xor --d ''", "--d", "''"),
    row("frontier xor --seeds 0", "seeds", "got 0"),
    row("frontier xor --seed -1", "seed", "got -1"),
    row("frontier select --T 1", "T must", "got 1"),
    row("frontier select --T 8,,16", "--T", "'8,,16'"),
    row("frontier select --T 8,16 --q 9", "q=9", "T=8"),
    row("frontier select --T 8,16 --q 8", "q=8", "T=8"),
    row("frontier select --d 0", "d must", "got 0"),
    row("frontier select --q 0", "q must", "got 0"),
    row("frontier select --q 2,1", "q must be increasing", "[2, 1]"),
    row("frontier select --seeds 0", "seeds", "got 0"),
    row("frontier select --seed -1", "seed", "got -1"),
    row("frontier select --store afile/s.sqlite", "afile"),
    row("frontier xor --store afile/s.sqlite", "afile"),
    # ------------------------------------------------------------ sweep
    row(f"sweep bogus --store s.sqlite {FAST}", "experiment", "'bogus'"),
    row("sweep one-step --executor bogus --store s.sqlite", "'bogus'"),
    row("sweep one-step --preset bogus --store s.sqlite", "'bogus'"),
    row("sweep one-step --config unknown.toml --store s.sqlite", "bogus"),
    row("sweep one-step --config wrong.toml --store s.sqlite", "seeds"),
    row("sweep one-step --config unknown.yaml --store s.sqlite", "bogus"),
    row("sweep one-step --config wrong.yaml --store s.sqlite", "seeds"),
    row("sweep one-step --config badgrid.toml --store s.sqlite", "seeds"),
    row("sweep one-step --config missing.toml --store s.sqlite", "missing"),
    row("sweep one-step --config conf.json --store s.sqlite", "conf.json"),
    row("sweep one-step --set bogus=1 --store s.sqlite", "bogus"),
    row(f"sweep one-step --set seeds=0 --store s.sqlite {FAST}", "seeds"),
    row(f"sweep one-step --set seeds=x --store s.sqlite {FAST}", "seeds"),
    row("sweep one-step --set attention=bogus --store s.sqlite", "bogus"),
    row("sweep one-step --set eta_scale=-1 --store s.sqlite", "eta_scale"),
    row("sweep one-step --grid seeds=1,,2 --store s.sqlite", "seeds"),
    row("sweep one-step --grid seeds= --store s.sqlite", "seeds="),
    row("sweep one-step --set 'd_values=[]' --store s.sqlite", "d_values"),
    # values the experiment configs accept although the library refuses them
    row(f"sweep one-step --set 'd_values=[1]' --store s.sqlite {FAST}", "d_values|d must", "1"),
    row(f"sweep one-step --set 'm_values=[0]' --store s.sqlite {FAST}", "m_values|m must", "0"),
    row(f"sweep one-step --set seed=-1 --store s.sqlite {FAST}", "seed", "-1"),
    row(
        f"sweep one-step --set eta_scale=Infinity --store s.sqlite {FAST}",
        "eta_scale|eta scale",
        "inf",
    ),
    row(f"sweep one-step --set device=tpu --store s.sqlite {FAST}", "device", "tpu"),
    row(
        f"sweep attention-maps --set 'eta_exponents=[NaN]' --store s.sqlite {FAST}", "eta_exponents"
    ),
    row(f"sweep attention-maps --set 'eta_exponents=[400]' --store s.sqlite {FAST}", "eta", "400"),
    row(f"sweep select-convergence --set lr_per_dim=Infinity --store s.sqlite {FAST}", "lr", "inf"),
    row(f"sweep select-convergence --set q=50 --store s.sqlite {FAST}", "q", "50"),
    row(f"sweep select-convergence --set 'seeds=[-1]' --store s.sqlite {FAST}", "seed", "-1"),
    row(f"sweep fcn-selection --set 'width_fractions=[0]' --store s.sqlite {FAST}", "width", "0"),
    row(f"sweep fcn-selection --set 'kinds=[\"bogus\"]' --store s.sqlite {FAST}", "kind", "bogus"),
    row(
        f"sweep separation-xor --set 'd_values=[1]' --store s.sqlite {FAST}", "d_values|d must", "1"
    ),
    row(f"sweep separation-select --set 'T_values=[1]' --store s.sqlite {FAST}", "T_values", "1"),
    row(
        f"sweep separation-select --set q_values=[9] --store s.sqlite {FAST}",
        "q must be < every T",
        "9",
    ),
    row(f"sweep one-step --store /proc/s.sqlite {FAST}", "/proc/s.sqlite"),
    row(f"sweep one-step --store afile/s.sqlite {FAST}", "afile"),
    row(f"sweep one-step --store text.sqlite {FAST}", "text.sqlite"),
    row(f"sweep one-step --store newer.sqlite {FAST}", "newer.sqlite", "99"),
    # ------------------------------------------------------------ reproduce
    row(f"reproduce --only bogus --store s.sqlite {FAST}", "'bogus'"),
    row(f"reproduce --only , --store s.sqlite {FAST}", "--only", "','"),
    row("reproduce --executor bogus --store s.sqlite", "'bogus'"),
    row("reproduce --quick --full --store s.sqlite", "--quick", "--full"),
    row(f"reproduce --only one-step --store /proc/s.sqlite {FAST}", "/proc/s"),
    row(f"reproduce --only one-step --store text.sqlite {FAST}", "text.sqlite"),
    row(f"reproduce --only one-step --store newer.sqlite {FAST}", "newer", "99"),
    row(f"reproduce --only one-step --out /proc/r --store s.sqlite {FAST}", "/proc/r"),
    row(f"reproduce --only one-step --out afile --store s.sqlite {FAST}", "afile"),
    # ------------------------------------------------------------ runs
    row("runs list --store missing.sqlite", "missing.sqlite"),
    row("runs list --store text.sqlite", "text.sqlite"),
    row("runs list --store newer.sqlite", "newer.sqlite", "99"),
    row("runs list --store /proc/s.sqlite", "/proc/s.sqlite"),
    row("runs show 1 --store text.sqlite", "text.sqlite"),
    row("runs show 1 --store newer.sqlite", "newer.sqlite", "99"),
    row("runs show 999 --store ok.sqlite", "999"),
    row("runs show abc --store ok.sqlite", "job_id|abc"),
    row("runs export --format bogus --store ok.sqlite", "'bogus'"),
    row("runs export --format csv --store text.sqlite", "text.sqlite"),
    row("runs export --format csv --store newer.sqlite", "newer", "99"),
    row("runs export --format csv --store missing.sqlite", "missing"),
    row("runs export --format csv --store ok.sqlite --output /proc/x.csv", "/proc"),
    row("runs export --format csv --store ok.sqlite --output e.txt", "e.txt", ".csv"),
    # ------------------------------------------------------------ report
    row("report --store missing.sqlite", "missing.sqlite"),
    row("report --store text.sqlite", "text.sqlite"),
    row("report --store newer.sqlite", "newer.sqlite", "99"),
    row("report --store ok.sqlite --out /proc/r", "/proc/r"),
    row("report --store ok.sqlite --out afile", "afile"),
    # ------------------------------------------------------------ list
    row("list --bogus", "--bogus"),
    # ------------------------------------------------------------ unknown command
    row("bogus", "bogus"),
]


def make_fixtures(folder: Path) -> None:
    """The inputs the rows refer to, in ``folder``."""
    (folder / "text.sqlite").write_text("these are not the results you are looking for\n")
    Store(folder / "ok.sqlite").close()
    newer = folder / "newer.sqlite"
    Store(newer).close()
    db = sqlite3.connect(newer)
    db.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
    db.commit()
    db.close()
    (folder / "unknown.toml").write_text("[set]\nbogus = 1\n")
    (folder / "wrong.toml").write_text("[set]\nseeds = 'many'\n")
    (folder / "badgrid.toml").write_text("[grid]\nseeds = 3\n")
    (folder / "unknown.yaml").write_text("set:\n  bogus: 1\n")
    (folder / "wrong.yaml").write_text("seeds: [1, 2]\n")
    (folder / "conf.json").write_text('{"seeds": 1}\n')
    (folder / "afile").write_text("a file where a folder is expected\n")


def tree(folder: Path) -> set[str]:
    """Every path under ``folder`` (files and folders), relative."""
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def attnsep(*args: str) -> Outcome:
    """Run the command in this process, as the console script does; an exception that
    escapes ``main`` (it would print a traceback) is recorded in ``code``."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            main(list(args))
            code: object = 0
        except SystemExit as exit_:
            code = exit_.code
        except Exception as exc:  # noqa: BLE001 - a traceback is what the row checks for
            code = f"uncaught {type(exc).__name__}: {exc}"
    return Outcome(code, out.getvalue(), err.getvalue())


def install_guards(monkeypatch) -> None:
    """Replace every command's computation by :class:`ComputeReached`."""

    def guard_for(target: str):
        def guard(*args, **kwargs):
            raise ComputeReached(f"the bad value reached {target} (it was not validated)")

        return guard

    for target in (
        "attnsep.train.one_step.run_one_step",
        "attnsep.train.selection.train",
        "attnsep.train.fcn.train_xor",
        "attnsep.train.fcn.train_selection",
        "attnsep.api.run_experiment",
        "attnsep.engine.sweep.run_sweep",
    ):
        monkeypatch.setattr(target, guard_for(target))


@pytest.mark.parametrize("case", ROWS)
def test_bad_input_exits_2_with_one_line_and_writes_nothing(case: Row, tmp_path, monkeypatch):
    make_fixtures(tmp_path)
    monkeypatch.chdir(tmp_path)
    if not case.compute:
        install_guards(monkeypatch)
    before = tree(tmp_path)
    result = attnsep(*case.args)
    created = sorted(tree(tmp_path) - before)
    if created:  # a store connection the failed command left open may still hold -wal files
        gc.collect()
        created = sorted(tree(tmp_path) - before)
    detail = f"code={result.code!r} stdout={result.stdout!r} stderr={result.stderr!r}"
    assert result.code == 2, detail
    assert result.stdout == "", detail
    assert result.stderr.startswith("error: "), detail
    assert result.stderr.endswith("\n") and result.stderr.count("\n") == 1, detail
    line = result.stderr
    for name in case.names:
        assert any(alt in line for alt in name.split("|")), f"{name!r} not named: {line!r}"
    assert created == [], f"created {created} although the command failed ({detail})"
