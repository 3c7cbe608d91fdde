"""Write the documentation's Claims page from the reports of ``attnsep reproduce``.

    python docs/build_claims_page.py results/report [more report folders ...]

Each report folder holds ``claims.json`` and the figures it names (``figures/*.png``). The
page ``docs/claims.md`` lists every claim with its verdict, the reason, what was measured,
the criterion, the estimates with their 95% intervals and the figures, which are copied to
``docs/claims/<experiment>/``. Claims of several folders (e.g. the XOR and the
token-selection halves of a run) are listed in the order given; both outputs are replaced
whole, so nothing of an older page is left behind.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ADMONITION = {
    "reproduced": "success",
    "not reproduced": "failure",
    "inconclusive": "warning",
    "incomplete": "note",
    "finding": "info",
}
SPECIAL = "\\`*_{}[]>#"


def escape(text: str, cell: bool = False) -> str:
    """``text`` shown as written: Markdown's special characters escaped (``|`` too in a table
    ``cell``), ``<`` as an entity."""
    special = SPECIAL + ("|" if cell else "")
    out = "".join("\\" + c if c in special else c for c in str(text))
    return out.replace("<", "&lt;")


def number(value: float | None) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float) and math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return f"{value:.4g}"


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


def rates_line(cal: dict) -> str:
    """Power, false pass and false fail with their intervals, and the laws simulated."""

    def one(name: str) -> str:
        low, high = cal["intervals"][name]
        return f"{name.replace('_', ' ')} {cal[name]:.2f} [{low:.2f}, {high:.2f}]"

    text = ", ".join(one(k) for k in ("power", "false_pass", "false_fail"))
    text += f" ({cal['simulations']} simulated runs per law at these sizes)"
    if not cal["meets"]:
        text += "; below the goals (power ≥ 0.8, false pass ≤ 0.05)"
        if cal.get("would_meet"):
            text += f"; met in simulation at {cal['would_meet']}"
    return text + f". Paper's law: {cal['paper_law']}. Rival: {cal['rival_law']}."


def section(claim: dict, figures: list[str]) -> list[str]:
    """The Markdown of one claim; ``figures`` are paths relative to ``docs/``."""
    verdict = claim["verdict"]
    lines = [
        f"## {escape(claim['claim'])} — {escape(claim['title'])}",
        "",
        f"*{escape(claim['paper'])}*",
        "",
        f'!!! {ADMONITION.get(verdict, "note")} "{verdict}"',
        f"    {escape(claim.get('reason', ''))}",
        "",
    ]
    lines += [f"**Run.** {escape(run_line(claim))}", ""]
    if claim.get("calibration"):
        lines += [
            f"**Error rates of the criterion.** {escape(rates_line(claim['calibration']))}",
            "",
        ]
    if claim.get("measured"):
        lines += [f"**Measured.** {escape(claim['measured'])}", ""]
    if claim.get("criterion"):
        lines += [f"**Criterion** (fixed before the numbers). {escape(claim['criterion'])}", ""]
    estimates = claim.get("estimates") or []
    if estimates:
        lines += ["| estimate | value | 95% interval |", "|---|---|---|"]
        for e in estimates:
            interval = f"[{number(e.get('low'))}, {number(e.get('high'))}]"
            lines.append(f"| {escape(e['name'], True)} | {number(e.get('value'))} | {interval} |")
        lines.append("")
    for figure in figures:
        lines += [f"![{escape(claim['claim'])}: {escape(claim['title'])}]({figure})", ""]
    lines += [f"Rerun: `{claim['command']}`", ""]
    return lines


def build(folders: list[Path], page: Path, assets: Path) -> int:
    """Write ``page`` and the figures under ``assets``; the number of claims."""
    reports = [(folder, *load(folder)) for folder in folders]
    staging = Path(tempfile.mkdtemp(dir=assets.parent, prefix=".claims-"))
    staging.chmod(0o755)  # mkdtemp makes it private; it becomes the published folder
    try:
        presets = sorted({preset for _, preset, _ in reports})
        lines = [
            "# Claims",
            "",
            f"The claims of both papers as the `{'`, `'.join(presets)}` preset of "
            "`attnsep reproduce` judged them. Each verdict is *reproduced*, *not reproduced* "
            "or *inconclusive* by a criterion written before the numbers were seen "
            "([SPEC Part D](SPEC.md)); beside each, the criterion's power and false-pass rate "
            "measured by simulation from the paper's law and from its rival ([SPEC Part E]"
            "(SPEC.md)); intervals are 95%. This page is generated by "
            "`python docs/build_claims_page.py REPORT_FOLDER ...`.",
            "",
            "| claim | title | verdict | power / false pass |",
            "|---|---|---|---|",
        ]
        body: list[str] = []
        count = 0
        for folder, _, claims in reports:
            for claim in claims:
                count += 1
                cal = claim.get("calibration")
                rates = f"{cal['power']:.2f} / {cal['false_pass']:.2f}" if cal else "–"
                lines.append(
                    f"| {escape(claim['claim'], True)} | {escape(claim['title'], True)} | "
                    f"{claim['verdict']} | {rates} |"
                )
                copied = []
                for name in claim.get("figures", []):
                    source = folder / name
                    if not source.is_file():
                        raise ValueError(f"figure {str(source)!r} named in claims.json is missing")
                    target = staging / claim["name"] / Path(name).name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(source, target)
                    copied.append(f"{assets.name}/{claim['name']}/{target.name}")
                body += section(claim, copied)
        text = "\n".join([*lines, "", *body]).rstrip() + "\n"
        (staging / "page.md").write_text(text)
        shutil.rmtree(assets, ignore_errors=True)
        (staging / "page.md").replace(page)
        staging.rename(assets)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", type=Path, help="report folders (claims.json)")
    parser.add_argument("--page", type=Path, default=DOCS / "claims.md")
    parser.add_argument("--assets", type=Path, default=DOCS / "claims")
    args = parser.parse_args(argv)
    try:
        count = build(args.reports, args.page, args.assets)
    except (ValueError, KeyError, json.JSONDecodeError) as err:
        sys.stderr.write(f"error: {err}\n")
        return 2
    print(f"{count} claims -> {args.page} (figures in {args.assets})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
