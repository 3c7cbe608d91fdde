"""The report shows each of the three verdicts in its own colour, with its reason and estimates."""

from __future__ import annotations

import json

import pytest

from attnsep.metrics import stats
from attnsep.report.html import BADGES, render, write_report
from attnsep.report.text_tables import VERDICT_COLORS


def claim(verdict: str, estimates: list[dict]) -> dict:
    return {
        "claim": "A7.9",
        "name": f"claim-{verdict.replace(' ', '-')}",
        "title": "a claim",
        "paper": "the paper says so",
        "command": "attnsep reproduce --standard --only x",
        "jobs": 1,
        "jobs_done": 1,
        "seconds": 1.0,
        "figures": [],
        **stats.claim(verdict, f"because {verdict}", "numbers", "the rule", estimates),
    }


def test_three_outcomes_three_colours_in_page_and_table():
    claims = [
        claim(stats.REPRODUCED, [stats.rate_estimate("rate", 60, 64)]),
        claim(stats.NOT_REPRODUCED, [stats.estimate("exponent", 0.7, 0.55, 0.9)]),
        claim(stats.INCONCLUSIVE, [stats.estimate("m*", 12, 10, float("inf"))]),
    ]
    page = render(claims, "standard")
    for outcome in stats.OUTCOMES:
        assert f'<span class="badge {BADGES[outcome]}">{outcome}</span>' in page
        assert f"because {outcome}" in page
    assert len({BADGES[o] for o in stats.OUTCOMES}) == 3
    assert len({VERDICT_COLORS[o] for o in stats.OUTCOMES}) == 3
    assert "[10, ∞]" in page  # an open upper bound


def test_claims_json_carries_verdict_reason_and_estimates(tmp_path):
    estimates = [stats.estimate("m*", 12, 10, float("inf"))]
    write_report([claim(stats.INCONCLUSIVE, estimates)], "standard", tmp_path)
    (saved,) = json.loads((tmp_path / "claims.json").read_text())["claims"]
    assert saved["verdict"] == "inconclusive" and saved["reason"] == "because inconclusive"
    assert saved["estimates"] == [{"name": "m*", "value": 12.0, "low": 10.0, "high": None}]


def test_text_is_escaped_and_sections_get_their_own_table():
    hostile = claim(stats.REPRODUCED, [stats.estimate("a<b", 1, 0, 2)])
    hostile["measured"] = "<script>alert(1)</script> & more"
    beyond = {**claim(stats.INCONCLUSIVE, []), "name": "k-parity", "section": "beyond the papers"}
    page = render([hostile, beyond], "quick")
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; more" in page
    assert "<td>a&lt;b</td>" in page
    papers, extra = page.index("the papers&#39; claims"), page.index("beyond the papers")
    assert papers < extra < page.index('<section id="k-parity">')


def test_each_kind_carries_only_its_own_verdicts_and_the_report_names_it(tmp_path):
    """SPEC Part F: only a claim is reproduced / not reproduced / inconclusive; a check is
    confirmed or failed (a bug), a finding judges nothing."""
    check = claim(stats.CHECK_FAILED, [])
    finding = claim(stats.FINDING, [])
    assert [c["kind"] for c in (claim(stats.REPRODUCED, []), check, finding)] == [
        "claim",
        "check",
        "finding",
    ]
    assert stats.kind_of("incomplete") == "claim"
    for verdict in ("passed", "maybe"):
        with pytest.raises(ValueError, match=verdict):
            stats.claim(verdict, "r", "m", "c", [])
    colours = {BADGES[v] for v in stats.CHECK_OUTCOMES}
    assert colours == {"ok", "bad", "open"} and VERDICT_COLORS[stats.CHECK_FAILED] != "green"
    page = render([check, finding], "standard")
    assert "a failed check means a bug in attnsep" in page
    assert "<td>check</td>" in page and "<td>finding</td>" in page
    write_report([check, finding], "standard", tmp_path)
    saved = json.loads((tmp_path / "claims.json").read_text())["claims"]
    assert [c["kind"] for c in saved] == ["check", "finding"]
