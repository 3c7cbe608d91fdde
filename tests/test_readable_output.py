"""Tables that fit the terminal and footnotes for every ``n/a`` and open interval."""

from __future__ import annotations

from attnsep.report.frontier_tables import open_notes
from attnsep.report.text_table import TextTable


def wide_table(columns: int) -> TextTable:
    names = tuple(f"column_{i}" for i in range(columns))
    rows = tuple(tuple(f"{i * j:.4g}" for i in range(columns)) for j in range(3))
    return TextTable("wide", names, rows, ("a note",), "l" * columns, "k=1")


def test_fit_keeps_the_left_columns_that_fit_and_names_the_rest() -> None:
    table = wide_table(16)
    fitted = table.fit(80)
    kept = len(fitted.columns)
    assert 1 <= kept < 16
    assert 1 + sum(3 + len(c) for c in fitted.columns) <= 80  # each header is the widest cell
    assert fitted.columns == table.columns[:kept]
    assert all(len(row) == kept for row in fitted.rows)
    assert fitted.notes[0] == "a note"
    assert fitted.notes[-1].startswith(f"{16 - kept} columns not shown at this width (column_")
    assert fitted.notes[-1].endswith("; --json has all")
    assert table.fit(400) is table  # everything fits: unchanged


def test_fit_printed_in_80_columns_has_no_cut_headers() -> None:
    from rich.console import Console

    out = Console(width=80, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    out.print(wide_table(16).fit(80).rich())
    assert "…" not in out.export_text()


def test_open_intervals_and_missing_thresholds_get_a_footnote() -> None:
    reached = {"m_star": 8, "m_star_low": 6, "m_star_high": 12}
    assert open_notes([reached], ("m_star",)) == ()
    open_end = {**reached, "m_star_high": None}
    missing = {"m_star": None, "m_star_low": 64, "m_star_high": None}
    (inf,) = open_notes([open_end], ("m_star",))
    assert inf.startswith("inf: ")
    notes = open_notes([reached, missing], ("m_star",))
    assert [n.split(":")[0] for n in notes] == ["inf", "n/a"]


def test_an_incomplete_claim_names_the_command_that_completes_it(tmp_path) -> None:
    import attnsep
    from attnsep.api import report

    store = tmp_path / "sweep.sqlite"
    attnsep.sweep("one-step", {"d_values": [[16]]}, fixed={"seeds": 2}, store=store)
    done = report(tmp_path / "report", store)
    claim = next(c for c in done.claims if c["name"] == "one-step")
    assert claim["verdict"] == "incomplete"
    assert (
        f"`attnsep reproduce --quick --only one-step --store {store}` completes it"
        in (claim["reason"])
    )
