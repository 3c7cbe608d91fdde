"""Write ``index.html`` and ``claims.json`` for a list of claims (atomic writes)."""

from __future__ import annotations

import json
import time
from html import escape
from pathlib import Path
from typing import Any

from ..io import atomic_write

STYLE = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; margin: 0;
       color: #1d2330; background: #f6f7f9; line-height: 1.5; }
main { max-width: 980px; margin: 0 auto; padding: 24px 32px 64px; background: #fff;
       box-shadow: 0 0 12px rgba(0,0,0,.06); }
h1 { font-size: 28px; margin-bottom: 4px; } h2 { margin-top: 40px; border-top: 1px solid #e3e6eb;
     padding-top: 24px; font-size: 21px; }
.sub { color: #5b6475; margin-top: 0; }
table.summary { border-collapse: collapse; width: 100%; margin: 16px 0; font-size: 15px; }
table.summary th, table.summary td { text-align: left; padding: 6px 10px;
  border-bottom: 1px solid #e3e6eb; }
.badge { display: inline-block; padding: 1px 9px; border-radius: 10px; font-size: 13px;
  font-weight: 600; }
.ok { background: #dff3e4; color: #17692e; } .bad { background: #fbe2e2; color: #9b1c1c; }
.open { background: #fff1cc; color: #7a5a00; } .none { background: #eceef1; color: #4a5263; }
table.estimates { border-collapse: collapse; font-size: 14px; }
table.estimates td, table.estimates th { padding: 2px 10px; border-bottom: 1px solid #eef0f3;
  text-align: right; } table.estimates td:first-child { text-align: left; }
dl { display: grid; grid-template-columns: 130px 1fr; gap: 6px 14px; }
dt { color: #5b6475; font-weight: 600; } dd { margin: 0; }
code { background: #f0f2f5; padding: 1px 5px; border-radius: 4px; font-size: 13.5px; }
img { max-width: 100%; border: 1px solid #e3e6eb; margin-top: 12px; }
"""


BADGES = {"reproduced": "ok", "not reproduced": "bad", "inconclusive": "open", "incomplete": "none"}


def badge(verdict: str) -> str:
    """The verdict in its colour: green, red, amber (inconclusive), grey (incomplete)."""
    return f'<span class="badge {BADGES.get(verdict, "ok")}">{escape(verdict)}</span>'


def number(x: float | None) -> str:
    return "∞" if x is None else f"{x:.4g}"


def estimates_table(estimates: list[dict[str, Any]]) -> str:
    """Every estimate with its 95% interval (a missing upper bound is open: ∞)."""
    if not estimates:
        return ""
    rows = "".join(
        f"<tr><td>{escape(e['name'])}</td><td>{number(e['value'])}</td>"
        f"<td>[{'n/a' if e['low'] is None else number(e['low'])}, {number(e['high'])}]</td></tr>"
        for e in estimates
    )
    return (
        "<dt>Estimates</dt><dd><table class='estimates'><tr><th>quantity</th><th>value</th>"
        f"<th>95% interval</th></tr>{rows}</table></dd>"
    )


def render(claims: list[dict[str, Any]], preset: str) -> str:
    rows = "".join(
        f'<tr><td><a href="#{escape(c["name"])}">{escape(c["claim"])}</a></td>'
        f"<td>{escape(c['title'])}</td>"
        f"<td>{badge(c['verdict'])}</td><td>{escape(c.get('reason', ''))}</td></tr>"
        for c in claims
    )
    sections = []
    for c in claims:
        figures = "".join(
            f'<img src="{escape(f)}" alt="{escape(c["title"])}">' for f in c["figures"]
        )
        criterion = (
            f"<dt>Criterion</dt><dd>{escape(c['criterion'])}</dd>" if c.get("criterion") else ""
        )
        sections.append(
            f'<section id="{escape(c["name"])}"><h2>{escape(c["claim"])} — {escape(c["title"])} '
            f"{badge(c['verdict'])}</h2><dl>"
            f"<dt>Paper</dt><dd>{escape(c['paper'])}</dd>"
            f"<dt>Verdict</dt><dd>{escape(c.get('reason', ''))}</dd>"
            f"<dt>Measured</dt><dd>{escape(c['measured'])}</dd>{criterion}"
            f"{estimates_table(c.get('estimates', []))}"
            f"<dt>Rerun</dt><dd><code>{escape(c['command'])}</code></dd>"
            f"<dt>Compute</dt><dd>{c['jobs_done']} of {c['jobs']} jobs, {c['seconds']:.1f} s</dd>"
            f"</dl>{figures}</section>"
        )
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>attnsep report ({escape(preset)})</title><style>{STYLE}</style></head><body><main>"
        "<h1>attnsep: the separations, measured</h1>"
        f"<p class='sub'>Preset <b>{escape(preset)}</b> · generated {stamp} · "
        "rerun everything with <code>attnsep reproduce</code></p>"
        "<table class='summary'><tr><th>claim</th><th>statement</th><th>verdict</th>"
        "<th>why</th></tr>"
        f"{rows}</table>" + "".join(sections) + "</main></body></html>"
    )


def write_report(claims: list[dict[str, Any]], preset: str, out: Path) -> tuple[Path, Path]:
    """``out/index.html`` and ``out/claims.json``."""
    out.mkdir(parents=True, exist_ok=True)
    index, table = out / "index.html", out / "claims.json"
    stable = [{k: v for k, v in c.items() if k != "seconds"} for c in claims]  # no timings
    text = json.dumps({"preset": preset, "claims": stable}, indent=2, allow_nan=False) + "\n"
    atomic_write(table, lambda handle: handle.write(text.encode()))
    page = render(claims, preset)
    atomic_write(index, lambda handle: handle.write(page.encode()))
    return index, table
