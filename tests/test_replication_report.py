"""A claim judged on several master seeds in the outputs (SPEC Part E): the HTML report, the
terminal table and the documentation's claims pages show each seed's verdict, the agreement and
the ``unstable`` verdict in its own colour, and where pre-registered error rates come from;
entries judged on one seed show as before."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

from attnsep.metrics import stats
from attnsep.report.html import BADGES, render
from attnsep.report.replication import combine
from attnsep.report.text_tables import VERDICT_COLORS, claims

ROOT = Path(__file__).resolve().parents[1]
SEEDS = [4, 5, 6, 7, 8]
SOURCE = {"preset": "standard", "seed": 3, "run": "exploratory", "criterion_version": 2}
SOURCE_TEXT = (
    "error rates pre-registered on the standard run of master seed 3 (exploratory), "
    "criterion version 2"
)
PLAIN_COLUMNS = ("claim", "verdict", "power/fp", "title · reason")


def docs_builder():
    """``docs/build_claims_page.py`` imported as a module."""
    path = ROOT / "docs" / "build_claims_page.py"
    spec = importlib.util.spec_from_file_location("claims_pages_of_replication", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def calibration(source: dict | None) -> dict:
    rates = {
        "power": 0.91,
        "false_pass": 0.02,
        "false_fail": 0.03,
        "intervals": {"power": [0.85, 0.95], "false_pass": [0.0, 0.05], "false_fail": [0, 0.07]},
        "simulations": 200,
        "meets": True,
        "paper_law": "m* polylog in d",
        "rival_law": "m* a power of d",
        "noise": "bootstrap of the replicas",
    }
    return {**rates, "source": source} if source else rates


def entry(ident: str, verdict: str, value: float = 12.0, source: dict | None = SOURCE) -> dict:
    """One seed's entry for claim ``ident``, as ``build_claims`` makes it."""
    estimates = [stats.estimate("m*(d=256)", value, value - 1, value + 1)]
    return {
        "claim": ident,
        "name": f"exp-{ident.lower()}",
        "title": f"claim {ident}",
        "paper": "the paper says so",
        "command": f"attnsep reproduce --standard --only exp-{ident.lower()}",
        "jobs": 4,
        "jobs_done": 4,
        "seconds": 2.0,
        "figures": [],
        "run": "confirmatory",
        "seed": 4,
        "criterion_version": 2,
        "calibration": calibration(source),
        **stats.claim(verdict, f"{verdict} here", "m*=12", "the rule", estimates),
    }


def replicated() -> list[dict]:
    """A1 reproduced on 4 of 5 seeds (published), A2 split 3 to 2 (unstable)."""
    r, i, n = stats.REPRODUCED, stats.INCONCLUSIVE, stats.NOT_REPRODUCED
    a1 = [r, i, r, r, r]
    a2 = [r, n, r, n, r]
    values = [12.0, 40.0, 13.0, 38.0, 12.0]
    runs = [
        (seed, [entry("A1", a1[k]), entry("A2", a2[k], values[k])]) for k, seed in enumerate(SEEDS)
    ]
    return combine(runs)


def plain() -> list[dict]:
    """Entries of a run on one seed, without a pre-registered source."""
    return [
        entry("A1", stats.REPRODUCED, source=None),
        entry("A3", stats.INCONCLUSIVE, source=None),
    ]


def test_the_published_entries_are_what_the_outputs_show():
    reproduced, unstable = replicated()
    assert reproduced["verdict"] == stats.REPRODUCED
    assert reproduced["replication"]["agreement"] == "4/5"
    assert unstable["verdict"] == stats.UNSTABLE and unstable["kind"] == "claim"
    assert unstable["replication"]["agreement"] == "3/5"
    assert stats.kind_of(stats.UNSTABLE) == "claim"
    assert stats.UNSTABLE not in stats.PASSES + stats.FAILS


def test_html_shows_each_seed_the_agreement_and_unstable_in_its_own_colour():
    page = render(replicated(), "standard")
    assert "<th>verdict</th><th>seeds</th><th>power / false pass</th>" in page
    assert 'title="seed 4: reproduced; seed 5: inconclusive; seed 6: reproduced;' in page
    assert ">4/5</td>" in page and ">3/5</td>" in page
    assert "4/5 seeds agree (a verdict needs 4):" in page
    assert f'seed 5 <span class="badge {BADGES[stats.INCONCLUSIVE]}">inconclusive</span>' in page
    assert f'seed 7 <span class="badge {BADGES[stats.NOT_REPRODUCED]}">not reproduced</span>' in (
        page
    )
    shaky = BADGES[stats.UNSTABLE]
    others = {BADGES[v] for v in (*stats.OUTCOMES, *stats.CHECK_OUTCOMES, stats.FINDING)}
    assert shaky not in others and f".{shaky} {{" in page  # a colour of its own, styled
    assert f'<span class="badge {shaky}">unstable</span>' in page
    assert "unstable: reproduced on seeds 4, 6, 8; not reproduced on seeds 5, 7" in page
    assert "varies most: m*(d=256)" in page
    assert f"Source: {SOURCE_TEXT}." in page


def test_html_without_replication_shows_no_seeds_and_no_source():
    page = render(plain(), "standard")
    assert "<th>verdict</th><th>power / false pass</th>" in page
    assert "seeds agree" not in page and "<dt>Replication</dt>" not in page
    assert "Source:" not in page and "pre-registered" not in page
    mixed = render([*replicated(), plain()[1]], "standard")
    assert "<td>–</td>" in mixed  # the entry judged on one seed, in the seeds column


def test_terminal_table_has_the_agreement_and_fits_80_columns():
    from rich.console import Console

    (table,) = claims({"claims": replicated()})
    assert table.columns == ("claim", "verdict", "seeds", *PLAIN_COLUMNS[2:])
    assert [row[2] for row in table.rows] == ["4/5", "3/5"]
    assert [row[1] for row in table.rows] == [stats.REPRODUCED, stats.UNSTABLE]
    assert table.styles[1][1] == VERDICT_COLORS[stats.UNSTABLE]
    assert table.details[1] == "reproduced 3, not reproduced 2 of 5 seeds"
    others = {VERDICT_COLORS[v] for v in (*stats.OUTCOMES, *stats.CHECK_OUTCOMES, stats.FINDING)}
    assert VERDICT_COLORS[stats.UNSTABLE] not in others

    mixed = [*replicated(), {**plain()[1], "verdict": stats.NOT_REPRODUCED}]
    (table,) = claims({"claims": mixed})
    assert table.rows[2][2] == "-"
    fitted = table.fit(80)
    assert fitted.columns == table.columns  # nothing left out at 80 columns
    out = Console(width=80, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    out.print(fitted.rich())
    text = out.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "4/5" in text and "unstable" in text


def test_terminal_table_without_replication_has_no_seeds_column():
    (table,) = claims({"claims": plain()})
    assert table.columns == PLAIN_COLUMNS
    assert table.rows[0] == ("A1", "reproduced", "0.91/0.02", "claim A1")
    assert table.details[0] == "reproduced here"


def write_report(folder: Path, entries: list[dict]) -> Path:
    folder.mkdir(parents=True)
    text = json.dumps({"preset": "standard", "claims": entries}, allow_nan=False)
    (folder / "claims.json").write_text(text)
    return folder


def build_docs(report: Path, docs: Path) -> tuple[str, Path]:
    args = [str(report), "--page", str(docs / "claims.md"), "--assets", str(docs / "claims")]
    assert docs_builder().main(args) == 0
    return (docs / "claims.md").read_text(), docs / "claims"


def test_claims_pages_list_each_seed_and_the_source(tmp_path: Path):
    entries = [*replicated(), plain()[1]]
    summary, pages = build_docs(write_report(tmp_path / "report", entries), tmp_path / "docs")
    assert "| claim | kind | title | verdict | seeds | power / false pass |" in summary
    assert "| 4/5: R I R R R | 0.91 / 0.02 |" in summary
    assert "| 3/5: R N R N R |" in summary
    assert '<span class="verdict unstable">unstable</span>' in summary
    assert "(R reproduced, N not reproduced, I inconclusive)" in summary
    assert "| – | 0.91 / 0.02 |" in summary  # A3, judged on one seed

    page = (pages / "A1.md").read_text()
    replication = page.split("## Replication\n\n")[1].split("\n\n## ")[0]
    assert replication.splitlines()[:3] == [
        "Judged on 5 master seeds: 4/5 seeds agree (a verdict needs 4).",
        "",
        "| master seed | verdict |",
    ]
    assert '| 5 | <span class="verdict inconclusive">inconclusive</span> |' in replication
    assert replication.count('<span class="verdict reproduced">') == 4
    assert f"- **Source:** {SOURCE_TEXT}" in page

    unstable = (pages / "A2.md").read_text()
    assert '!!! question "unstable"' in unstable and "3/5 seeds agree" in unstable
    assert '| 7 | <span class="verdict not-reproduced">not reproduced</span> |' in unstable


def test_claims_pages_without_replication_are_as_before(tmp_path: Path):
    summary, pages = build_docs(write_report(tmp_path / "report", plain()), tmp_path / "docs")
    assert "| claim | kind | title | verdict | power / false pass |\n|---|---|---|---|---|\n" in (
        summary
    )
    assert "| seeds |" not in summary and "4/5" not in summary
    page = (pages / "A1.md").read_text()
    assert "## Replication" not in page and "**Source:**" not in page
    assert "## Error rates of the criterion" in page
