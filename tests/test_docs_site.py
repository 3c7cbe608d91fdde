"""The documentation site: the claims pages ``docs/build_claims_page.py`` writes from report
folders, and a site that works when opened as files (``docs/check_site_links.py``)."""

from __future__ import annotations

import importlib.util
import json
import re
import sqlite3
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def script(name: str):
    """A script of ``docs/`` imported as a module."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


claims_page = script("build_claims_page")
site_links = script("check_site_links")

CALIBRATION = {
    "power": 0.9,
    "false_pass": 0.01,
    "false_fail": 0.02,
    "intervals": {"power": [0.85, 0.94], "false_pass": [0.0, 0.03], "false_fail": [0.0, 0.05]},
    "simulations": 200,
    "meets": False,
    "would_meet": "2x the seeds",
    "paper_law": "rate flat in d",
    "rival_law": "rate falling with ln d",
}


def claim(**fields) -> dict:
    base = {
        "claim": "X1",
        "name": "demo",
        "title": "A *demo* | claim",
        "paper": "The paper says so.",
        "command": "attnsep reproduce --only demo",
        "verdict": "reproduced",
        "reason": "the bound 0.9 is >= 0.8",
        "measured": "d=8: 0.9 [0.8, 0.95]; d=16: 1 (m; n) | fixed: 0.5",
        "criterion": "reproduced when the lower bound is >= 0.8",
        "estimates": [{"name": "rate, d=8", "value": 0.9, "low": 0.8, "high": 0.95}],
        "figures": ["figures/demo.png"],
        "calibration": CALIBRATION,
        "runs": [{"seed": 1, "run": "confirmatory", "verdict": "inconclusive"}],
    }
    return {**base, **fields}


@pytest.fixture
def report(tmp_path: Path) -> Path:
    """A report folder with a claim, its companion (no figures, no calibration), a figure."""
    folder = tmp_path / "report"
    (folder / "figures").mkdir(parents=True)
    (folder / "figures" / "demo.png").write_bytes(b"\x89PNG demo")
    companion = claim(
        claim="X1b/2",
        name="demo-x1b",
        title="Companion",
        verdict="not reproduced",
        measured="4 of 4; done",
        figures=[],
        calibration=None,
        estimates=[],
    )
    data = {"preset": "standard", "claims": [claim(), companion]}
    (folder / "claims.json").write_text(json.dumps(data))
    return folder


def run(report: Path, docs: Path) -> int:
    """The builder's command line, writing into ``docs``."""
    args = [str(report), "--page", str(docs / "claims.md"), "--assets", str(docs / "claims")]
    return claims_page.main(args)


def build(report: Path, docs: Path) -> tuple[str, Path]:
    """The summary page and the folder of the claim pages."""
    assert run(report, docs) == 0
    return (docs / "claims.md").read_text(), docs / "claims"


def test_summary_links_one_page_per_claim(report: Path, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "claims").mkdir(parents=True)
    (docs / "claims" / "OLD.md").write_text("# a stale claim of an older run\n")
    summary, pages = build(report, docs)

    assert sorted(p.name for p in pages.glob("*.md")) == ["X1.md", "X1b-2.md"]
    assert not (pages / "OLD.md").exists()
    assert "[X1](claims/X1.md)" in summary and "[X1b/2](claims/X1b-2.md)" in summary
    assert '<span class="verdict reproduced">reproduced</span>' in summary
    assert '<span class="verdict not-reproduced">not reproduced</span>' in summary
    assert "A \\*demo\\* \\| claim" in summary  # escaped in its cell
    assert "| 0.90 / 0.01 |" in summary and "| – |" in summary
    assert "1 of the 2 claims have no error rates pre-registered at these sizes" in summary
    assert not list(docs.glob(".claims-*")) and not list(pages.glob(".*"))


def test_the_summary_says_when_no_claim_has_error_rates() -> None:
    """A run at sizes nothing was pre-registered for (the full preset) says so once, above the
    table; a finding or a check needs no error rates and is not counted."""
    rows = [(claim(calibration=None), "X1.md"), (claim(kind="finding", calibration=None), "F.md")]
    summary = claims_page.summary_page(["full"], rows, "claims-full")
    assert "None of the 1 claims has error rates pre-registered at these sizes" in summary
    assert claims_page.unrated_line([claim(), claim(kind="check", calibration=None)]) == ""


def test_the_summary_shows_another_reports_verdicts_beside(report: Path, tmp_path: Path) -> None:
    """``--beside``: a column headed by the other report's preset (and seeds), each claim's
    verdict there, – for a claim it does not hold."""
    other = tmp_path / "other"
    other.mkdir()
    replicated = claim(verdict="inconclusive", replication={"seeds": [4, 5, 6, 7, 8]})
    (other / "claims.json").write_text(json.dumps({"preset": "standard", "claims": [replicated]}))
    docs = tmp_path / "docs"
    args = ["--page", str(docs / "claims.md"), "--assets", str(docs / "claims")]
    assert claims_page.main([str(report), *args, "--beside", str(other)]) == 0
    summary = (docs / "claims.md").read_text()
    assert "| claim | kind | title | verdict | standard, 5 seeds | power / false pass |" in summary
    x1 = next(line for line in summary.splitlines() if line.startswith("| [X1]"))
    assert x1.endswith('<span class="verdict inconclusive">inconclusive</span> | 0.90 / 0.01 |')
    x1b = next(line for line in summary.splitlines() if line.startswith("| [X1b/2]"))
    assert x1b.endswith("| – | – |")
    assert claims_page.main([str(report), *args, "--beside", str(tmp_path / "none")]) == 2


def test_several_reports_beside_a_column_each(report: Path, tmp_path: Path) -> None:
    """``--beside`` repeated: one column per report in the order given; a report of one master
    seed is headed by it (``full, seed 2``), a replicated one by its count of seeds."""
    folders = []
    for name, preset, extra in [
        ("seed2", "full", {"seed": 2, "verdict": "not reproduced"}),
        ("five", "standard", {"seed": 4, "replication": {"seeds": [4, 5, 6, 7, 8]}}),
    ]:
        folder = tmp_path / name
        folder.mkdir()
        body = {"preset": preset, "claims": [claim(**extra)]}
        (folder / "claims.json").write_text(json.dumps(body))
        folders += ["--beside", str(folder)]
    docs = tmp_path / "docs"
    args = ["--page", str(docs / "full.md"), "--assets", str(docs / "full")]
    assert claims_page.main([str(report), *args, *folders]) == 0
    summary = (docs / "full.md").read_text()
    header = "| verdict | full, seed 2 | standard, 5 seeds | power / false pass |"
    assert header in summary
    x1 = next(line for line in summary.splitlines() if line.startswith("| [X1]"))
    verdicts = re.findall(r'<span class="verdict [^"]+">([^<]+)</span>', x1)
    assert verdicts == ["reproduced", "not reproduced", "reproduced"]  # this run's, then each
    assert "*full, seed 2*, *standard, 5 seeds*: the verdict of the same entry in each" in summary


def test_a_summary_page_serves_as_the_report_beside(report: Path, tmp_path: Path) -> None:
    """``--beside docs/claims.md``: the verdicts of a summary page this script wrote, headed as
    the report it was built from; ``--note``: a paragraph under the run's cost."""
    other = tmp_path / "other"
    other.mkdir()
    seeds = {"seeds": [4, 5, 6, 7, 8], "verdicts": ["not reproduced"] * 4 + ["inconclusive"]}
    replication = {**seeds, "agreement": "4/5", "needed": 4}
    replicated = claim(verdict="not reproduced", replication=replication, figures=[])
    (other / "claims.json").write_text(json.dumps({"preset": "standard", "claims": [replicated]}))
    docs = tmp_path / "docs"
    first = ["--page", str(docs / "claims.md"), "--assets", str(docs / "claims")]
    assert claims_page.main([str(other), *first]) == 0
    assert claims_page.beside_verdicts(docs / "claims.md") == (
        "standard, 5 seeds",
        {"X1": "not reproduced"},
    )
    args = ["--page", str(docs / "full.md"), "--assets", str(docs / "full")]
    beside = ["--beside", str(docs / "claims.md"), "--note", "Two batches are still to run."]
    assert claims_page.main([str(report), *args, *beside]) == 0
    summary = (docs / "full.md").read_text()
    assert "\n\nTwo batches are still to run.\n\n" in summary
    x1 = next(line for line in summary.splitlines() if line.startswith("| [X1]"))
    assert '<span class="verdict not-reproduced">not reproduced</span> | 0.90 / 0.01 |' in x1
    (docs / "plain.md").write_text("# Not a summary\n")
    assert claims_page.main([str(report), *args, "--beside", str(docs / "plain.md")]) == 2


def store_of(path: Path, jobs: list[tuple[float, float, float, str]]) -> Path:
    """A results database holding ``jobs`` as (started, finished, seconds, status)."""
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE jobs (started REAL, finished REAL, seconds REAL, status TEXT)")
        db.executemany("INSERT INTO jobs VALUES (?, ?, ?, ?)", jobs)
    return path


def test_the_summary_says_what_a_resumed_run_cost(report: Path, tmp_path: Path) -> None:
    """CPU: the finished jobs' seconds summed; wall: the union of their intervals, so the
    pause of a stopped and resumed run is not counted, nor a second job beside the first."""
    jobs = [(0, 10, 10, "done"), (5, 20, 15, "done"), (2000, 2090, 90, "done")]
    store = store_of(tmp_path / "run.sqlite", [*jobs, (2100, 5000, 2900, "failed")])
    docs = tmp_path / "docs"
    args = ["--page", str(docs / "claims.md"), "--assets", str(docs / "claims")]
    assert claims_page.main([str(report), *args, "--store", str(store)]) == 0
    summary = (docs / "claims.md").read_text()
    assert (
        "The run: 3 jobs, 1 min 55 s of CPU time (the jobs' own times summed) and 1 min 50 s "
        "of wall time while at least one job ran, in 2 stretches." in summary
    )
    assert claims_page.main([str(report), *args, "--store", str(tmp_path / "none")]) == 2
    assert (docs / "claims.md").read_text() == summary  # an error leaves the pages alone


def test_the_cost_counts_the_judged_jobs_only(tmp_path: Path) -> None:
    """Jobs the report's claims did not judge (an older version's, kept for the record) are
    counted apart, not in the run's CPU and wall time."""
    from attnsep.report.claims import planned_jobs

    (judged, *_), *_ = planned_jobs(["one-step"], "quick", 5).values()
    store = tmp_path / "run.sqlite"
    with sqlite3.connect(store) as db:
        db.execute("CREATE TABLE jobs (started, finished, seconds, status, config_hash)")
        rows = [(0, 10, 10, "done", judged.key), (20, 1020, 1000, "done", "older-version")]
        db.executemany("INSERT INTO jobs VALUES (?, ?, ?, ?, ?)", rows)
    one_step = claim(name="one-step", preset="quick", seed=5)
    keys = claims_page.judged_keys([one_step, claim()])
    assert judged.key in keys and "older-version" not in keys
    assert claims_page.run_cost(store, keys=keys) == (
        "The run: 1 jobs, 10.0 s of CPU time (the jobs' own times summed) and 10.0 s of wall "
        "time while at least one job ran, in one stretch. The store holds 1 more, of other "
        "versions or configs, not counted."
    )
    assert claims_page.judged_keys([claim()]) is None  # no registered experiment: all count
    assert claims_page.run_cost(store).startswith("The run: 2 jobs, 16 min 50 s of CPU")


def test_a_claim_judged_again_in_a_later_report_takes_the_earlier_ones_place(
    report: Path, tmp_path: Path
) -> None:
    again = tmp_path / "again"
    (again / "figures").mkdir(parents=True)
    (again / "figures" / "demo.png").write_bytes(b"\x89PNG again")
    judged_again = claim(verdict="not reproduced", seed=2, run="confirmatory", runs=[])
    new = claim(claim="X2", name="other", figures=[])
    (again / "claims.json").write_text(
        json.dumps({"preset": "full", "claims": [new, judged_again]})
    )
    docs = tmp_path / "docs"
    args = ["--page", str(docs / "claims.md"), "--assets", str(docs / "claims")]
    jobs = store_of(tmp_path / "first.sqlite", [(0, 10, 10, "done")])
    more = store_of(tmp_path / "again.sqlite", [(0, 60, 60, "done")])
    stores = ["--store", str(jobs), "--store", str(more)]
    assert claims_page.main([str(report), str(again), *args, *stores]) == 0
    summary = (docs / "claims.md").read_text()
    rows = [line.split(" | ")[0] for line in summary.splitlines() if line.startswith("| [X")]
    assert rows == ["| [X1](claims/X1.md)", "| [X1b/2](claims/X1b-2.md)", "| [X2](claims/X2.md)"]
    page = (docs / "claims" / "X1.md").read_text()
    assert "confirmatory run on master seed 2" in page and "not reproduced" in page
    assert (docs / "claims" / "demo" / "demo.png").read_bytes() == b"\x89PNG again"
    assert "The run in first.sqlite: 1 jobs, 10.0 s of CPU time" in summary
    assert "The run in again.sqlite: 1 jobs, 1 min 00 s of CPU time" in summary


def test_a_claim_only_a_later_report_holds_follows_the_claim_before_it_there(
    report: Path, tmp_path: Path
) -> None:
    again = tmp_path / "again"
    again.mkdir()
    judged_again = claim(figures=[], seed=2, runs=[])
    companion = claim(claim="X1c", name="demo-x1c", figures=[])
    (again / "claims.json").write_text(
        json.dumps({"preset": "full", "claims": [judged_again, companion]})
    )
    docs = tmp_path / "docs"
    args = ["--page", str(docs / "claims.md"), "--assets", str(docs / "claims")]
    assert claims_page.main([str(report), str(again), *args]) == 0
    summary = (docs / "claims.md").read_text()
    rows = [line.split("]")[0] for line in summary.splitlines() if line.startswith("| [X")]
    assert rows == ["| [X1", "| [X1c", "| [X1b/2"]


def test_durations() -> None:
    assert claims_page.duration(9.54) == "9.5 s"
    assert claims_page.duration(760) == "12 min 40 s"
    assert claims_page.duration(3 * 3600 + 5 * 60 + 20) == "3 h 05 min"


def test_claim_page(report: Path, tmp_path: Path) -> None:
    _, pages = build(report, tmp_path / "docs")
    page = (pages / "X1.md").read_text()

    assert page.startswith("# X1 — A \\*demo\\* | claim\n")
    assert '!!! success "reproduced"\n    the bound 0.9 is \\>= 0.8' in page
    assert "[← all claims](../claims.md)" in page and "[X1b/2 →](X1b-2.md)" in page
    assert "| power | 0.90 | [0.85, 0.94] |" in page
    assert "met in simulation at 2x the seeds" in page and "**Rival:** rate falling" in page
    assert "| rate, d=8 | 0.9 [0.8, 0.95] |" in page
    measured = page.split("## Measured\n\n")[1].split("\n\n")[0]
    assert measured.splitlines() == [
        "- d=8: 0.9 \\[0.8, 0.95\\]",
        "- d=16: 1 (m; n)",  # not split inside brackets
        "- fixed: 0.5",
    ]
    assert "[![X1: A \\*demo\\* | claim](demo/demo.png)](demo/demo.png)" in page
    assert (pages / "demo" / "demo.png").read_bytes() == b"\x89PNG demo"

    companion = (pages / "X1b-2.md").read_text()
    assert '!!! failure "not reproduced"' in companion and "[← X1](X1.md)" in companion
    assert "## Error rates" not in companion and "## Figures" not in companion
    assert "- 4 of 4\n- done\n" in companion


def test_list_items_do_not_open_lists() -> None:
    assert claims_page.escape_item("- 3 below") == "\\- 3 below"
    assert claims_page.escape_item("1. first") == "1\\. first"
    assert claims_page.split_measured("a; b [c; d] {e; f}; g") == ["a", "b [c; d] {e; f}", "g"]


def test_missing_figure_leaves_the_pages_alone(report: Path, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    summary, pages = build(report, docs)
    (report / "figures" / "demo.png").unlink()
    assert run(report, docs) == 2
    assert (docs / "claims.md").read_text() == summary and (pages / "X1.md").is_file()


def test_mkdocs_config_for_files() -> None:
    """Links work from ``file://`` and the claims pages are styled and need no nav entry."""
    yaml = pytest.importorskip("yaml")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    assert config["use_directory_urls"] is False
    assert "offline" in config["plugins"]
    assert "/claims/*.md" in config["not_in_nav"].split()
    assert all((ROOT / "docs" / css).is_file() for css in config["extra_css"])
    assert "stylesheets/claims.css" in config["extra_css"]


def test_broken_links(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "a").mkdir(parents=True)
    (site / "a" / "page.html").write_text(
        '<a href="../index.html#top">home</a> <img src="fig%201.png"> <a href="#x">here</a>'
        '<a href="https://example.org/">out</a> <a href="../b/">folder</a>'
        '<script src="/abs.js"></script> <a href="missing.html">gone</a>'
    )
    (site / "a" / "fig 1.png").write_bytes(b"")
    (site / "b").mkdir()
    (site / "b" / "index.html").write_text("")
    (site / "abs.js").write_text("")
    (site / "index.html").write_text('<link href="a/page.html">')
    (site / "404.html").write_text('<a href="/index.html">a web server\'s page</a>')
    assert site_links.broken_links(site) == [
        "a/page.html: ../b/",
        "a/page.html: /abs.js",
        "a/page.html: missing.html",
    ]
    assert site_links.main([str(site)]) == 1
