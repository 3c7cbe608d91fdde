"""Write the documentation's claims pages from the reports of ``attnsep reproduce``.

    python docs/build_claims_page.py results/report [more report folders ...]

Each report folder holds ``claims.json`` and the figures it names (``figures/*.png``). The
summary ``docs/claims.md`` is a table of every claim with its verdict, each claim linking to
its own page ``docs/claims/<claim>.md``: the verdict and its reason, the criterion and its
error rates, what was measured, the figures (copied to ``docs/claims/<experiment>/``) and the
estimates with their 95% intervals. Claims of several folders (e.g. the XOR and the
token-selection halves of a run) are listed in the order given; a claim that a later folder
holds too (judged again, e.g. on another master seed) is the later folder's, in the earlier
one's place (one only the later folder holds follows the claim before it there). The summary
and the folder ``docs/claims/`` are replaced whole, so nothing of an older run is left behind.

    python docs/build_claims_page.py results/report-full --store results/full.sqlite \
        --page docs/claims-full.md --assets docs/claims-full

With ``--store`` (the run's own results database; repeated, one per run of several folders),
the summary says what each run cost: the CPU time of the jobs its claims judge, summed, and its
wall time, the time during which at least one of them ran (a run stopped and resumed counts only
its stretches of work); the store's other jobs (e.g. an older version's) are counted apart.
With ``--beside FOLDER`` (another report, e.g. the standard preset's five-seed replication
``results/report-replication``; repeated, one column each), the summary shows each claim's
verdict there in a column of its own, so that what changes at paper scale, or on another master
seed, is seen at a glance.
"""

from __future__ import annotations

import argparse
import html
import json
import math
import os
import re
import shutil
import sqlite3
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from attnsep.engine.runs import busy_wall
from attnsep.experiments.base import REGISTRY
from attnsep.experiments.modules import load_all
from attnsep.report.claims import planned_jobs
from attnsep.report.html import KIND_TEXT, agreement_text, seed_verdicts, source_text

DOCS = Path(__file__).resolve().parent
ADMONITION = {
    "reproduced": "success",
    "not reproduced": "failure",
    "inconclusive": "warning",
    "incomplete": "note",
    "finding": "info",
    "confirmed": "success",
    "check failed": "bug",
    "not checked": "warning",
    "unstable": "question",
}
SEED_LETTERS = {
    "reproduced": "R",
    "not reproduced": "N",
    "inconclusive": "I",
    "confirmed": "C",
    "check failed": "X",
    "not checked": "?",
    "finding": "F",
    "incomplete": "-",
}
"""Each master seed's verdict as one letter in the summary's ``seeds`` column (SPEC Part E)."""
SPECIAL = "\\`*_{}[]>#"
SUMMARY = ".summary.md"  # the summary's name while staged (no claim page starts with a dot)


def escape(text: str, cell: bool = False) -> str:
    """``text`` shown as written: Markdown's special characters escaped (``|`` too in a table
    ``cell``), ``<`` as an entity."""
    special = SPECIAL + ("|" if cell else "")
    out = "".join("\\" + c if c in special else c for c in str(text))
    return out.replace("<", "&lt;")


def escape_item(text: str) -> str:
    """``escape`` for the text of a list item, which must not open a list of its own."""
    out = escape(text)
    if out[:1] in "-+":
        return "\\" + out
    return re.sub(r"^(\d+)\.", r"\1\\.", out)


def number(value: float | None) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float) and math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return f"{value:.4g}"


def css_class(verdict: str) -> str:
    """The CSS class of a verdict: ``not reproduced`` -> ``not-reproduced``."""
    return re.sub(r"[^a-z0-9]+", "-", str(verdict).lower()).strip("-") or "unknown"


def badge(verdict: str) -> str:
    """The verdict as a coloured label (``docs/stylesheets/claims.css``)."""
    return f'<span class="verdict {css_class(verdict)}">{html.escape(str(verdict))}</span>'


def page_name(claim_id: str, taken: set[str]) -> str:
    """A file name for the page of ``claim_id`` (``B5.1b`` -> ``B5.1b.md``): characters other
    than letters, digits, ``.``, ``-`` and ``_`` become ``-``, and it differs from the names
    ``taken`` (compared without case), to which it is added."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", str(claim_id)).strip(".-") or "claim"
    name, n = f"{stem}.md", 1
    while name.lower() in taken:
        n += 1
        name = f"{stem}-{n}.md"
    taken.add(name.lower())
    return name


def split_measured(text: str) -> list[str]:
    """The parts of a "Measured" text: split at its top-level ``; `` (and `` | ``) separators,
    never inside brackets."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth = max(depth - 1, 0)
        elif depth == 0 and (text.startswith("; ", i) or text.startswith(" | ", i)):
            parts.append(text[start:i])
            i += 2 if c == ";" else 3
            start = i
            continue
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def load(folder: Path) -> tuple[str, list[dict]]:
    """The preset and the claims of one report folder."""
    path = folder / "claims.json"
    if not path.is_file():
        raise ValueError(f"{str(folder)!r} has no claims.json: is it a report folder?")
    data = json.loads(path.read_text())
    return data.get("preset", "?"), data["claims"]


def run_line(claim: dict) -> str:
    """Which run judged the claim (SPEC Part E: exploratory or confirmatory) and the verdicts of
    the other runs the report found."""
    text = (
        f"{claim.get('run', 'exploratory')} run on master seed {claim.get('seed', 0)}, "
        f"criterion version {claim.get('criterion_version', 1)}"
    )
    others = [
        f"the {r['run']} run on seed {r['seed']}: {r['verdict']}" for r in claim.get("runs", [])
    ]
    return text + ("; " + "; ".join(others) if others else "")


def calibration_lines(cal: dict) -> list[str]:
    """Power, false pass and false fail with their intervals, whether they meet the goals, and
    the laws simulated."""
    lines = [
        f"Simulated {cal['simulations']} runs per law at these sizes.",
        "",
        "| rate | value | 95% interval |",
        "|---|---|---|",
    ]
    for name in ("power", "false_pass", "false_fail"):
        low, high = cal["intervals"][name]
        lines.append(f"| {name.replace('_', ' ')} | {cal[name]:.2f} | [{low:.2f}, {high:.2f}] |")
    lines.append("")
    if not cal["meets"]:
        goals = "Below the goals (power ≥ 0.8, false pass ≤ 0.05)"
        if cal.get("would_meet"):
            goals += f"; met in simulation at {cal['would_meet']}"
        lines += [escape(goals) + ".", ""]
    if cal.get("source"):
        lines += [f"- **Source:** {escape(source_text(cal['source']))}"]
    lines += [f"- **Paper's law:** {escape(cal['paper_law'])}"]
    lines += [f"- **Rival:** {escape(cal['rival_law'])}"]
    if cal.get("noise"):
        lines += [f"- **Noise:** {escape(cal['noise'])}"]
    return [*lines, ""]


def replication_lines(replication: dict) -> list[str]:
    """The verdict reached on each master seed and how many agree (``report.replication``)."""
    lines = [
        "## Replication",
        "",
        f"Judged on {len(replication['seeds'])} master seeds: "
        f"{escape(agreement_text(replication))}.",
        "",
        "| master seed | verdict |",
        "|---|---|",
    ]
    lines += [f"| {seed} | {badge(verdict)} |" for seed, verdict in seed_verdicts(replication)]
    return [*lines, ""]


def seeds_cell(replication: dict | None) -> str:
    """The summary's ``seeds`` cell: the agreement and each seed's letter (``4/5: R R I R R``),
    ``–`` for an entry judged on one seed."""
    if not replication:
        return "–"
    letters = " ".join(SEED_LETTERS.get(v, "·") for _, v in seed_verdicts(replication))
    return f"{replication['agreement']}: {escape(letters, True)}"


def claim_page(claim: dict, figures: list[str], links: list[str]) -> str:
    """The Markdown of one claim's page in ``claims/``; ``figures`` are paths relative to that
    folder, ``links`` the Markdown links shown at the top (back to the summary, neighbours)."""
    verdict = claim["verdict"]
    reason = escape(claim.get("reason", "")).replace("\n", "\n    ")
    lines = [
        f"# {escape(claim['claim'])} — {escape(claim['title'])}",
        "",
        " · ".join(links),
        "",
        f"**The paper:** *{escape(claim['paper'])}*",
        "",
        f"**Kind.** {escape(KIND_TEXT[claim.get('kind', 'claim')])}.",
        "",
        f'!!! {ADMONITION.get(verdict, "note")} "{verdict}"',
        f"    {reason}",
        "",
        f"**Run.** {escape(run_line(claim))}",
        "",
    ]
    if claim.get("replication"):
        lines += replication_lines(claim["replication"])
    if claim.get("criterion"):
        lines += ["## Criterion", "", "Fixed before the numbers were seen.", ""]
        lines += [escape(claim["criterion"]), ""]
    if claim.get("calibration"):
        lines += ["## Error rates of the criterion", "", *calibration_lines(claim["calibration"])]
    if claim.get("measured"):
        lines += ["## Measured", ""]
        lines += [f"- {escape_item(part)}" for part in split_measured(claim["measured"])]
        lines.append("")
    if figures:
        lines += ["## Figures", "", "Click a figure to open it full size.", ""]
        alt = f"{escape(claim['claim'])}: {escape(claim['title'])}"
        for figure in figures:
            lines += [f"[![{alt}]({figure})]({figure})", ""]
    estimates = claim.get("estimates") or []
    if estimates:
        lines += ["## Estimates", "", "| estimate | value [95% interval] |", "|---|---|"]
        for e in estimates:
            value = f"{number(e.get('value'))} [{number(e.get('low'))}, {number(e.get('high'))}]"
            lines.append(f"| {escape(e['name'], True)} | {value} |")
        lines.append("")
    lines += ["## Rerun", "", f"`{claim['command']}`", ""]
    return "\n".join(lines).rstrip() + "\n"


def duration(seconds: float) -> str:
    """``3 h 05 min``, ``12 min 40 s`` or ``9.5 s``."""
    minutes, rest = divmod(round(seconds), 60)
    if minutes >= 60:
        return f"{minutes // 60} h {minutes % 60:02d} min"
    return f"{minutes} min {rest:02d} s" if minutes else f"{seconds:.1f} s"


def judged_keys(claims: list[dict]) -> set[str] | None:
    """The job keys behind ``claims``: each registered experiment's jobs at the claim's preset,
    on its master seed and its replication's seeds; ``None`` when no claim names a registered
    experiment (e.g. a report of an experiment defined in a notebook)."""
    load_all()
    keys: set[str] = set()
    for claim in claims:
        if claim.get("name") not in REGISTRY or "preset" not in claim:
            continue
        seeds = {claim.get("seed"), *claim.get("replication", {}).get("seeds", [])}
        for seed in seeds:
            for jobs in planned_jobs([claim["name"]], claim["preset"], seed).values():
                keys.update(job.key for job in jobs)
    return keys or None


def run_cost(
    store: Path, gap: float = 600.0, named: bool = False, keys: set[str] | None = None
) -> str:
    """One sentence on the run in ``store`` (``named``: the store's file named in it): its
    finished jobs (with ``keys``, those of them only, :func:`judged_keys`; the rest, e.g. the
    jobs of an experiment's older version kept for the record, counted apart), their CPU time
    (the jobs' own seconds, summed) and the wall time during which at least one of them ran,
    in how many stretches (a pause of more than ``gap`` seconds between jobs starts another)."""
    if not store.is_file():
        raise ValueError(f"store {str(store)!r} does not exist")
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
        hashes = "config_hash" if keys is not None else "NULL"
        rows = db.execute(
            f"SELECT started, finished, seconds, {hashes} FROM jobs WHERE status = 'done' "
            "ORDER BY started"
        ).fetchall()
    jobs = [row[:3] for row in rows if keys is None or row[3] in keys]
    others = len(rows) - len(jobs)
    if not jobs:
        raise ValueError(f"store {str(store)!r} holds no finished job of this report")
    wall, stretches = busy_wall([(started, finished) for started, finished, _ in jobs], gap)
    cpu = sum(seconds for *_, seconds in jobs)
    where = "in one stretch" if stretches == 1 else f"in {stretches} stretches"
    run = f"The run in {store.name}" if named else "The run"
    return (
        f"{run}: {len(jobs)} jobs, {duration(cpu)} of CPU time (the jobs' own times summed) "
        f"and {duration(wall)} of wall time while at least one job ran, {where}."
    ) + (
        f" The store holds {others} more, of other versions or configs, not counted."
        if others
        else ""
    )


Beside = tuple[str, dict[str, str]]
"""Another report's verdicts for a column of the summary: its heading and the verdict by claim."""


def beside_verdicts(folder: Path) -> Beside:
    """The heading (``standard, 5 seeds``; ``full, seed 2`` for a report of one master seed)
    and the published verdict of each claim of the report in ``folder``, or of a summary page
    this script wrote (``docs/claims.md``)."""
    if folder.suffix == ".md" and folder.is_file():
        return page_verdicts(folder.read_text())
    preset, claims = load(folder)
    seeds = max((len(c["replication"]["seeds"]) for c in claims if c.get("replication")), default=1)
    heading = preset + (f", {seeds} seeds" if seeds > 1 else "")
    if seeds == 1 and len(one := {c.get("seed") for c in claims} - {None}) == 1:
        heading += f", seed {min(one)}"
    return heading, {c["claim"]: c["verdict"] for c in claims}


def page_verdicts(summary: str) -> Beside:
    """``beside_verdicts`` of a summary page: its preset, its seeds column's count, and each
    row's claim and first verdict."""
    preset = re.search(r"as the `([^`]+)` preset", summary)
    rows = re.findall(
        r'^\| \[([^\]]+)\]\([^)]*\) \|.*?<span class="verdict [^"]*">([^<]+)<', summary, re.M
    )
    if preset is None or not rows:
        raise ValueError("the page beside is not a claims summary of build_claims_page.py")
    seeds = re.search(r"\| (\d+)/(\d+): ", summary)
    heading = preset[1] + (f", {seeds[2]} seeds" if seeds and int(seeds[2]) > 1 else "")
    return heading, {claim.replace("\\", ""): html.unescape(verdict) for claim, verdict in rows}


def summary_page(
    presets: list[str],
    rows: list[tuple[dict, str]],
    assets: str,
    cost: str | None = None,
    beside: Sequence[Beside] = (),
    note: str | None = None,
) -> str:
    """The summary: one table row per claim, ``rows`` of (claim, its page's file name), what the
    run cost (``run_cost``) when known, ``note`` under it, and ``beside`` other reports'
    verdicts, a column each."""
    lines = [
        "# Claims",
        "",
        f"The claims of both papers as the `{'`, `'.join(presets)}` preset of "
        "`attnsep reproduce` judged them. Each entry is of one kind ([SPEC Part F](SPEC.md)):"
        " a *claim* is a statement of a paper, judged *reproduced*, *not reproduced* or "
        "*inconclusive* by a criterion written before the numbers were seen ([SPEC Part "
        "D](SPEC.md)), beside it the criterion's power and false-pass rate measured by "
        "simulation from the paper's law and from its rival, pre-registered: fitted to an "
        "exploratory run before any confirmatory one ([SPEC Part E](SPEC.md)). Judged on "
        "several master seeds, a claim publishes the verdict reached on 4 of 5 of them, else "
        "*unstable*; a *check* confirms a theorem numerically (*confirmed*, or *check "
        "failed*: a bug in attnsep, not a verdict on the paper); a *finding* goes beyond the "
        "papers or measures a remark made in passing, and judges nothing. Intervals are 95%; "
        "an *incomplete* entry has jobs left to run. Each entry links to its page: the "
        "reason, the criterion and its error rates, what was measured, the figures and the "
        "estimates. These pages are generated by `python docs/build_claims_page.py "
        "REPORT_FOLDER ...`.",
        "",
        *([cost, ""] if cost else []),
        *([note, ""] if note else []),
        *([unrated, ""] if (unrated := unrated_line([claim for claim, _ in rows])) else []),
    ]
    replicated = any(claim.get("replication") for claim, _ in rows)
    columns = ["claim", "kind", "title", "verdict", *(["seeds"] if replicated else [])]
    columns += [heading for heading, _ in beside]
    columns.append("power / false pass")
    lines += ["| " + " | ".join(columns) + " |", "|---" * len(columns) + "|"]
    for claim, name in rows:
        cal = claim.get("calibration")
        rates = f"{cal['power']:.2f} / {cal['false_pass']:.2f}" if cal else "–"
        cell = f" {seeds_cell(claim.get('replication'))} |" if replicated else ""
        for _, verdicts in beside:
            other = verdicts.get(claim["claim"])
            cell += f" {badge(other) if other else '–'} |"
        lines.append(
            f"| [{escape(claim['claim'], True)}]({assets}/{name}) | {claim.get('kind', 'claim')} | "
            f"{escape(claim['title'], True)} | {badge(claim['verdict'])} |{cell} {rates} |"
        )
    if replicated:
        lines += ["", seeds_legend([claim for claim, _ in rows])]
    if beside:
        lines += [
            "",
            f"{', '.join(f'*{heading}*' for heading, _ in beside)}: the verdict of the same "
            f"entry in {'that report' if len(beside) == 1 else 'each of those reports'} (– "
            "where it has none); the entry's page here is of this run only.",
        ]
    return "\n".join(lines) + "\n"


def unrated_line(claims: list[dict]) -> str:
    """A sentence on the claims judged without pre-registered error rates (``–`` in the
    table; each page says why), or ``""`` when every claim has them."""
    judged = [c for c in claims if c.get("kind", "claim") == "claim"]
    unrated = sum(1 for c in judged if not c.get("calibration"))
    if not unrated:
        return ""
    count = f"{unrated} of the {len(judged)} claims have no"
    if unrated == len(judged):
        count = f"None of the {len(judged)} claims has"
    return (
        f"{count} error rates pre-registered at these sizes (*–*): they are pre-registered by "
        "simulation at the sizes of an exploratory run (`bench/preregister.py`), so such a "
        "verdict applies the same criterion with its power and false-pass rate unmeasured; "
        "each claim's page says why."
    )


def seeds_legend(claims: list[dict]) -> str:
    """What the ``seeds`` column says: the agreement, each seed's letter (those shown) and when
    a claim is *unstable* (SPEC Part E)."""
    shown = {v for c in claims if c.get("replication") for v in c["replication"]["verdicts"]}
    letters = ", ".join(
        f"{escape(letter)} {verdict}"
        for verdict, letter in SEED_LETTERS.items()
        if verdict in shown
    )
    return (
        "*seeds*: how many of the master seeds agree (on the published verdict, or for an "
        f"*unstable* claim on its most common one), then the verdict of each seed in order "
        f"({letters}). A claim's verdict is published only when enough seeds reach it; else "
        "the claim is *unstable*, and its page names what varies across the seeds."
    )


def merged(reports: list[tuple[Path, str, list[dict]]]) -> list[tuple[Path, dict]]:
    """The claims of ``reports`` (folder, preset, claims) in their order, each with its folder;
    a claim a later folder holds too is the later one's, in the earlier one's place, and one
    only a later folder holds follows the claim before it there (B5.1b after B5.1)."""
    order: list[str] = []
    last: dict[str, tuple[Path, dict]] = {}
    for folder, _, claims in reports:
        before = None
        for claim in claims:
            claim_id = claim["claim"]
            if claim_id not in last:
                at = order.index(before) + 1 if before is not None else len(order)
                order.insert(at, claim_id)
            last[claim_id] = (folder, claim)
            before = claim_id
    return [last[claim_id] for claim_id in order]


def build(
    folders: list[Path],
    page: Path,
    assets: Path,
    stores: list[Path] | None = None,
    beside: list[Path] | None = None,
    note: str | None = None,
) -> int:
    """Write the summary ``page`` and, under ``assets``, one page per claim (:func:`merged`) and
    the figures; the number of claims. ``stores``: the runs' results databases, for their cost;
    ``beside``: other reports (or summary pages), whose verdicts the summary shows, a column each;
    ``note``: a paragraph under the cost (e.g. what of the run is still to come)."""
    reports = [(folder, *load(folder)) for folder in folders]
    named = len(stores or []) > 1
    keys = judged_keys([claim for _, _, claims in reports for claim in claims])
    cost = " ".join(run_cost(s, named=named, keys=keys) for s in stores) if stores else None
    other = [beside_verdicts(folder) for folder in beside or []]
    assets.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=assets.parent, prefix=".claims-"))
    staging.chmod(0o755)  # mkdtemp makes it private; it becomes the published folder
    try:
        taken: set[str] = {SUMMARY}
        entries: list[tuple[dict, str, list[str]]] = []  # claim, page name, figures
        for folder, claim in merged(reports):
            copied = []
            for name in claim.get("figures", []):
                source = folder / name
                if not source.is_file():
                    raise ValueError(f"figure {str(source)!r} named in claims.json is missing")
                target = staging / claim["name"] / Path(name).name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, target)
                copied.append(f"{claim['name']}/{target.name}")
            entries.append((claim, page_name(claim["claim"], taken), copied))
        to_summary = Path(os.path.relpath(page, assets)).as_posix()
        for i, (claim, name, figures) in enumerate(entries):
            links = [f"[← all claims]({to_summary})"]
            if i > 0:
                links.append(f"[← {escape(entries[i - 1][0]['claim'])}]({entries[i - 1][1]})")
            if i + 1 < len(entries):
                links.append(f"[{escape(entries[i + 1][0]['claim'])} →]({entries[i + 1][1]})")
            (staging / name).write_text(claim_page(claim, figures, links))
        presets = sorted({preset for _, preset, _ in reports})
        rows = [(claim, name) for claim, name, _ in entries]
        to_assets = Path(os.path.relpath(assets, page.parent)).as_posix()
        (staging / SUMMARY).write_text(summary_page(presets, rows, to_assets, cost, other, note))
        shutil.rmtree(assets, ignore_errors=True)
        (staging / SUMMARY).replace(page)
        staging.rename(assets)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return len(entries)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", type=Path, help="report folders (claims.json)")
    parser.add_argument("--page", type=Path, default=DOCS / "claims.md")
    parser.add_argument("--assets", type=Path, default=DOCS / "claims")
    parser.add_argument(
        "--store", type=Path, action="append", help="a run's results database (its cost)"
    )
    parser.add_argument(
        "--beside",
        type=Path,
        action="append",
        help="another report folder or summary page: its verdicts beside (repeatable)",
    )
    parser.add_argument("--note", help="a paragraph under the run's cost")
    args = parser.parse_args(argv)
    try:
        count = build(args.reports, args.page, args.assets, args.store, args.beside, args.note)
    except (ValueError, KeyError, json.JSONDecodeError, sqlite3.Error) as err:
        sys.stderr.write(f"error: {err}\n")
        return 2
    print(f"{count} claims -> {args.page} (one page each and the figures in {args.assets})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
