"""A criterion's error rates, measured by simulation (SPEC Part E).

A verdict is a test of the paper, so it has a power and a false-pass rate like any test. For one
claim, ``Hypotheses`` simulates whole record sets at the preset's sizes, seeds and grid: once
from the paper's law and once from the rival it argues against, both fitted to a real run (an
exploratory one: the rates are pre-registered), with the replica noise read from its spread.
``error_rates`` runs the claim's own verdict on ``simulations`` draws of each and counts

* ``power = P(reproduced | paper's law)``,
* ``false_pass = P(reproduced | rival)``,
* ``false_fail = P(not reproduced | paper's law)``,

each with its 95% interval: the Wilson interval of the simulations, widened to the rate's range
over the redrawn parameters when they are redrawn (``parameter_spread``). ``calibrate`` adds,
when the preset misses the goals (power ``>= 0.8``, false pass ``<= 0.05``), the first of a list
of larger configs whose simulated rates meet them, so that the reason can name the sizes that
would.

The laws' parameters are uncertain too: a ``Hypotheses`` made by :func:`redrawable` draws new
ones every ``REDRAW_BLOCK`` simulated runs (a parametric bootstrap): it simulates the fitted
paper's law at the sizes it was fitted on and fits both laws again to that run, so the rates
cover what the fitted law, the noise level and the shares of collapsed or stuck replicas could
have been. An experiment whose simulators redraw every parameter themselves, from a bootstrap of
the real run, in each simulated run, says so (``redraws_itself``); its intervals then stay the
simulations' own. The rates
are computed once per criterion version, on an exploratory master seed, before any
confirmatory run (``fitting``; ``report.preregistration`` stores them).

The verdicts inside a simulation bootstrap with ``CALIBRATION_RESAMPLES`` draws (``stats.
resampling``), not the report's 1000: an interval's 2.5% quantile moves by a few hundredths of its
width, and the calibration runs hundreds of verdicts at report time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from statistics import NormalDist
from typing import Any

import numpy as np

from . import stats
from .laws import GrowthLaw, Law

SIMULATIONS = 200
"""Record sets simulated per hypothesis: a rate's Wilson interval is then about ``± 0.06``."""
CANDIDATE_SIMULATIONS = 100
"""Per hypothesis for each larger config tried when the preset misses the goals."""
CALIBRATION_RESAMPLES = 200
"""Bootstrap resamples of a verdict run on simulated records (module docstring)."""
POWER_GOAL = 0.8
FALSE_PASS_GOAL = 0.05

_simulating: ContextVar[bool] = ContextVar("simulating", default=False)
_fitting: ContextVar[bool] = ContextVar("fitting", default=False)
REDRAW_TRIES = 3
"""Fits tried per redraw before it falls back to the laws fitted on the real run."""
REDRAW_BLOCK = 5
"""Simulated runs per redraw of the laws' parameters: the rates' spread over the redraws is then
told apart from the simulations' own noise (``parameter_spread``)."""


@contextmanager
def fitting() -> Iterator[None]:
    """Within the block a verdict computes its companions' error rates
    (:func:`companion_rates`): how the rates are pre-registered on an exploratory run."""
    token = _fitting.set(True)
    try:
        yield
    finally:
        _fitting.reset(token)


def companion_rates(rates: Callable[[], dict[str, Any] | None]) -> dict[str, Any] | None:
    """A companion entry's error rates: ``rates()`` while pre-registering (:func:`fitting`),
    else ``None``: a judged run reads the pre-registered ones, never fits them to itself."""
    return rates() if _fitting.get() else None


def in_simulation() -> bool:
    """True while ``error_rates`` runs a verdict on simulated records: a verdict may then skip
    what only describes a run (figures of merit that do not decide its outcome)."""
    return _simulating.get()


@contextmanager
def simulating() -> Iterator[None]:
    """Within the block ``in_simulation()`` is True and bootstraps draw
    ``CALIBRATION_RESAMPLES``: how ``error_rates`` runs a verdict on simulated records."""
    token = _simulating.set(True)
    try:
        with stats.resampling(CALIBRATION_RESAMPLES):
            yield
    finally:
        _simulating.reset(token)


Records = list[dict[str, Any]]
Simulate = Callable[[Any, np.random.Generator], Records]
"""``(config, rng) -> records``: one simulated run of an experiment at ``config``'s sizes."""


@dataclass(frozen=True)
class Hypotheses:
    """The two laws a claim decides between, each able to simulate a run (SPEC Part E): the
    paper's law and the rival, fitted to the real records, with the real replica noise."""

    paper: Simulate
    rival: Simulate
    paper_law: str
    rival_law: str
    noise: str
    redraws_itself: bool = False
    """The simulators already redraw every fitted parameter (law, noise, shares) in each run,
    from a bootstrap of the real run: :func:`redrawable` then adds no second redraw."""
    refit: Callable[[Records], Hypotheses] | None = None
    """Both laws fitted again to a run (set by :func:`redrawable`); ``None``: parameters fixed."""
    fitted_at: Any = None
    """The config whose run the laws were fitted to."""

    def redraw(self, rng: np.random.Generator, failures: list[int]) -> Hypotheses:
        """Laws with parameters redrawn (module docstring): fitted again to a run simulated
        from the paper's law at ``fitted_at``; a run no fit succeeds on after ``REDRAW_TRIES``
        tries keeps these laws and is counted in ``failures``."""
        if self.refit is None:
            return self
        for _ in range(REDRAW_TRIES):
            try:
                return self.refit(self.paper(self.fitted_at, rng))
            except (ValueError, ZeroDivisionError, FloatingPointError):
                continue
        failures.append(1)
        return self


def redrawable(
    hypotheses: Callable[[Records, Any], Hypotheses], records: Records, config: Any
) -> Hypotheses:
    """``hypotheses(records, config)``, able to redraw its parameters (``Hypotheses.redraw``)."""
    laws = hypotheses(records, config)
    if laws.redraws_itself:
        return laws

    def refit(simulated: Records) -> Hypotheses:
        return replace(hypotheses(simulated, config), refit=None, fitted_at=config)

    return replace(
        laws,
        refit=refit,
        fitted_at=config,
        noise=laws.noise + "; every simulated run redraws the fitted parameters (both laws "
        "fitted again to a run simulated from the paper's law at the fitted sizes)",
    )


def rate(outcomes: Sequence[bool], block: int = 1) -> dict[str, Any]:
    """A simulated rate with its 95% interval: the Wilson interval of the simulations, widened to
    cover the spread of the rate over the redrawn parameters (:func:`parameter_spread`) when the
    simulations come in ``block``-long runs of shared parameters."""
    successes, trials = int(sum(outcomes)), len(outcomes)
    low, high = stats.wilson(successes, trials)
    spread = parameter_spread(outcomes, block) if block > 1 else None
    if spread is not None:
        low, high = min(low, spread[0]), max(high, spread[1])
    return {"value": successes / trials, "low": low, "high": high}


def parameter_spread(outcomes: Sequence[bool], block: int) -> tuple[float, float] | None:
    """The 95% range of a rate over the parameters' bootstrap distribution, from simulations in
    consecutive ``block``-long runs that share one redraw: the variance of the true rate between
    redraws is the variance of the block means less their binomial part, and the range is that
    of a beta law with the rates' mean and this variance (``None``: the block means vary no more
    than binomial noise would, within two standard errors)."""
    means = np.asarray(outcomes[: len(outcomes) // block * block], dtype=float)
    means = means.reshape(-1, block).mean(axis=1)
    if len(means) < 2:
        return None
    mean = float(means.mean())
    binomial = mean * (1 - mean) / block
    observed = float(means.var(ddof=1))
    if mean in (0.0, 1.0) or observed <= binomial * (1 + 2 * math.sqrt(2 / (len(means) - 1))):
        return None  # not beyond the binomial noise by two standard errors of a variance
    between = (observed - binomial) / (1 - 1 / block)
    between = min(between, 0.999 * mean * (1 - mean))
    total = mean * (1 - mean) / between - 1
    draws = np.random.default_rng(0).beta(mean * total, (1 - mean) * total, 20_000)
    return float(np.quantile(draws, 0.025)), float(np.quantile(draws, 0.975))


def error_rates(
    decide: Callable[[Records], str],
    paper: Callable[[np.random.Generator], Records],
    rival: Callable[[np.random.Generator], Records],
    simulations: int = SIMULATIONS,
    seed: int = 0,
    block: int = 1,
) -> dict[str, Any]:
    """Power, false pass and false fail of ``decide`` (records -> verdict) on ``simulations``
    record sets drawn by ``paper`` and by ``rival`` (independent streams of ``seed``); a check's
    ``confirmed`` counts as a pass and ``check failed`` as a fail (``stats.PASSES``, ``FAILS``).
    ``block``: how many consecutive draws share one redraw of the laws' parameters (``rate``)."""
    streams = np.random.SeedSequence([seed, 7177]).spawn(2)
    outcomes: dict[str, list[str]] = {}
    with simulating():
        pairs = zip((("paper", paper), ("rival", rival)), streams, strict=True)
        for (name, draw), stream in pairs:
            rng = np.random.default_rng(stream)
            outcomes[name] = [decide(draw(rng)) for _ in range(simulations)]

    def measured(name: str, verdicts: tuple[str, ...]) -> dict[str, Any]:
        return rate([outcome in verdicts for outcome in outcomes[name]], block)

    power = measured("paper", stats.PASSES)
    false_pass = measured("rival", stats.PASSES)
    false_fail = measured("paper", stats.FAILS)
    return {
        "power": power["value"],
        "false_pass": false_pass["value"],
        "false_fail": false_fail["value"],
        "intervals": {
            "power": [power["low"], power["high"]],
            "false_pass": [false_pass["low"], false_pass["high"]],
            "false_fail": [false_fail["low"], false_fail["high"]],
        },
        "simulations": simulations,
        "meets": meets(power["value"], false_pass["value"]),
    }


def meets(power: float, false_pass: float) -> bool:
    """SPEC Part E's goals at ``standard``: power ``>= 0.8`` and false pass ``<= 0.05``."""
    return power >= POWER_GOAL and false_pass <= FALSE_PASS_GOAL


def calibrate(
    verdict: Callable[[Records, Any], dict[str, Any]],
    hypotheses: Hypotheses,
    config: Any,
    candidates: Sequence[tuple[str, Any]] = (),
    simulations: int = SIMULATIONS,
    seed: int = 0,
) -> dict[str, Any]:
    """The claim's ``calibration`` entry: ``error_rates`` at ``config``, the laws simulated and,
    when the goals are missed, ``would_meet``: the label of the first of ``candidates`` (label,
    larger config) whose simulated rates meet them (``None`` when none does)."""

    failures: list[int] = []
    block = REDRAW_BLOCK if hypotheses.refit is not None else 1

    def law(side: str, cfg: Any) -> Callable[[np.random.Generator], Records]:
        """``side``'s simulator at ``cfg``, its laws redrawn every ``block`` runs."""
        laws: list[Hypotheses] = []  # one per redraw
        done = [0]  # runs drawn

        def draw(rng: np.random.Generator) -> Records:
            if done[0] % block == 0:
                laws.append(hypotheses.redraw(rng, failures))
            done[0] += 1
            return getattr(laws[-1], side)(cfg, rng)

        return draw

    def rates_at(cfg: Any, sims: int) -> dict[str, Any]:
        return error_rates(
            lambda records: verdict(records, cfg)["verdict"],
            law("paper", cfg),
            law("rival", cfg),
            sims,
            seed,
            block,
        )

    out = rates_at(config, simulations)
    out.update(paper_law=hypotheses.paper_law, rival_law=hypotheses.rival_law)
    out["noise"] = hypotheses.noise
    out["redrawn"] = hypotheses.refit is not None or hypotheses.redraws_itself
    out["redraw_failures"] = len(failures)  # at the config itself
    if not out["meets"]:
        out["would_meet"] = None
        out["tried"] = []
        for label, cfg in candidates:
            tried = rates_at(cfg, CANDIDATE_SIMULATIONS)
            out["tried"].append(
                {"config": label, "power": tried["power"], "false_pass": tried["false_pass"]}
            )
            if tried["meets"]:
                out["would_meet"] = label
                break
    return out


def named_in(reason: str, calibration: dict[str, Any] | None) -> str:
    """``reason`` with the error rates (``summary``) appended when they miss the goals."""
    if not calibration or calibration["meets"]:
        return reason
    return reason.rstrip(".") + "; the criterion's " + summary(calibration)


def summary(calibration: dict[str, Any] | None) -> str:
    """One sentence for a claim's reason: the rates, and what would meet the goals."""
    if not calibration:
        return ""
    text = (
        f"power {calibration['power']:.2f}, false pass {calibration['false_pass']:.2f}, "
        f"false fail {calibration['false_fail']:.2f} ({calibration['simulations']} simulations "
        "per law)"
    )
    if calibration["meets"]:
        return text
    text += f"; below the goals (power >= {POWER_GOAL}, false pass <= {FALSE_PASS_GOAL})"
    if "would_meet" not in calibration:
        return text
    if calibration["would_meet"]:
        return text + f"; simulated at {calibration['would_meet']} they are met"
    tried = ", ".join(t["config"] for t in calibration.get("tried", []))
    return text + (f"; not met at {tried} either" if tried else "")


# --- simulating thresholds -----------------------------------------------------------------


def replica_thresholds(
    value: float, spread: float, replicas: int, target: float, rng: np.random.Generator
) -> np.ndarray:
    """Per-replica thresholds, log-normal with log-spread ``spread``, whose ``target`` quantile
    is ``value``: a probe at ``value`` passes in a fraction ``target`` of replicas on average."""
    shift = NormalDist().inv_cdf(target) if 0 < target < 1 else 0.0
    return value * np.exp(spread * (rng.standard_normal(replicas) - shift))


def log_spread(
    probe_sets: Sequence[tuple[Sequence[float], np.ndarray]], floor: float = 0.01
) -> float:
    """The replica noise of a run of threshold searches: the median over searches of the
    standard deviation of ``ln`` (each replica's smallest passing probe), from stored ``(sizes,
    replicas x probes outcomes)``; replicas that pass no probe are left out. At least ``floor``."""
    spreads = []
    for sizes, outcomes in probe_sets:
        order = np.argsort(sizes)
        s, table = np.asarray(sizes, dtype=float)[order], np.asarray(outcomes, dtype=bool)[:, order]
        passed = table.any(axis=1)
        if passed.sum() >= 2:
            first = s[table[passed].argmax(axis=1)]
            spreads.append(float(np.std(np.log(first), ddof=1)))
    return max(floor, float(np.median(spreads))) if spreads else floor


def fitted_value(law: GrowthLaw, params: Sequence[float], x: float) -> float:
    """``law`` at ``x`` (a finite positive number, else ``nan``)."""
    y = float(law.predict(params, [x])[0])
    return y if math.isfinite(y) and y > 0 else math.nan


def fit_or_flat(
    law: Law, ds: list[float], values: list[float], min_exponent: float | None = None
) -> tuple[float, ...]:
    """``law`` (a power or polylog law) fitted to the finite ``values`` at ``ds``; with fewer
    than two, through the one there is (or 1 at ``d = 2``) with exponent ``min_exponent`` (or
    0): the law a simulation follows where a run measured too little (SPEC Part E)."""
    keep = [(d, v) for d, v in zip(ds, values, strict=True) if math.isfinite(v)]
    if len(keep) >= 2:
        xs, ys = zip(*keep, strict=True)
        return law.fit(xs, ys, min_exponent)
    level = math.log(keep[0][1]) if keep else 0.0
    slope = min_exponent or 0.0
    mid = law.x_form(np.array([keep[0][0] if keep else 2.0]))[0]
    return level - slope * float(mid), slope
