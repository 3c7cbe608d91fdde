"""The ``attnsep`` command run in this process, as the console script runs it."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from typing import Any

from attnsep.cli import main


@dataclass
class Outcome:
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> dict[str, Any]:
        return json.loads(self.stdout)

    def __iter__(self) -> Iterator[Any]:  # code, out, err = attnsep(...)
        return iter((self.returncode, self.stdout, self.stderr))


def attnsep(*args: str) -> Outcome:
    """Run ``attnsep ARGS``; exit code (``SystemExit``), stdout and stderr are captured."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            main(list(args))
            code = 0
        except SystemExit as exit_:
            code = int(exit_.code or 0)
    return Outcome(code, out.getvalue(), err.getvalue())
