"""The package's import graph (DESIGN: layering): no cycles, configuration at the bottom.

The graph has an edge ``a -> b`` for every ``import`` of ``b`` anywhere in ``a``: inside
functions too (a lazy import still ties the two modules together) and under ``if
TYPE_CHECKING:`` (a type hint ties them as well, though it never runs). The one-door check of
the command line skips the type hints (they load nothing).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import attnsep

PACKAGE = Path(attnsep.__file__).resolve().parent
CORE = {"attnsep", "attnsep.core"} | {
    f"attnsep.core.{name}"
    for name in ("rng", "validate", "parse", "resources", "device", "io", "random_rows")
}


def modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def imported(name: str, path: Path, known: dict[str, Path], hints: bool = True) -> set[str]:
    """The package modules ``name`` imports (a name imported from a package counts as its
    submodule when there is one, else as the package); ``hints=False`` leaves out those
    imported under ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {
        id(node)
        for branch in ast.walk(tree)
        if not hints and isinstance(branch, ast.If) and "TYPE_CHECKING" in ast.unparse(branch.test)
        for node in ast.walk(branch)
    }
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in known}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                full = f"{source}.{alias.name}"
                out.add(full if full in known else source)
    return {m for m in out if m in known and m != name}


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imported(name, path, known) for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles_in_the_package() -> None:
    assert cycles(graph()) == []


def test_a_type_hint_import_counts_in_the_graph(tmp_path: Path) -> None:
    source = tmp_path / "fake.py"
    source.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .store import Store\n"
    )
    known = modules()
    assert imported("attnsep.engine.fake", source, known) == {"attnsep.engine.store"}
    assert imported("attnsep.engine.fake", source, known, hints=False) == set()


def test_configs_import_only_the_core() -> None:
    edges = graph()
    configs = {m for m in edges if m == "attnsep.configs" or m.startswith("attnsep.configs.")}
    assert len(configs) > 1  # the package and its modules
    for module in configs:
        assert edges[module] <= CORE | configs, module
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, attnsep.configs; print(' '.join(m for m in sys.modules if "
            "m.startswith('attnsep')))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert set(loaded) <= CORE | configs, loaded


def test_the_memory_models_load_neither_numpy_nor_torch() -> None:
    """``train.memory`` prices a run before anything is computed (the API's memory guard)."""
    code = "import sys, attnsep.train.memory; print(sorted({'numpy', 'torch'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["[]"]


def outside_the_cli(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package modules ``name`` imports other than ``attnsep.api``, ``attnsep.configs`` and
    the command line's own (``attnsep.cli``, ``attnsep.cli.*``)."""
    allowed = {"attnsep.api", "attnsep.configs", "attnsep.cli"}
    found = imported(name, path, known, hints=False)
    return {m for m in found if m not in allowed and not m.startswith("attnsep.cli.")}


def test_the_command_line_goes_through_the_api() -> None:
    """DESIGN (one door): every module of ``attnsep/cli`` imports, anywhere in it (inside
    functions too, not under ``if TYPE_CHECKING:``), only ``attnsep.api``, ``attnsep.configs``
    and ``attnsep.cli.*``."""
    known = modules()
    cli = {n: p for n, p in known.items() if n == "attnsep.cli" or n.startswith("attnsep.cli.")}
    assert len(cli) > 3
    for name, path in sorted(cli.items()):
        assert not outside_the_cli(name, path, known), f"{name} imports around the api"


def test_the_door_check_sees_a_lazy_import(tmp_path: Path) -> None:
    """The check above finds an import inside a function, and skips ``TYPE_CHECKING``."""
    source = tmp_path / "fake.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "from .. import api\n"
        "if TYPE_CHECKING:\n"
        "    from ..results import SweepResult\n"
        "def command():\n"
        "    from ..engine.store import Store\n"
        "    from ..configs import require\n"
    )
    found = outside_the_cli("attnsep.cli.fake", source, modules())
    assert found == {"attnsep.engine.store"}


def top_package(module: str) -> str:
    """``attnsep.train.fcn.loop`` -> ``train``; ``attnsep.attention`` -> ``attention``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_the_science_imports_downwards() -> None:
    """DESIGN (layering): the science (train, and below it metrics, exact, models, tasks and the
    maps and encodings) never imports the engine, the report, the experiments, the results, the
    API or the command line; and what lies below train never imports train."""
    above = {"engine", "report", "experiments", "results", "api", "cli"}
    below_train = {"metrics", "exact", "models", "tasks", "attention", "positional_encodings"}
    below_train |= {"embeddings"}
    for module, targets in graph().items():
        layer = top_package(module)
        found = {top_package(t) for t in targets}
        if layer in below_train | {"train"}:
            assert not found & above, f"{module} imports {sorted(found & above)}"
        if layer in below_train:
            assert "train" not in found, f"{module} imports train"
