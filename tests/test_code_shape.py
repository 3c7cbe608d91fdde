"""The package's shape (DESIGN: small modules): no module over 400 lines, no function over 60,
the command line (cli/: parse, call the API, print) at most 600 lines in all."""

from __future__ import annotations

import ast
from pathlib import Path

import attnsep

PACKAGE = Path(attnsep.__file__).resolve().parent
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
MAX_CLI_LINES = 600


def sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_no_module_is_over_400_lines() -> None:
    sizes = {str(p.relative_to(PACKAGE)): len(p.read_text().splitlines()) for p in sources()}
    assert len(sizes) > 100
    assert {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES} == {}


def test_no_function_is_over_60_lines() -> None:
    long = {}
    for path in sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(PACKAGE)}:{node.name}"] = lines
    assert long == {}


def test_the_command_line_is_at_most_600_lines() -> None:
    sizes = {p.name: len(p.read_text().splitlines()) for p in (PACKAGE / "cli").glob("*.py")}
    assert len(sizes) >= 4
    assert sum(sizes.values()) <= MAX_CLI_LINES, sizes
