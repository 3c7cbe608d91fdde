"""A claim judged on several master seeds and published once (``report.replication``), the CLI's
``--replicate`` / ``--seeds``, and a report rebuilt from an unchanged store reusing its judged
entries (``report.judged``)."""

from __future__ import annotations

import json

import pytest

from attnsep.metrics import stats
from attnsep.report import judged
from attnsep.report.replication import (
    combine,
    most_varying,
    needed,
    publish,
    seeds_for,
)
from fuzz_support import invoke


def entry(claim: str, verdict: str, value: float = 1.0, kind: str | None = None) -> dict:
    estimate = {"name": "m*(d=256)", "value": value, "low": value - 1, "high": value + 1}
    flat = {"name": "params", "value": 7.0, "low": 6.0, "high": 8.0}
    return {
        "claim": claim,
        "verdict": verdict,
        "kind": kind or stats.kind_of(verdict),
        "reason": f"{verdict} here",
        "estimates": [flat, estimate],
        "figures": [f"seed-x/{claim}.png"],
    }


def test_seeds_for_replicate_and_lists():
    assert seeds_for(None, None, None) is None
    assert seeds_for(None, None, 5) == [4, 5, 6, 7, 8]
    assert seeds_for(10, None, 3) == [10, 11, 12]
    assert seeds_for(None, [4, 9], None) == [4, 9]
    for bad in ({"replicate": 1}, {"replicate": True}, {"seeds": [4, 4]}, {"seeds": [4]}):
        with pytest.raises(ValueError):
            seeds_for(None, bad.get("seeds"), bad.get("replicate"))
    with pytest.raises(ValueError, match="not both"):
        seeds_for(None, [4, 5], 2)


def test_needed_is_four_of_five():
    assert [needed(n) for n in (2, 3, 5, 10)] == [2, 3, 4, 8]


def test_publish_rules():
    r, i, n = stats.REPRODUCED, stats.INCONCLUSIVE, stats.NOT_REPRODUCED
    assert publish([r, r, i, r, r], "claim") == (r, 4)
    assert publish([r, r, i, i, r], "claim") == (stats.UNSTABLE, 3)
    assert publish([n, n, n, n, n], "claim") == (n, 5)
    c, f = stats.CONFIRMED, stats.CHECK_FAILED
    assert publish([c, c, c, f, c], "check") == (c, 4)
    assert publish([c, c, f, f, c], "check") == (f, 2)
    assert publish([r, "incomplete", r], "claim") == ("incomplete", 1)


def test_combine_publishes_agreement_and_names_what_varies():
    verdicts = ["reproduced", "inconclusive", "reproduced", "inconclusive", "reproduced"]
    values = [12.0, 32.0, 13.0, 30.0, 12.0]
    runs = [
        (seed, [entry("A7.2", v, x), entry("C", stats.CONFIRMED)])
        for seed, v, x in zip([4, 5, 6, 7, 8], verdicts, values, strict=True)
    ]
    unstable, check = combine(runs)
    assert unstable["verdict"] == stats.UNSTABLE and unstable["kind"] == "claim"
    assert unstable["replication"] == {
        "seeds": [4, 5, 6, 7, 8],
        "verdicts": verdicts,
        "agreement": "3/5",
        "agreeing": 3,
        "needed": 4,
    }
    reason = unstable["reason"]
    assert "reproduced on seeds 4, 6, 8" in reason and "inconclusive on seeds 5, 7" in reason
    assert "varies most: m*(d=256) (12, 32, 13, 30, 12 on seeds 4, 5, 6, 7, 8)" in reason
    assert "; seed 5 (inconclusive): inconclusive here; seed 7 (inconclusive)" in reason
    assert unstable["summary"] == "reproduced 3, inconclusive 2 of 5 seeds"
    assert check["verdict"] == stats.CONFIRMED and check["replication"]["agreement"] == "5/5"


def test_the_published_entry_is_a_seed_that_reached_the_verdict():
    runs = [
        (4, [entry("A7.1", stats.INCONCLUSIVE, 1.0)]),
        *[(s, [entry("A7.1", stats.REPRODUCED, float(s))]) for s in (5, 6, 7, 8)],
    ]
    (published,) = combine(runs)
    assert published["verdict"] == stats.REPRODUCED and published["estimates"][1]["value"] == 5.0


def test_a_long_reason_is_quoted_to_a_word():
    assert stats.clipped("a" * 10 + " b" * 300, 40) == "aaaaaaaaaa b b b b b b b b b b b b b b…"
    assert len(stats.clipped("a" * 10 + " b" * 300, 40)) <= 40
    assert stats.clipped("short.", 40) == "short"


def test_most_varying_skips_missing_and_constant_estimates():
    same = [entry("X", stats.REPRODUCED, 3.0) for _ in range(3)]
    assert most_varying(same) is None
    gone = [entry("X", stats.REPRODUCED, 3.0), {**entry("X", stats.REPRODUCED), "estimates": []}]
    assert most_varying(gone) is None


def test_judged_entries_are_reused_only_under_their_key(tmp_path):
    claims = [{"claim": "X", "figures": ["figures/x.png"]}]
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "x.png").write_bytes(b"png")
    key = judged.key({"name": "x", "rows": [["h", 1, "done", 2.0]]})
    judged.save(tmp_path, "x", key, claims)
    assert judged.load(tmp_path, "x", key) == claims
    other = judged.key({"name": "x", "rows": [["h", 2, "done", 3.0]]})
    assert other != key and judged.load(tmp_path, "x", other) is None
    (tmp_path / "figures" / "x.png").unlink()
    assert judged.load(tmp_path, "x", key) is None  # a figure gone: judged again
    (tmp_path / judged.FOLDER / "x.json").write_text("{not json")
    assert judged.load(tmp_path, "x", key) is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--replicate", "1"], "replicate must be a whole number from 2 to 100, got 1"),
        (["--seeds", "4,x"], "--seeds must be comma-separated integers, got '4,x'"),
        (["--seeds", "4,5", "--replicate", "2"], "give seeds or replicate, not both"),
        (["--seeds", "4,5", "--seed", "3"], "give seed or seeds, not both"),
    ],
)
def test_bad_replication_flags_are_one_line(args, message, tmp_path):
    out = tmp_path / "report"
    code, _, err = invoke(["reproduce", "--quick", "--only", "one-step", "--out", str(out), *args])
    assert code == 2, err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_a_replicated_reproduction_of_a_cheap_claim(tmp_path):
    """Two seeds of one-step at the quick preset, end to end: replication in claims.json, each
    seed's figures in its own folder, and a second run judging nothing again."""
    store, out = tmp_path / "s.sqlite", tmp_path / "report"
    args = ["reproduce", "--quick", "--only", "one-step", "--seeds", "4,5", "--executor"]
    args += ["inline", "--store", str(store), "--out", str(out), "--quiet", "--json"]
    code, _, err = invoke(args)
    assert code == 0, err
    (claim,) = json.loads((out / "claims.json").read_text())["claims"]
    assert claim["replication"]["seeds"] == [4, 5] and len(claim["replication"]["verdicts"]) == 2
    assert all((out / figure).is_file() for figure in claim["figures"])
    assert claim["figures"][0].startswith(("seed-4/", "seed-5/"))
    kept = sorted((out / "seed-4" / judged.FOLDER).iterdir())
    stamp = kept[0].stat().st_mtime_ns
    assert invoke(args)[0] == 0 and kept[0].stat().st_mtime_ns == stamp
    assert json.loads((out / "claims.json").read_text())["claims"][0] == claim
