"""Threshold search, the sparse-XOR sign error and the measured separation (SPEC A7.2, A7.6,
Part C)."""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from attnsep.api import frontier
from attnsep.configs import SELECTION_TARGET
from attnsep.core.rng import generator
from attnsep.engine.store import Store
from attnsep.exact.selection_bounds import fcn_bottleneck_loss, uniform_attention_loss
from attnsep.experiments import separation_select
from attnsep.experiments import xor_thresholds as xt
from attnsep.metrics.parity import sign_error
from attnsep.metrics.stats import threshold_draws
from attnsep.models.mlp import count
from attnsep.models.query_heads import QueryHeads, head_product
from attnsep.report.frontier_tables import select_table, xor_table
from attnsep.tasks.parity import SparseParity
from attnsep.train.one_step import OneStepConfig, run_one_step
from attnsep.train.search import Probe, probe_matrix, smallest_passing
from cli_support import attnsep

SELECTION_TARGET_FRACTION = Fraction(SELECTION_TARGET)


def test_smallest_passing_finds_a_monotone_threshold_with_few_probes():
    calls = []

    def evaluate(size: int) -> list[bool]:
        calls.append(size)
        return [size >= 37] * 10

    star, probes = smallest_passing(evaluate, 0.9, 1, 1000)
    assert star == 37
    assert len(calls) == len(set(calls)) <= 2 * math.ceil(math.log2(37)) + 2
    assert [p.size for p in probes] == sorted(calls)


def test_smallest_passing_reports_none_at_the_limit():
    star, probes = smallest_passing(lambda size: [False] * 4, 0.5, 3, 20)
    assert star is None and probes[-1].size == 20


def test_probes_keep_every_replica_and_the_bootstrap_replays_the_search():
    """On all replicas the first passing stored probe is the bisection's answer."""
    rng = np.random.default_rng(1)
    chance = {}

    def evaluate(size: int) -> np.ndarray:
        chance[size] = min(1.0, size / 40)
        return rng.random(32) < chance[size]

    star, probes = smallest_passing(evaluate, 0.75, 1, 256)
    records = [p.as_record() for p in probes]
    sizes, outcomes = probe_matrix(records)
    assert outcomes.shape == (32, len(probes))
    point, draws = threshold_draws(sizes, outcomes, 0.75, resamples=200)
    assert point == star
    assert set(draws[np.isfinite(draws)]) <= set(sizes)


def test_transformer_threshold_is_bracketed_by_its_probes():
    point = xt.transformer_xor(64, seeds=16, seed=0)
    star = point["m_star"]
    assert star is not None and point["params"] == 2 * star
    rates = {p["size"]: p["rate"] for p in point["probes"]}
    assert rates[star] >= xt.TARGET
    if star > 2:  # bisection leaves the size below the threshold probed and failing
        assert rates[star - 1] < xt.TARGET
    assert {2 * star, 4 * star} <= set(rates)  # the confirmation probes
    assert all(len(p["outcomes"]) == 16 for p in point["probes"])
    assert point["success_low"] <= point["success_rate"] <= point["success_high"]
    assert point["test_samples"] == xt.TEST_SAMPLES == 8192


def test_fcn_threshold_counts_parameters_and_needs_more_than_one_unit():
    point = xt.fcn_xor(8, seeds=4, seed=0, steps=500)
    assert point["probes"][0]["size"] == 2  # one ReLU unit cannot fit XOR: not probed
    assert point["width_star"] is not None and point["width_star"] >= 2
    assert point["params"] == count(8, point["width_star"]) == point["width_star"] * 10 + 1


def exact_sign_error(gamma: torch.Tensor, support: torch.Tensor, sign: int) -> torch.Tensor:
    """The sign error over all of ``{-1, +1}^d``, by enumeration."""
    d = gamma.shape[2]
    cube = torch.tensor(list(itertools.product((-1.0, 1.0), repeat=d)), dtype=torch.float64)
    x = cube.expand(gamma.shape[0], *cube.shape)
    f = head_product(gamma, x, sign)
    y = SparseParity(d, support.shape[1], sign).labels(x, support)
    return (torch.sign(f) != y).double().mean(dim=1)


def test_sign_error_matches_exact_enumeration():
    """Monte Carlo on fresh samples against the exact error over the cube (within 5 s.e.)."""
    torch.manual_seed(0)
    d, samples = 10, 20000
    gamma = torch.softmax(3 * torch.randn(6, 2, d, dtype=torch.float64), dim=2)
    support = torch.stack([torch.randperm(d)[:2] for _ in range(6)])
    gamma[0] = 0.01
    gamma[0, 0, support[0, 0]] = gamma[0, 1, support[0, 1]] = 0.9  # specialized: error 0
    gamma[1] = 0.0
    gamma[1, :, support[1, 0]] = 1.0  # collapsed on one bit: f = -1 always, error 1/2
    exact = exact_sign_error(gamma, support, -1)
    gens = [generator(0, e, "test") for e in range(6)]
    measured = sign_error(gamma, support, -1, samples, gens)
    assert exact[0] == measured[0] == 0 and exact[1] == 0.5
    assert 0.05 < float(exact[2:].max())  # some replicas err often
    tolerance = 5 * torch.sqrt(exact * (1 - exact) / samples) + 1e-12
    assert bool(((measured - exact).abs() <= tolerance).all()), (measured, exact)


def test_sign_error_reads_its_generators_and_any_input_length():
    gamma = torch.softmax(torch.randn(2, 2, 13, dtype=torch.float64), dim=2)
    support = torch.tensor([[0, 12], [3, 9]])
    first = sign_error(gamma, support, -1, 3000, [generator(1, e) for e in range(2)])
    again = sign_error(gamma[1:], support[1:], -1, 3000, [generator(1, 1)])
    assert first[1] == again[0]  # a replica's error does not depend on the others
    exact = exact_sign_error(gamma, support, -1)
    assert bool(((first - exact).abs() <= 5 * torch.sqrt(exact * (1 - exact) / 3000)).all())


def test_transformer_sign_error_skips_only_certified_replicas():
    """A certified error below 1 fixes the sign everywhere: error 0 without sampling."""
    result = run_one_step(OneStepConfig(d=16, m=6, seeds=24, device="cpu"), keep_embeddings=True)
    errors = xt.transformer_sign_error(result, samples=2048)
    certified = result.certified_error < 1
    assert certified.any() and (~certified).any()
    gamma = QueryHeads(torch.from_numpy(result.embeddings)).weights(
        torch.from_numpy(result.theta_after)
    )
    gens = [generator(0, e, "one-step-test") for e in range(24)]
    direct = sign_error(gamma, torch.from_numpy(result.support), -1, 2048, gens).numpy()
    assert np.array_equal(errors, direct)
    assert (direct[certified] == 0).all()


def test_fcn_min_width_is_the_first_width_whose_least_loss_reaches_the_target():
    width = separation_select.run.fcn_min_width(16, 2, 1, SELECTION_TARGET)
    assert width == 26 and separation_select.run.fcn_params(16, 2, 26) == count(16 * 2 + 16, 26, 2)
    limit = 0.2 * float(uniform_attention_loss(16, 1, 2))
    assert (
        float(fcn_bottleneck_loss(16, 1, 2, 26)) <= limit < float(fcn_bottleneck_loss(16, 1, 2, 25))
    )
    widths = [separation_select.run.fcn_min_width(T, 4, 1, SELECTION_TARGET) for T in (4, 8, 16)]
    assert all(0.8 * T * 4 <= w <= T * 4 for w, T in zip(widths, (4, 8, 16), strict=True))


def test_frontier_xor_json_contract(tmp_path):
    store = tmp_path / "s.sqlite"
    args = ("frontier", "xor", "--d", "16,32", "--seeds", "2", "--store", str(store), "--json")
    code, out, err = attnsep(*args)
    assert code == 0, err
    report = json.loads(out)
    # the jobs are the separation-xor experiment's, stored once; a rerun reads them back
    rows = Store(store).rows("separation-xor")
    assert len(rows) == 4 and all(r["status"] == "done" for r in rows)
    rerun = attnsep(*args)
    assert rerun.returncode == 0 and rerun.json() == report
    assert len(Store(store).rows("separation-xor")) == 4
    assert [p["d"] for p in report["transformer"]] == [16, 32]
    for model, knob in (("transformer", "m_star"), ("fcn", "width_star")):
        for p in report[model]:
            assert {"d", knob, "params", "success_rate", "seeds"} <= set(p)
            if p[knob] is not None:
                assert p[f"{knob}_low"] <= p[knob] <= (p[f"{knob}_high"] or math.inf)
                assert p["params"] == xt.params_at(model, p["d"], p[knob])
        assert set(report["fit"][model]["exponent"]) == {"name", "value", "low", "high"}


def test_frontier_xor_table_shows_intervals(monkeypatch, tmp_path):
    summary = xt.summary(
        [
            {
                "model": model,
                "d": d,
                "probes": [Probe(3, (True,) * 4).as_record()],
                "success_rate": 1.0,
                "success_low": 0.5,
                "success_high": 1.0,
                "collapse_rate": None,
            }
            for model in ("transformer", "fcn")
            for d in (16, 32)
        ]
    )
    monkeypatch.setattr(xt, "summary", lambda records: summary)
    nothing_run = SimpleNamespace(rows=[], records=[])
    monkeypatch.setattr(frontier, "run_experiment", lambda *a, **k: nothing_run)
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = attnsep("frontier", "xor", "--d", "16,32", "--store", str(tmp_path / "s"))
    assert code == 0, err
    assert "3 [3, 3]" in out and "103 [103, 103]" in out  # FCN width 3 at d=32: 3·34+1
    assert "exponent of params vs d" in out


def gapped_xor_summary() -> dict:
    """A synthetic ``xor_thresholds.summary``: the FCN not run at d = 32, no exponents."""

    def point(d: int, knob: str, value: int) -> dict:
        bounds = {f"{knob}_low": value, f"{knob}_high": value, "params_low": 2 * value}
        return {
            "d": d,
            knob: value,
            **bounds,
            "params": 2 * value,
            "params_high": None,
            "success_rate": 0.95,
        }

    none = {"name": "exponent", "value": None, "low": None, "high": None}
    return {
        "transformer": [point(16, "m_star", 3), point(32, "m_star", 4)],
        "fcn": [point(16, "width_star", 5)],
        "fit": {"transformer": {"exponent": none}, "fcn": {"exponent": none}},
    }


def test_xor_table_marks_a_size_a_model_did_not_run():
    table = xor_table(gapped_xor_summary())
    assert table.rows == (
        ("16", "3 [3, 3]", "6 [6, inf]", "0.95", "5 [5, 5]", "10 [10, inf]", "0.95"),
        ("32", "4 [4, 4]", "8 [8, inf]", "0.95", "-", "-", "-"),
    )
    assert table.notes == (
        "exponent of params vs d: transformer exponent = n/a [n/a, n/a], "
        "FCN exponent = n/a [n/a, n/a]",
        "inf: in some bootstrap draws the threshold was not reached within the largest size "
        "searched, so the interval has no upper end; more seeds or a larger search closes it",
    )


def test_frontier_tables_print_brackets_as_text(monkeypatch, tmp_path):
    """Intervals such as ``[n/a, n/a]`` are printed, not read as rich markup."""
    monkeypatch.setattr(xt, "summary", lambda records: gapped_xor_summary())
    nothing_run = SimpleNamespace(rows=[], records=[])
    monkeypatch.setattr(frontier, "run_experiment", lambda *a, **k: nothing_run)
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = attnsep("frontier", "xor", "--d", "16,32", "--store", str(tmp_path / "s"))
    assert code == 0, err
    assert "transformer exponent = n/a [n/a, n/a], FCN exponent = n/a [n/a, n/a]" in out
    assert "10 [10, inf]" in out


def test_select_table_rows_from_a_summary():
    def estimate(name: str, value: float, low: float, high: float | None) -> dict:
        return {"name": name, "value": value, "low": low, "high": high}

    reached = {
        "m_star": 5,
        "m_star_low": 4,
        "m_star_high": 6,
        "width": 9,
        "width_low": 8,
        "width_high": 10,
        "params": 25,
        "params_low": 16,
        "params_high": 36,
    }
    missed = {
        "m_star": None,
        "m_star_low": 7,
        "m_star_high": None,
        "width": None,
        "width_low": 11,
        "width_high": None,
        "params": None,
        "params_low": 49,
        "params_high": None,
    }
    summary = {
        "d": 4,
        "target": 0.2,
        "transformer": [{"T": 8, "q": 1, **reached}, {"T": 16, "q": 1, **missed}],
        "fcn": [
            {"T": 8, "q": 1, "width": 26, "params": 1070},
            {"T": 16, "q": 1, "width": 52, "params": 4000},
        ],
        "fit": [
            {
                "q": 1,
                "transformer": {
                    "slope_ln_T": estimate("b", 1.5, 1.0, 2.0),
                    "polylog_exponent": estimate("p", 1.5, 1.0, 2.0),
                    "exponent": estimate("alpha", 0.25, 0.1, None),
                    "held_out": None,
                },
                "fcn": {"exponent": 1.0, "slope": 3.25, "affine": True},
            }
        ],
    }
    table = select_table(summary)
    assert table.rows == (
        ("8", "1", "5 [4, 6]", "9 [8, 10]", "25 [16, 36]", "26", "1070"),
        ("16", "1", "n/a [7, inf]", "n/a [11, inf]", "n/a [49, inf]", "52", "4000"),
    )
    assert len(table.columns) == 7 and "d = 4" in table.title and "0.2 x uniform" in table.title
    note, inf, missing = table.notes  # the fit, then why "inf" and "n/a" are printed
    assert inf.startswith("inf: ") and missing.startswith("n/a: ")
    assert "q=1" in note and "p = 1.5 [1, 2]" in note and "alpha = 0.25 [0.1, inf]" in note
    assert "not tested (needs 4 values of T)" in note and "3.25 per T, exponent 1 (exact)" in note


SELECT = ("frontier", "select", "--T", "4,8,16", "--d", "2", "--q", "1,2", "--seeds", "3")


@pytest.fixture(scope="module")
def select_run(tmp_path_factory):
    """One small real ``frontier select`` into a fresh store: the store and the JSON."""
    store = tmp_path_factory.mktemp("select") / "s.sqlite"
    outcome = attnsep(*SELECT, "--store", str(store), "--json")
    assert outcome.returncode == 0, outcome.stderr
    return store, outcome.json()


def test_frontier_select_stores_its_jobs_and_reads_them_back(select_run, monkeypatch):
    store, report = select_run
    rows = Store(store).rows("separation-select")
    assert len(rows) == 6 and all(r["status"] == "done" for r in rows)  # one job per (T, q)

    def recomputed(*args, **kwargs):
        raise AssertionError("a stored job was computed again")

    monkeypatch.setattr("attnsep.train.selection_threshold.population_threshold", recomputed)
    again = attnsep(*SELECT, "--store", str(store), "--json")
    assert again.returncode == 0, again.stderr
    assert again.json() == report
    assert len(Store(store).rows("separation-select")) == 6
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = attnsep(*SELECT, "--store", str(store))
    assert code == 0, err
    body = [
        tuple(cell.strip() for cell in line.split("│")[1:-1])
        for line in out.splitlines()
        if line.startswith("│")
    ]
    assert body == list(select_table(report).rows)


def test_frontier_select_json_is_the_experiments_analysis(select_run):
    store, report = select_run
    records = [r for row in Store(store).rows("separation-select") for r in row["records"]]
    config = separation_select.config.Config(d=2, T_values=[4, 8, 16], q_values=[1, 2], seeds=3)
    series = separation_select.verdict.analyse(records, config)
    assert (report["d"], report["target"]) == (2, SELECTION_TARGET)
    assert sorted(series) == [f["q"] for f in report["fit"]] == [1, 2]
    for q, s in series.items():
        points = [p for p in report["transformer"] if p["q"] == q]
        assert [p["T"] for p in points] == [4, 8, 16]
        assert [p["width"] for p in points] == s["m"]
        assert [p["width_low"] for p in points] == s["low"]
        assert [p["width_high"] for p in points] == s["high"]
        searched = {r["T"]: r["m_star"] for r in records if r["q"] == q}
        for p in points:
            assert p["m_star"] == searched[p["T"]] == p["width"] - 2  # the bisection's answer
            assert p["m_star_low"] <= p["m_star"] <= p["m_star_high"]
            squares = (p["m_star"] ** 2, p["m_star_low"] ** 2, p["m_star_high"] ** 2)
            assert (p["params"], p["params_low"], p["params_high"]) == squares
        fcn = [f for f in report["fcn"] if f["q"] == q]
        bound = [separation_select.run.fcn_min_width(T, 2, q, SELECTION_TARGET) for T in (4, 8, 16)]
        assert [f["width"] for f in fcn] == s["fcn"] == bound
        assert all(f["params"] == count(3 * f["T"], f["width"], 2) for f in fcn)
        fit = next(f for f in report["fit"] if f["q"] == q)
        assert fit["transformer"]["slope_ln_T"]["value"] == pytest.approx(s["b"][0])
        assert fit["transformer"]["exponent"]["low"] == pytest.approx(s["alpha"][1])
        decided = None if s["comparison"] is None else s["comparison"]["decided"]
        assert fit["transformer"]["held_out"] == decided
        assert fit["fcn"]["affine"] == s["fcn_growth"]["affine"]


def test_frontier_select_failed_job_is_one_error_line(monkeypatch, tmp_path):
    def diverged(*args, **kwargs):
        raise RuntimeError("solver diverged")

    monkeypatch.setattr("attnsep.train.selection_threshold.population_threshold", diverged)
    store = str(tmp_path / "s.sqlite")
    code, out, err = attnsep("frontier", "select", "--T", "4,8,16", "--store", store)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "a job failed (RuntimeError: solver diverged)" in err


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["xor", "--d", "32,16"], "increasing"),
        (["xor", "--d", "16,x"], "comma-separated integers"),
        (["xor", "--seeds", "0"], "seeds must be an integer >= 1"),
        (["select", "--T", "4,8", "--q", "5"], "q must be < every T, got q=5 and T=4"),
        (["select", "--T", "4,8", "--q", "4"], "q must be < every T"),
        (["select", "--q", "2,1"], "q must be increasing"),
        (["select", "--T", "8,x"], "--T must be comma-separated integers"),
        (["select", "--seeds", "0"], "seeds must be an integer >= 1"),
    ],
)
def test_frontier_bad_input(args, needle):
    code, out, err = attnsep("frontier", *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and needle in err


def test_probe_record_has_its_interval():
    record = Probe(8, (True,) * 6 + (False,) * 2).as_record()
    assert record["rate"] == 0.75 and record["low"] < 0.75 < record["high"]


def test_frontier_select_refuses_an_unknown_solver(tmp_path):
    store = tmp_path / "s.sqlite"
    code, out, err = attnsep(*SELECT, "--solver", "adam", "--store", str(store))
    assert code == 2 and out == ""
    assert err == "error: solver must be one of law, population, sgd; got 'adam'\n"
    assert not store.exists()  # nothing half-written


def test_law_and_drawn_solvers_find_the_same_threshold():
    """The law evaluator and the direct draw estimate the same descent's loss: at ``T = 64, q =
    2`` (8 replicas each, their own Monte Carlo noise) their ``m_p*`` differ by at most a few
    units (measured: see the assertion's message)."""
    from attnsep.experiments.select_width.config import WidthSearch

    found = {}
    for solver in ("law", "population"):
        search = WidthSearch(T_values=[64], q_values=[2], seeds=8, samples=1024, solver=solver)
        record = search.threshold(64, 2, 4)
        found[solver] = record["m_star"]
        assert (record.get("evaluator") == "law") == (solver == "law")
    assert abs(found["law"] - found["population"]) <= 0.1 * found["population"] + 2, found


@pytest.mark.parametrize(("T", "d", "q"), [(4, 1, 1), (8, 16, 2), (64, 4, 4), (256, 16, 1)])
def test_fcn_min_width_by_bisection_is_the_linear_scan(T, d, q):
    limit = uniform_attention_loss(T, q, d) * SELECTION_TARGET_FRACTION
    scan = next(w for w in range(T * d + 1) if fcn_bottleneck_loss(T, q, d, w) <= limit)
    assert separation_select.run.fcn_min_width(T, d, q, SELECTION_TARGET) == scan
