"""Write ``index.html`` (a jinja2 template, autoescaped) and ``claims.json`` for a list of
claims (atomic writes)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from ..core.io import atomic_writes, make_folder

BADGES = {
    "reproduced": "ok",
    "not reproduced": "bad",
    "inconclusive": "open",
    "incomplete": "none",
    "finding": "none",
    "confirmed": "ok",
    "check failed": "bad",
    "not checked": "open",
    "unstable": "shaky",
}
"""The verdict's colour: green (reproduced, a check confirmed), red (not reproduced, a check
failed), amber (inconclusive), orange (unstable: no verdict reached on enough master seeds),
grey (incomplete, a finding)."""
PAPERS = "the papers' claims"
KIND_TEXT = {
    "claim": "a claim: a verdict on a statement of the paper (reproduced, not reproduced or "
    "inconclusive; unstable when judged on several master seeds that agree on none)",
    "check": "a check: a theorem confirmed numerically; a failed check means a bug in attnsep, "
    "not a verdict on the paper",
    "finding": "a finding: beyond the papers, or a remark the paper makes in passing; its numbers "
    "and figures, no verdict on the paper",
}
"""Each entry's kind in words (SPEC Part F, ``metrics.stats.KINDS``)."""


def source_text(source: dict[str, Any] | None) -> str:
    """Where pre-registered error rates come from (SPEC Part E), in words: ``error rates
    pre-registered on the standard run of master seed 3 (exploratory), criterion version 2``;
    ``""`` without a source."""
    if not source:
        return ""
    return (
        f"error rates pre-registered on the {source.get('preset', '?')} run of master seed "
        f"{source.get('seed', '?')} ({source.get('run', 'exploratory')}), criterion version "
        f"{source.get('criterion_version', 1)}"
    )


def agreement_text(replication: dict[str, Any]) -> str:
    """How many master seeds reached the published verdict (``report.replication``, SPEC Part
    E): ``4/5 seeds agree (a verdict needs 4)``."""
    return f"{replication['agreement']} seeds agree (a verdict needs {replication['needed']})"


def seed_verdicts(replication: dict[str, Any]) -> list[tuple[int, str]]:
    """Each master seed of a replicated entry with the verdict reached on it."""
    return list(zip(replication["seeds"], replication["verdicts"], strict=True))


def sections(claims: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """Claims grouped by their ``section`` (the papers' own first), in the given order."""
    names = [PAPERS] + sorted({c.get("section", PAPERS) for c in claims} - {PAPERS})
    groups = [(n, [c for c in claims if c.get("section", PAPERS) == n]) for n in names]
    return [(n, members) for n, members in groups if members]


def render(claims: list[dict[str, Any]], preset: str) -> str:
    env = Environment(
        loader=PackageLoader("attnsep.report", "templates"),
        autoescape=select_autoescape(default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env.get_template("report.html.j2").render(
        preset=preset,
        stamp=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        sections=sections(claims),
        badges=BADGES,
        kinds=KIND_TEXT,
        replicated=any(c.get("replication") for c in claims),
        source_text=source_text,
        agreement_text=agreement_text,
        seed_verdicts=seed_verdicts,
    )


def write_report(claims: list[dict[str, Any]], preset: str, out: Path) -> tuple[Path, Path]:
    """``out/index.html`` and ``out/claims.json`` (``out`` is made if missing, one level),
    replaced together: a report stopped while writing keeps both previous files."""
    make_folder(out)
    index, table = out / "index.html", out / "claims.json"
    stable = [{k: v for k, v in c.items() if k != "seconds"} for c in claims]  # no timings
    text = json.dumps({"preset": preset, "claims": stable}, indent=2, allow_nan=False) + "\n"
    page = render(claims, preset)
    atomic_writes(
        {
            table: lambda handle: handle.write(text.encode()),
            index: lambda handle: handle.write(page.encode()),
        }
    )
    return index, table
