"""The terminal's claims table fits 80 columns, two lines per entry, and ``attnsep report
--claim ID`` prints one entry in full."""

from __future__ import annotations

from pathlib import Path

import pytest

from attnsep.metrics import stats
from attnsep.report.text_tables import claims
from cli_support import attnsep

LONG_TITLE = "Fixed vs stochastic PE: training-loss convergence in distribution, and more words"


def entry(ident: str, verdict: str, summary: str, **extra) -> dict:
    rates = {"power": 0.81, "false_pass": 0.04}
    return {"claim": ident, "title": LONG_TITLE, "verdict": verdict, "kind": "claim"} | {
        "summary": summary,
        "reason": "a long reason " * 40,
        "calibration": rates if verdict != stats.FINDING else None,
        **extra,
    }


def printed(data: dict, width: int = 80) -> list[str]:
    from rich.console import Console

    out = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    for table in claims(data):
        out.print(table.fit(width).rich())
    return out.export_text().splitlines()


@pytest.mark.parametrize("replicated", [False, True])
def test_each_entry_takes_two_lines_of_at_most_80_columns(replicated) -> None:
    longest = "x" * (stats.SUMMARY_CHARS - 10) + " " + "y" * 9
    entries = [
        entry("A7.10", stats.NOT_REPRODUCED, longest),
        entry("B5.3b", stats.FINDING, "the finding in short"),
        entry("C", stats.CONFIRMED, "no FCN narrower than Td beats the floor"),
    ]
    if replicated:
        for e in entries:
            e["replication"] = {"agreement": "4/5"}
    lines = printed({"claims": entries})
    assert all(len(line) <= 80 for line in lines)
    body = lines[2:-1]  # title and header above, the caption below
    assert len(body) == 2 * len(entries)
    for e, (first, second) in zip(entries, zip(body[::2], body[1::2], strict=True), strict=True):
        assert first.startswith(e["claim"]) and e["verdict"] in first
        assert first.endswith("…")  # the title cut to the width
        assert second.strip() == e["summary"]
    assert ("4/5" in body[0]) == replicated and "0.81/0.04" in body[0]


def test_a_summary_is_at_most_60_characters_and_defaults_to_the_reasons_opening() -> None:
    judged = stats.claim(stats.REPRODUCED, "the rate 0.95 >= 0.9 at d=64; more", "m", "c", [])
    assert judged["summary"] == "the rate 0.95 >= 0.9 at d=64"
    long = stats.claim(stats.REPRODUCED, "word " * 40, "m", "c", [])
    assert len(long["summary"]) <= stats.SUMMARY_CHARS and long["summary"].endswith("…")
    with pytest.raises(ValueError, match="summary must be at most 60 characters"):
        stats.claim(stats.REPRODUCED, "why", "m", "c", [], summary="s" * 61)


@pytest.fixture(scope="module")
def one_step_store(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("glance")
    store, out = folder / "store.sqlite", folder / "report"
    args = ("--quick", "--only", "one-step", "--executor", "inline", "--quiet")
    done = attnsep("reproduce", *args, "--store", str(store), "--out", str(out))
    assert done.returncode == 0, done.stderr
    return store, out


def test_reproduce_prints_each_claim_in_two_lines(one_step_store, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    store, out = one_step_store
    shown = attnsep("report", "--store", str(store), "--out", str(out))
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines)
    first = next(i for i, line in enumerate(lines) if line.startswith("A7.1 "))
    judged = attnsep("report", "--store", str(store), "--out", str(out), "--json").json()
    (one,) = judged["claims"]
    assert one["verdict"] in lines[first] and lines[first + 1].strip() == one["summary"]
    assert 0 < len(one["summary"]) <= stats.SUMMARY_CHARS


def test_report_claim_prints_the_full_entry(one_step_store, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    store, out = one_step_store
    args = ("--store", str(store), "--out", str(out), "--claim")
    full = attnsep("report", *args, "A7.1")
    assert full.returncode == 0, full.stderr
    (one,) = attnsep("report", *args, "A7.1", "--json").json()["claims"]
    text = " ".join(full.stdout.split())
    for key in ("reason", "measured", "criterion", "paper"):
        assert " ".join(one[key].split())[:150] in text
    assert "A7.1: One gradient step suffices" in full.stdout


def test_report_claim_refuses_an_unknown_id_before_writing(one_step_store, tmp_path) -> None:
    store, _ = one_step_store
    out = tmp_path / "r"
    bad = attnsep("report", "--store", str(store), "--out", str(out), "--claim", "A9.9")
    assert bad.returncode == 2 and bad.stderr.startswith("error: claim must be one of A7.1")
    assert "'A9.9'" in bad.stderr and bad.stderr.count("\n") == 1 and not out.exists()
    absent = attnsep("report", "--store", str(store), "--out", str(out), "--claim", "A7.3b")
    assert (
        absent.returncode == 1 and "A7.3b is not judged in the last reproduction" in absent.stderr
    )
