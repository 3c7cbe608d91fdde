"""The short ``summary`` of every verdict of the sparse-XOR and selection experiments (A7.2,
A7.6/A7.6b, A7.7, A7.8, A3, A7.9, A7.10, C, B5.4): at most ``stats.SUMMARY_CHARS`` characters,
the deciding fact of each branch, and only numbers its reason, measurement or criterion gives."""

from __future__ import annotations

import re

import pytest

import test_verdict_fcn_selection as tfs
import test_verdict_polylog_width as tw
import test_verdict_separation_select as tss
import test_verdict_separation_xor as tsx
import test_verdict_xor_cls_equivalence as tc
import test_verdict_xor_ffnn_width as tf
import test_verdict_xor_fixed_embeddings as tfe
import test_verdict_xor_one_head as to
import test_verdict_xor_rotated_basis as tr
from attnsep.experiments import fcn_selection, separation_xor, xor_one_head, xor_rotated_basis
from attnsep.metrics import calibration, growth, stats

NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[+-]\d+)?")


def summary(claim: dict, *words: str) -> str:
    """``claim``'s summary, checked: one short line without a final stop, holding ``words``,
    every number in it also in the reason, the measurement or the criterion."""
    text = claim["summary"]
    assert len(text) <= stats.SUMMARY_CHARS and "\n" not in text and not text.endswith(".")
    said = claim["reason"] + claim["measured"] + claim["criterion"]
    for number in NUMBER.findall(text):
        assert number in said, (number, text)
    for word in words:
        assert word in text, (word, text)
    return text


# --- A7.2 polylog-width ----------------------------------------------------------------------


def test_polylog_width_summaries():
    paper = tw.judged(tw.records(tw.polylog, tw.STANDARD, plateau=0.93))
    assert paper["verdict"] == stats.REPRODUCED
    summary(paper, "local exponent", "polylog predicts better")
    power = tw.judged(tw.records(tw.power, tw.STANDARD, plateau=0.93))
    assert power["verdict"] == stats.NOT_REPRODUCED
    summary(power, "alpha's lower bound", ">= 0.5: m* grows like a power of d")
    few = tw.judged(tw.records(tw.polylog, tw.STANDARD[:3]))
    assert summary(few) == "only 3 values of d; the growth rules need 4"
    slow = tw.judged(tw.records(lambda d: 3 * d**0.3, tw.STANDARD, plateau=0.93))
    assert slow["verdict"] == stats.INCONCLUSIVE
    assert summary(slow).startswith("curvature test: the power law; held-out test: ")


def test_polylog_width_names_the_first_size_without_a_plateau():
    recs = tw.records(tw.polylog, tw.STANDARD[:1], never=0.75, limit=4096)
    claim = tw.judged(recs + tw.records(tw.polylog, tw.STANDARD[1:]))
    assert summary(claim) == "no success plateau up to m_limit at d = 256"


# --- A7.6 separation-xor and its check A7.6b -------------------------------------------------


def test_separation_xor_summaries():
    claim = tsx.judged(tsx.records(tsx.polylog, tsx.fcn_width))
    assert claim["verdict"] == stats.REPRODUCED
    summary(claim, "polylog predicts better")
    check = tsx.check(claim)
    assert check["verdict"] == stats.CONFIRMED
    summary(check, "the FCN's parameters grow at least like d^", "(>= 0.8)")
    linear = tsx.judged(tsx.records(tsx.linear, tsx.fcn_width))
    assert linear["verdict"] == stats.NOT_REPRODUCED
    summary(linear, "the transformer's params grow at least like d^", "(>= 0.5)")
    few = tsx.judged(tsx.records(tsx.polylog, tsx.fcn_width, sizes=[64, 128, 256]))
    assert summary(few) == "only 3 values of d; the growth rules need 4"


def test_separation_xor_names_a_size_never_reached():
    recs = tsx.records(tsx.polylog, tsx.fcn_width, sizes=[64, 128, 256, 512])
    recs[0] = tsx.record("transformer", 64, tsx.polylog, never=0.5)
    claim = tsx.judged(recs)
    assert claim["decided"] == growth.UNREACHED
    assert summary(claim) == "the transformer never reached the target at d=64"


@pytest.mark.parametrize(
    ("interval", "expected"),
    [
        ((0.9, 1.1), "the FCN's parameters grow at least like d^0.90 (>= 0.8)"),
        ((0.4, 1.1), "FCN parameter exponent 0.75 [0.4, 1.1] straddles 0.8"),
        ((0.3, 0.7), "FCN exponent's upper bound 0.70 < 0.8: a bug in attnsep"),
    ],
)
def test_the_fcn_checks_summary_follows_its_outcome(interval, expected):
    a = separation_xor.analysis.analyse(tsx.records(tsx.polylog, tsx.fcn_width, sizes=[64, 128]))
    a["fcn_alpha"] = (sum(interval) / 2, *interval)
    assert summary(separation_xor.check.fcn_check(a)) == expected


# --- A7.8 ffnn-width -------------------------------------------------------------------------


def test_ffnn_width_summaries():
    flat = tf.judged([tf.record(d, lambda d: 3.0) for d in tf.STANDARD])
    assert flat["verdict"] == stats.REPRODUCED
    summary(flat, "linear P* (alpha_P >= ", "flat w* (alpha_w <= ")
    grows = tf.judged([tf.record(d, lambda d: 0.5 * d**0.8) for d in tf.STANDARD])
    assert grows["verdict"] == stats.NOT_REPRODUCED
    summary(grows, "the width grows: alpha_w's lower bound", ">= 0.5")
    shrinking = [tf.record(d, lambda d: 64 * 16**0.5 / d**0.5) for d in (16, 64, 256, 1024)]
    summary(tf.judged(shrinking), "fewer than linear params: alpha_P's upper bound", "< 0.8")
    two = tf.judged([tf.record(d, lambda d: 3.0) for d in (16, 1024)])
    assert summary(two) == "only 2 values of d; the criterion needs 3"
    few = tf.judged([tf.record(d, lambda d: 3.0, seeds=8) for d in (16, 64, 256)])
    assert summary(few) == "only 8 replicas per probe; the criterion needs 10"
    narrow = tf.judged([tf.record(d, lambda d: 3.0, seeds=10, spread=0.5) for d in (16, 20, 24)])
    assert narrow["verdict"] == stats.INCONCLUSIVE
    assert summary(narrow) == "alpha_P's lower bound -0.12 < 0.8; d ~ 3.35544e+07 decides"


# --- A7.7 fixed-embeddings -------------------------------------------------------------------


def test_fixed_embeddings_summaries():
    paper = tfe.judged(tfe.records(tfe.paper_law))
    assert paper["verdict"] == stats.REPRODUCED
    summary(paper, "alpha_3 - alpha_1 = ", ">= 1")
    rival = tfe.judged(tfe.records(lambda d, k: 5.0 * d**2 * k**2))
    assert rival["verdict"] == stats.NOT_REPRODUCED
    summary(rival, "alpha_3 - alpha_1 = ", "< 0.5")
    halfway = tfe.judged(tfe.records(lambda d, k: 5.0 * d ** (1 + 0.375 * k)))
    assert halfway["verdict"] == stats.INCONCLUSIVE
    summary(halfway, "lies between 0.5 and 1")
    few = tfe.judged(tfe.records(tfe.paper_law, seeds=4), seeds=4)
    assert summary(few) == "only 4 replicas per (d, k); the criterion needs 10"
    one = tfe.judged(tfe.records(tfe.paper_law, ks=(2,)))
    assert summary(one) == "only k = [2] ran; alpha's growth with k needs two k's"
    two = tfe.judged(tfe.records(tfe.paper_law, ds=(8, 13)))
    assert summary(two) == "k = [1, 2, 3] ran at fewer than 3 d's; an exponent needs 3"
    capped = tfe.records(tfe.paper_law)
    capped[-1]["thresholds"][:4] = [None] * 4
    assert summary(tfe.judged(capped)) == "N* or its upper bound beyond the cap at (d=13, k=3)"


def test_fixed_embeddings_names_the_exponents_that_do_not_increase():
    """``alpha_k`` falling from k = 2 to 3: inconclusive whatever the span."""
    claim = tfe.judged(tfe.records(lambda d, k: 5.0 * d ** (3 if k == 2 else k), ks=(1, 2, 3)))
    assert claim["verdict"] == stats.INCONCLUSIVE
    summary(claim, "alpha_3 = ", "<= alpha_2 = ", ": no increase with k")


# --- A3 cls-equivalence ----------------------------------------------------------------------


def test_cls_equivalence_summaries():
    same = tc.judged(tc.records())
    assert same["verdict"] == stats.REPRODUCED
    summary(same, "largest deviation ", "<= 1e-09; control's >= ")
    recs = tc.records()
    recs[1]["dev"][3] = 1e-3
    off = tc.judged(recs)
    assert off["verdict"] == stats.NOT_REPRODUCED
    assert summary(off) == "deviation 0.001 > 1e-06 at d=64, m=16, population"
    chaotic = tc.judged(tc.records(chaotic=10))
    assert summary(chaotic) == "under half the replicas conditioned at 2 sizes"
    between = tc.judged(tc.records(dev=1e-8))
    summary(between, "largest deviation ", "> 1e-09 but not > 1e-06")
    weak = tc.judged(tc.records(control=1e-9))
    summary(weak, "control deviates by only ")


# --- A7.10 one-head (a finding) --------------------------------------------------------------


def _heads(d: int, two: int, seeds: int = 20) -> dict:
    arms = {"two": to.arm(two, seeds, 0.1), "tied": to.arm(0, seeds, 1.9)}
    return {"d": d, "m": 9, "seeds": seeds, "eta": 1.0, "arms": {**arms, "one": to.arm(0, 20, 2)}}


def test_one_head_summaries():
    one = xor_one_head.verdict.verdict(
        [_heads(64, 18)], xor_one_head.config.Config(d_values=[64], seeds=20)
    )
    assert summary(one) == "two heads: 18/20 after one step; one head: 0 runs"
    config = xor_one_head.config.Config(d_values=[64, 256], seeds=20)
    both = xor_one_head.verdict.verdict([_heads(256, 19), _heads(64, 10)], config)
    assert summary(both) == "two heads: 10/20-19/20 after one step; one head: 0 runs"


# --- A7.9 rotated-basis (a finding) ----------------------------------------------------------


def test_rotated_basis_summaries():
    config = xor_rotated_basis.config.Config()
    alike = xor_rotated_basis.verdict.verdict(tr._records([0.03] * 9 + [0.3] * 11), config)
    assert summary(alike) == "transformer: axis 0.94, rotated 0; MLP: no rate gap"
    differ = xor_rotated_basis.verdict.verdict(tr._records([0.3] * 20), config)
    assert summary(differ) == "transformer: axis 0.94, rotated 0; MLP: rate gap at some d"
    mlp = [r for r in tr._records([0.3] * 20) if r["model"] == "mlp"]
    assert summary(xor_rotated_basis.verdict.verdict(mlp, config)) == (
        "MLP: axis 0.5, rotated 0; rate gap at some d"
    )


# --- C separation-select (a check) -----------------------------------------------------------


def test_separation_select_summaries():
    recs = tss.records(tss.log_width, tss.STANDARD)
    confirmed = tss.judged(recs)
    assert summary(confirmed) == "FCN width = ceil(Td - 0.2 d (T - 1)) at every (T, q)"
    next(r for r in recs if (r["T"], r["q"]) == (2048, 4))["fcn_width"] += 1
    failed = tss.judged(recs)
    assert failed["verdict"] == stats.CHECK_FAILED
    assert summary(failed) == "FCN width disagrees with the theorem (1 problems): a bug"


# --- B5.4 fcn-selection (a check) ------------------------------------------------------------


def test_fcn_selection_summaries():
    data = tfs.records(tfs.CONFIG.settings, [4, 12, 16])
    checked = sum(r["model"] == "fcn" and r["floor"] > 0 for r in data)
    confirmed = fcn_selection.verdict.verdict(data, tfs.CONFIG)
    assert summary(confirmed) == (
        f"no FCN narrower than Td below the floor by 3 s.e. ({checked} nets)"
    )
    victim = next(r for r in data if r["model"] == "fcn" and r["width"] == 24 and r["T"] == 24)
    victim["loss"] = victim["floor"] - 4 * victim["stderr"]
    below = fcn_selection.verdict.verdict(data, tfs.CONFIG)
    assert summary(below) == "1 FCN(s) below the floor by 3 s.e., e.g. width 24"
    with calibration.simulating():
        assert fcn_selection.verdict.verdict(data, tfs.CONFIG)["summary"] == "simulated"
    wide = [r for r in data if r["width"] >= r["T"] * r["d"]]
    nothing = fcn_selection.verdict.verdict(wide, tfs.CONFIG)
    assert summary(nothing) == "no trained FCN is narrower than Td: nothing was checked"
