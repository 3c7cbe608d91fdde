"""SPEC Part E: every simulated run of a calibration redraws the laws' fitted parameters.

Per experiment with hypotheses, a run made by its own simulator (or small synthetic records):
the redraw succeeds with no failure, the redrawn parameters vary by about their sampling error,
and the shares real runs show (collapsed, stuck replicas, the success plateau) and the replica
noise are re-estimated in each redraw, centred on the fitted ones. Experiments whose simulators
redraw every parameter from a bootstrap of the run (``Hypotheses.redraws_itself``) are checked
on the parameters each simulated run draws; the others on the laws fitted again to a run
simulated from the paper's law (``calibration.redrawable``).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from attnsep.experiments import (
    fcn_selection,
    select_convergence,
    select_width,
    separation_xor,
    xor_attention_maps,
    xor_heads,
    xor_one_step,
    xor_samples,
    xor_width,
)
from attnsep.experiments import select_length as length
from attnsep.experiments import xor_thresholds as xt
from attnsep.experiments.select_convergence import paper as paper_setting
from attnsep.experiments.select_length import convergence as in_distribution
from attnsep.experiments.select_length import corollary_calibration as corollary
from attnsep.experiments.xor_attention_maps import calibration as maps_calibration
from attnsep.experiments.xor_samples import search as sample_search
from attnsep.metrics import calibration, stats
from attnsep.train.search import probe_matrix

REDRAWS = 40


def spy(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[tuple]:
    """The positional arguments of every later call of ``module.name``, its result last."""
    calls: list[tuple] = []
    original = getattr(module, name)

    def recorded(*args, **kwargs):
        result = original(*args, **kwargs)
        calls.append((*args, result))
        return result

    monkeypatch.setattr(module, name, recorded)
    return calls


def redrawn(hypotheses, records, config, n: int = REDRAWS) -> list[calibration.Hypotheses]:
    """``n`` redraws of the laws fitted to ``records`` (both fitted again to a run simulated from
    the paper's law); none may fail."""
    laws = calibration.redrawable(hypotheses, records, config)
    assert laws.refit is not None and not laws.redraws_itself
    rng, failures = np.random.default_rng(1), []
    with calibration.simulating():
        out = [laws.redraw(rng, failures) for _ in range(n)]
    assert failures == []
    return out


def itself(hypotheses, records, config) -> calibration.Hypotheses:
    """Laws whose simulators redraw every parameter: ``redrawable`` adds no refit."""
    laws = calibration.redrawable(hypotheses, records, config)
    assert laws.redraws_itself and laws.refit is None
    return laws


def centred(values, expected: float, se: float | None = None) -> None:
    """``values`` vary (s.d. > 0) and average near ``expected``: within 4 standard errors of
    their mean (``se``: the s.d. expected, when known; the s.d. is then within a factor 2)."""
    v = np.asarray(values, dtype=float)
    assert v.std() > 0, v
    sd = v.std(ddof=1) if se is None else se
    assert abs(v.mean() - expected) <= 4 * sd / math.sqrt(len(v)) + 1e-12, (v.mean(), expected)
    if se is not None:
        assert se / 2 < v.std(ddof=1) < 2 * se, (v.std(ddof=1), se)


def number(pattern: str, text: str) -> float:
    return float(re.search(pattern, text).group(1))


# --- A7.1: success rates and the collapse share ---------------------------------------------


def test_one_step_redraws_the_rates_and_the_collapse_share(monkeypatch):
    """A run at 400 seeds per d, success 0.7, collapses 0.3 of the failures: each redraw's rates
    and collapse share are a refit to a simulated run, binomial around the fitted ones."""
    config = xor_one_step.config.Config(d_values=[64, 256, 1024], seeds=400)
    real = xor_one_step.calibration.simulated_schedule(
        config, np.random.default_rng(0), lambda d: 0.7, 0.3
    )
    failures = sum(r["seeds"] - r["successes"] for r in real)
    share = sum(r["collapses"] for r in real) / failures
    calls = spy(monkeypatch, xor_one_step.calibration, "simulated_schedule")
    rng = np.random.default_rng(2)
    for laws in redrawn(xor_one_step.calibration.hypotheses, real, config, 100):
        laws.paper(config, rng)
    rates = [c[2](64) for c in calls]
    centred(rates, real[0]["rate"], math.sqrt(0.7 * 0.3 / 400))
    centred([c[3] for c in calls], share, math.sqrt(share * (1 - share) / failures))


# --- A7.2, A7.6: thresholds with a success plateau, redrawn inside each simulated run --------


def plateau_and_spread(records: list[dict]) -> tuple[float, float, float]:
    successes, trials = xt.plateau_of(records)
    spread = calibration.log_spread([probe_matrix(r["probes"]) for r in records])
    return successes / trials, trials, spread


def check_threshold_draws(laws, config, records, monkeypatch) -> None:
    """Each simulated run draws its law, its log-spread and its plateau anew: the plateau
    binomially around the pooled one, the log-spread near the run's."""
    plateau, trials, spread = plateau_and_spread(records)
    latent = spy(monkeypatch, calibration, "replica_thresholds")
    failing = spy(monkeypatch, xt, "plateau_failures")
    rng = np.random.default_rng(3)
    with calibration.simulating():
        for _ in range(30):
            laws.paper(config, rng)
    sizes = len(config.d_values)
    runs = [latent[i : i + sizes] for i in range(0, len(latent), sizes)]
    assert len(runs) == 30
    spreads = [run[0][1] for run in runs]
    assert all(len({c[1] for c in run}) == 1 for run in runs)  # one log-spread per run
    centred(spreads, spread)
    assert np.std(spreads) < 0.3 * spread
    values = [run[-1][0] for run in runs]  # the law at the largest d
    assert np.std(values) > 0
    centred([c[1] for c in failing[::sizes]], plateau, math.sqrt(plateau * (1 - plateau) / trials))


def test_polylog_width_redraws_law_spread_and_plateau(monkeypatch):
    config = xor_width.EXPERIMENT.config("quick", seeds=64)
    rng = np.random.default_rng(0)
    real = [
        xor_width.calibration.simulated_search(config, d, 3.0 * math.log(d), 0.3, 0.95, rng)
        for d in config.d_values
    ]
    with stats.resampling(200):
        laws = itself(xor_width.calibration.hypotheses, real, config)
    assert "redrawn per run" in laws.noise
    check_threshold_draws(laws, config, real, monkeypatch)


def test_separation_xor_redraws_law_spread_and_plateau(monkeypatch):
    config = separation_xor.EXPERIMENT.config("quick", seeds=64)
    rng = np.random.default_rng(0)
    real = []
    for d in config.d_values:
        latent = calibration.replica_thresholds(
            4.0 * math.log(d), 0.3, config.seeds, xt.TARGET / 0.95, rng
        )
        real.append(xt.simulated_search("transformer", d, latent, 0.95, rng))
    with stats.resampling(200):
        laws = itself(separation_xor.calibration.hypotheses, real, config)
    check_threshold_draws(laws, config, real, monkeypatch)


# --- A7.5: stuck replicas -------------------------------------------------------------------


def test_finite_samples_redraws_law_spread_rates_and_the_stuck_share(monkeypatch):
    """A run with a tenth of the population successes stuck at every d: each simulated run of
    the paper draws its law, log-spread and population rates anew, and its stuck replicas at a
    share whose average is the measured one (its Jeffreys posterior mean)."""
    config = xor_samples.config.Config(d_values=[16, 32, 64], seeds=128, n_max=2**30)
    rates = {d: (0.9, 0, 100) for d in config.d_values}
    searches = sample_search.simulate(
        lambda d: 20.0 * d**2, 0.5, rates, config, np.random.default_rng(0), share=0.1
    )
    real = sample_search.run_records(searches, "fixed", config.m)
    measured = [sample_search.stuck_rate(r) for r in searches]
    with stats.resampling(200):
        laws = itself(xor_samples.calibration.hypotheses, real, config)
    calls = spy(monkeypatch, xor_samples.calibration, "simulate")
    rng, shares = np.random.default_rng(4), []
    with calibration.simulating():
        for _ in range(60):
            run = sample_search.series(laws.paper(config, rng))
            shares.append([sample_search.stuck_rate(r)["rate"] for r in run])
    law, spread, drawn = zip(*(c[:3] for c in calls), strict=True)
    assert np.std([f(64) for f in law]) > 0
    centred(spread, calibration.log_spread([probe_matrix(r["probes"]) for r in searches]))
    population = searches[0]["population"]["rate"]
    centred([r[16][0] for r in drawn], population, math.sqrt(population * (1 - population) / 128))
    for column, s in zip(np.array(shares).T, measured, strict=True):
        centred(column, (s["stuck"] + 0.5) / (s["trials"] + 1))
        assert column.std() > math.sqrt(0.1 * 0.9 / s["trials"])  # wider than a fixed share


# --- A7.3, A7.4 -----------------------------------------------------------------------------


def test_attention_maps_redraws_every_maps_rates(monkeypatch):
    """Softmax, linear and erf at a judged size (m >= d): each redraw's one-step, specialization
    and collapse rates are a refit to a simulated run."""
    config = xor_attention_maps.EXPERIMENT.config("quick", seeds=128)
    size = (config.d, config.m)
    rng = np.random.default_rng(0)
    law = {
        "softmax": {"one": 0.95, "spec": 0.9, "coll": 0.05, "later": [2, 3], "ceiling": [0.9]},
        "linear": {"one": 0.0, "spec": 0.3, "coll": 0.4, "later": [5, 9], "ceiling": [0.2]},
        "erf": {"one": 0.0, "spec": 0.1, "coll": 0.2, "later": [None], "ceiling": [0.01]},
    }
    real = [maps_calibration.simulated_record(n, size, v, config, rng) for n, v in law.items()]
    measured = maps_calibration.measured_rates(real[1])
    calls = spy(monkeypatch, maps_calibration, "simulated_record")
    for laws in redrawn(maps_calibration.hypotheses, real, config):
        laws.paper(config, rng)
    linear = [c[2] for c in calls if c[0] == "linear"]
    n = config.seeds
    for key in ("spec", "coll"):
        p = measured[key]
        centred([v[key] for v in linear], p, math.sqrt(p * (1 - p) / n))
    softmax = [c[2]["spec"] for c in calls if c[0] == "softmax"]
    assert np.std(softmax) > 0


def heads_summary(series: str, init: str, d: int, m: int, seeds: int, rate: float, rng) -> dict:
    hits = int(rng.binomial(seeds, rate))
    collapses = int(rng.binomial(seeds - hits, 0.4))
    ratios = 1.5 + 0.2 * rng.standard_normal(seeds)
    return xor_heads.calibration.summary_record(series, init, d, m, hits, collapses, ratios, hits)


def test_head_specialization_redraws_rates_medians_and_the_collapse_share(monkeypatch):
    config = xor_heads.EXPERIMENT.config("quick", seeds=256, seeds_schedule=256)
    rng = np.random.default_rng(0)
    real = [
        heads_summary(series, init, d, m, seeds, 0.9, rng)
        for series, d, m, seeds in xor_heads.run.points(config)
        for init in config.inits
    ]
    calls = spy(monkeypatch, xor_heads.calibration, "simulated_run")
    for laws in redrawn(xor_heads.calibration.hypotheses, real, config):
        laws.paper(config, rng)
    fixed, aligned = ("fixed", "antisymmetric"), ("schedule", "antisymmetric")
    d = config.d_values[0]
    first = next(r for r in real if (r["series"], r["init"], r["d"]) == (*fixed, d))
    centred([c[2][fixed](d) for c in calls], first["on_target_rate"], math.sqrt(0.09 / 256))
    medians = [c[3][aligned](config.schedule_d_values[0]) for c in calls]
    assert np.std(medians) > 0
    shares = []
    for c in calls:  # the collapse share each redraw simulates from: its refit's records
        near = c[4][fixed][0]
        shares.append(near["collapses"] / (near["seeds"] - near["on_target"]))
    misses = first["seeds"] - first["on_target"]
    share = first["collapses"] / misses
    centred(shares, share, math.sqrt(share * (1 - share) / misses))


# --- B5.1, B5.1b ----------------------------------------------------------------------------


def test_select_convergence_redraws_the_floor_and_the_noise():
    config = select_convergence.EXPERIMENT.config("quick", seeds=list(range(8)))
    rng = np.random.default_rng(0)
    uniform = config.d * (config.T - config.q) / (config.q * config.T)
    real = []
    for m in config.pe_dims:
        for seed in config.seeds:
            floor = 2.0 * m**-0.7 * (1 + 0.02 * rng.standard_normal())
            loss = floor * (1 + 0.05 * rng.standard_normal())
            cos = 0.99 + 0.002 * rng.standard_normal()
            real.append(
                {"pe_dim": m, "seed": seed, "loss": loss, "family": floor, "cos": cos,
                 "uniform": uniform, "path": "exact"}
            )  # fmt: skip
    fitted = select_convergence.calibration.hypotheses(real, config)
    beta = number(r"beta = ([\d.]+)", fitted.paper_law)
    noise = number(r"trained loss ([\d.]+)", fitted.noise)
    laws = redrawn(select_convergence.calibration.hypotheses, real, config)
    centred([number(r"beta = ([\d.]+)", h.paper_law) for h in laws], beta)
    centred([number(r"trained loss ([\d.]+)", h.noise) for h in laws], noise)


def test_select_convergence_paper_setting_redraws_the_noise_and_alpha():
    config = select_convergence.EXPERIMENT.config("quick", seeds=list(range(8)))
    rng = np.random.default_rng(0)
    real = []
    for m in config.paper_widths:
        for seed in config.seeds:
            family = 2.0 * m**-0.7 * (1 + 0.02 * rng.standard_normal())
            real.append(
                {"role": paper_setting.ROLE, "pe_dim": m, "seed": seed,
                 "steps": paper_setting.steps(config, m), "stderr": 0.0, "uniform": 1.0,
                 "loss": family * (1.05 + 0.05 * rng.standard_normal()), "cos": 1.0,
                 "alpha": 0.97 + 0.02 * rng.standard_normal(), "family_alpha": 1.0,
                 "off_identity": 0.0, "content_norm": 0.0, "family": family}
            )  # fmt: skip
    fitted = paper_setting.hypotheses(real, config)
    pattern = r"alpha / family's alpha ([\d.]+)"
    laws = redrawn(paper_setting.hypotheses, real, config)
    centred([number(pattern, h.noise) for h in laws], number(pattern, fitted.noise))
    pattern = r"SGD's loss ([\d.]+)"
    centred([number(pattern, h.noise) for h in laws], number(pattern, fitted.noise))


# --- B5.2 -----------------------------------------------------------------------------------


def test_select_width_redraws_its_laws_and_the_spread(monkeypatch):
    config = select_width.EXPERIMENT.config("quick", seeds=16)
    rng = np.random.default_rng(0)
    law = select_width.calibration.SeriesLaws((2.0, 3.0, 1.0), (0.0, 0.5), 0.08)
    real = [
        select_width.calibration.simulated_record(T, q, d, law, "paper", config, rng)
        for q in config.q_values
        for d in config.d_values
        for T in config.T_values
    ]
    laws = itself(select_width.calibration.hypotheses, real, config)
    spread = calibration.log_spread([probe_matrix(r["probes"]) for r in real])
    calls = spy(monkeypatch, select_width.calibration, "simulated_search")
    with calibration.simulating():
        for _ in range(30):
            laws.paper(config, rng)
    cells = len(config.d_values) * len(config.T_values)
    runs = [calls[i : i + cells] for i in range(0, len(calls), cells)]
    centred([run[0][1] for run in runs], spread)
    assert np.std([run[-1][0] for run in runs]) > 0  # the law at the largest T


# --- B5.3, B5.3b, B5.3c ---------------------------------------------------------------------


def length_run(config, rng) -> list[dict]:
    """B5.3's records with B5.3b's training curves (fixed PE converging in 3x the steps) and
    B5.3c's, from the experiments' own simulators."""
    factors = np.asarray(config.factors, dtype=float)
    curves = {
        "stochastic": (0.1 * factors**0.3, np.full(len(factors), 0.03)),
        "fixed": (0.2 * factors, np.full(len(factors), 0.05)),
        "family": (0.08 * factors**0.2, np.full(len(factors), 0.01)),
        "at_train_alpha": (0.1 * factors**0.3, np.full(len(factors), 0.02)),
    }
    records = length.calibration._simulate(config, rng, curves)
    for r in records:
        if r["T"] == config.T and r["pe"] in ("stochastic", "fixed"):
            needed = (30.0 if r["pe"] == "stochastic" else 90.0) * math.exp(0.1 * rng.normal())
            r["step_losses"] = in_distribution.curve_read_as(0.1, needed, config.steps)
    widths = np.asarray(config.corollary_widths, dtype=float)
    shape = {k: 0.5 * (widths / widths[0]) ** -0.5 for k in corollary.KINDS}
    noise = {k: np.full(len(widths), 0.03) for k in corollary.KINDS}
    return records + corollary._simulate(config, rng, shape, noise)


@pytest.fixture(scope="module")
def length_setup():
    config = length.EXPERIMENT.config("quick", seeds=list(range(8)))
    return config, length_run(config, np.random.default_rng(0))


def test_length_generalization_redraws_levels_and_spreads(length_setup, monkeypatch):
    config, real = length_setup
    calls = spy(monkeypatch, length.calibration, "_simulate")
    rng = np.random.default_rng(5)
    for laws in redrawn(length.calibration.hypotheses, real, config):
        laws.paper(config, rng)
    fitted = length.calibration.measured_profile(real, config.T)
    stochastic = [c[2]["stochastic"][0][-1] for c in calls]  # at the family's level (paper)
    centred(stochastic, fitted["at_train_alpha"][1][-1])
    centred([c[2]["fixed"][1][0] for c in calls], fitted["fixed"][2][0])


def test_in_distribution_redraws_the_steps_and_the_measured_rival(length_setup, monkeypatch):
    """B5.3b: each simulated run redraws the mean steps, their spread and the rival's ratio from
    a bootstrap of the seeds; the rival stays the measured ratio (about 3, outside the band),
    which a run simulated from the paper's law (ratio 1) would not carry. Its error rates count
    no redraw failure; a refit to its simulated run at ``T`` alone also succeeds."""
    config, real = length_setup
    laws = itself(length.calibration.in_distribution_hypotheses, real, config)
    measured = in_distribution.convergence(real)["ratio"]["value"]
    calls = spy(monkeypatch, in_distribution, "fitted")
    rng = np.random.default_rng(6)
    with calibration.simulating():
        for _ in range(REDRAWS):
            laws.rival(config, rng)
    centred([c[-1]["rival"] for c in calls], measured)
    assert np.std([c[-1]["base"] for c in calls]) > 0
    assert np.std([c[-1]["spread"]["fixed"] for c in calls]) > 0
    refit = length.calibration.in_distribution_hypotheses(laws.paper(config, rng), config)
    assert "ratio 1" in refit.paper_law
    rates = length.calibration.calibrate_in_distribution(real, config, 20)
    assert rates["redrawn"] and rates["redraw_failures"] == 0


def test_corollary_redraws_its_exponent_and_spreads(length_setup):
    config, real = length_setup
    pattern = r"fitted b = (-?[\d.]+)"
    fitted = corollary.hypotheses(real, config)
    laws = redrawn(corollary.hypotheses, real, config)
    centred([number(pattern, h.paper_law) for h in laws], number(pattern, fitted.paper_law))


# --- B5.4 -----------------------------------------------------------------------------------


def test_fcn_selection_redraws_the_replica_spread():
    from attnsep.exact.selection_bounds import fcn_bottleneck_loss, uniform_attention_loss

    config = fcn_selection.config.Config(fcn_replicas=6)
    rng = np.random.default_rng(0)
    real = []
    for setting in config.settings:
        T, d, q = setting
        uniform = float(uniform_attention_loss(T, q, d))
        for w in fcn_selection.config.widths(setting, config.width_fractions):
            floor = float(fcn_bottleneck_loss(T, q, d, w))
            for e in range(config.fcn_replicas):
                loss = max(floor, 0.1 * uniform) * 1.5 * math.exp(0.05 * rng.normal())
                real.append(
                    fcn_selection.run.fcn_record(setting, w, e, loss, 0.01 * loss, floor, uniform)
                )
    pattern = r"replica spread ([\d.]+)"
    fitted = number(pattern, fcn_selection.calibration.hypotheses(real, config).noise)
    laws = redrawn(fcn_selection.calibration.hypotheses, real, config)
    centred([number(pattern, h.noise) for h in laws], fitted)
