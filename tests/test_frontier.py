"""Threshold search, the sparse-XOR sign error and the measured separation (SPEC A7.2, A7.6,
Part C)."""

from __future__ import annotations

import itertools
import json
import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from attnsep import api, frontier
from attnsep.engine.store import Store
from attnsep.exact.selection import fcn_bottleneck_loss, uniform_attention_loss
from attnsep.metrics.parity import sign_error
from attnsep.metrics.stats import threshold_draws
from attnsep.models.mlp import count
from attnsep.models.query_heads import QueryHeads, head_product
from attnsep.one_step import OneStepConfig, run_one_step
from attnsep.rng import generator
from attnsep.search import Probe, probe_matrix, smallest_passing
from attnsep.tasks.parity import SparseParity
from cli_support import attnsep


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


def test_growth_ignores_sizes_without_a_threshold():
    points = [{"d": 16, "params": 10}, {"d": 32, "params": 20}, {"d": 64, "params": None}]
    fit = frontier.growth(points)
    assert fit["loglog_slope"] == pytest.approx(1.0)
    assert frontier.growth(points[:1]) == {"loglog_slope": None, "log_power": None}


def test_transformer_threshold_is_bracketed_by_its_probes():
    point = frontier.transformer_xor(64, seeds=16, seed=0)
    star = point["m_star"]
    assert star is not None and point["params"] == 2 * star
    rates = {p["size"]: p["rate"] for p in point["probes"]}
    assert rates[star] >= frontier.TARGET
    if star > 2:  # bisection leaves the size below the threshold probed and failing
        assert rates[star - 1] < frontier.TARGET
    assert {2 * star, 4 * star} <= set(rates)  # the confirmation probes
    assert all(len(p["outcomes"]) == 16 for p in point["probes"])
    assert point["success_low"] <= point["success_rate"] <= point["success_high"]
    assert point["test_samples"] == frontier.TEST_SAMPLES == 8192


def test_fcn_threshold_counts_parameters_and_needs_more_than_one_unit():
    point = frontier.fcn_xor(8, seeds=4, seed=0, steps=500)
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
    errors = frontier.transformer_sign_error(result, samples=2048)
    certified = result.certified_error < 1
    assert certified.any() and (~certified).any()
    gamma = QueryHeads(torch.from_numpy(result.embeddings)).weights(
        torch.from_numpy(result.theta_after)
    )
    gens = [generator(0, e, "one-step-test") for e in range(24)]
    direct = sign_error(gamma, torch.from_numpy(result.support), -1, 2048, gens).numpy()
    assert np.array_equal(errors, direct)
    assert (direct[certified] == 0).all()


def test_select_thresholds_at_tiny_sizes():
    fcn = frontier.fcn_select(4, d=1, q=1, seeds=2, width_limit=64, steps=1000)
    transformer = frontier.transformer_select(4, d=1, q=1, seeds=2, m_limit=64, steps=300)
    for point, knob in ((fcn, "width_star"), (transformer, "m_star")):
        assert point[knob] is not None
        assert point["success_rate"] >= frontier.FCN_TARGET
    assert transformer["params"] == transformer["m_star"] ** 2
    assert fcn["params"] == count(4 * 1 + 4, fcn["width_star"], 1)
    # a theorem (SPEC B4): no trained net reaches the target below the proven width
    assert fcn["width_star"] >= frontier.fcn_select_bound(4, 1, 1)["width_star"]


def test_fcn_select_bound_is_the_first_width_whose_least_loss_reaches_the_target():
    bound = frontier.fcn_select_bound(16, 2, 1)
    assert bound == {"T": 16, "width_star": 26, "params": count(16 * 2 + 16, 26, 2)}
    limit = 0.2 * float(uniform_attention_loss(16, 1, 2))
    assert (
        float(fcn_bottleneck_loss(16, 1, 2, 26)) <= limit < float(fcn_bottleneck_loss(16, 1, 2, 25))
    )
    widths = [frontier.fcn_select_bound(T, 4, 1)["width_star"] for T in (4, 8, 16)]
    assert all(0.8 * T * 4 <= w <= T * 4 for w, T in zip(widths, (4, 8, 16), strict=True))


def test_combine_takes_the_median_group_and_the_range():
    groups = [
        {"d": 16, "width_star": w, "params": p, "success_rate": r}
        for w, p, r in ((5, 91, 1.0), (3, 55, 0.875), (4, 73, 1.0), (3, 55, 1.0))
    ]
    point = frontier.combine(groups)
    assert (point["width_star"], point["params"], point["success_rate"]) == (3, 55, 0.875)
    assert (point["params_low"], point["params_high"], point["groups"]) == (55, 91, 4)
    assert frontier.combine(groups[:3])["params"] == 73
    missed = frontier.combine([*groups, {**groups[0], "width_star": None, "params": None}])
    assert missed["params"] is None and missed["params_high"] == 91


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
                assert p["params"] == frontier.xor_params(model, p["d"], p[knob])
        assert set(report["fit"][model]["exponent"]) == {"name", "value", "low", "high"}


def test_frontier_xor_table_shows_intervals(monkeypatch, tmp_path):
    summary = frontier.xor_summary(
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
    monkeypatch.setattr(frontier, "xor_summary", lambda records: summary)
    monkeypatch.setattr(api, "run_experiment", lambda *a, **k: SimpleNamespace(rows=[], records=[]))
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = attnsep("frontier", "xor", "--d", "16,32", "--store", str(tmp_path / "s"))
    assert code == 0, err
    assert "3 [3, 3]" in out and "103 [103, 103]" in out  # FCN width 3 at d=32: 3·34+1
    assert "exponent of params vs d" in out


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["xor", "--d", "32,16"], "increasing"),
        (["xor", "--d", "16,x"], "comma-separated integers"),
        (["xor", "--seeds", "0"], "seeds must be an integer >= 1"),
        (["select", "--groups", "0"], "groups must be an integer >= 1"),
        (["select", "--T", "4,8", "--q", "5"], "q must be <= every T"),
    ],
)
def test_frontier_bad_input(args, needle):
    code, out, err = attnsep("frontier", *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and needle in err


def test_probe_record_has_its_interval():
    record = Probe(8, (True,) * 6 + (False,) * 2).as_record()
    assert record["rate"] == 0.75 and record["low"] < 0.75 < record["high"]
