"""A1.k's jobs and records: one ``(k, d, m)``, step rule and gradient a job, GD at every step
size of the grid at once (``train.grid_descent``, ``train.capped_descent``), and the cost of a
job (SPEC A1, A6; Part F's finding A1.k)."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ...configs import Init, XorTrainConfig
from ...train.memory import xor_train_peak
from .. import costs
from ..base import Record
from .config import Config, Gradient, Rule, Series

if TYPE_CHECKING:
    from ...train.grid_descent import GridRuns


class Job(NamedTuple):
    k: int
    d: int
    m: int
    role: str  # "d": the d series at width m; "m": the width series at d = width_d
    rule: Rule
    gradient: Gradient


def jobs(config: Config) -> list[Job]:
    """Every run: each ``d`` series at width ``m`` (role ``"d"``; the fixed-sample runs at ``d
    <= samples_d_max``), then ``k = width_k`` at ``d = width_d`` for each of ``m_values`` (role
    ``"m"``, population only), each for every rule."""
    out = [
        Job(s.k, d, config.m, "d", rule, gradient)
        for s in config.series
        for d in s.d_values
        for gradient in config.gradients
        if gradient == "population" or d <= config.samples_d_max
        for rule in config.rules
    ]
    if "population" in config.gradients:
        out += [
            Job(config.width_k, config.width_d, m, "m", rule, "population")
            for m in config.m_values
            for rule in config.rules
        ]
    return out


def split(config: Config) -> list[Config]:
    """One job per ``(k, d, m)``, rule and gradient."""
    return [
        config.model_copy(
            update={
                "series": [Series(k=j.k, d_values=[j.d])] if j.role == "d" else [],
                "m_values": [] if j.role == "d" else [j.m],
                "rules": [j.rule],
                "gradients": [j.gradient],
            }
        )
        for j in jobs(config)
    ]


def initialization(k: int, config: Config) -> Init:
    """The start of the ``k``-head runs: ``config.init`` for ``k >= 3``; ``k = 2`` keeps the
    paper's anti-symmetric start (SPEC A2)."""
    return "antisymmetric" if k == 2 else config.init


def descend(job: Job, config: Config) -> tuple[GridRuns, np.ndarray]:
    """GD at every grid step size at once (plain GD on the population gradient by
    ``train.grid_descent``, the rest by ``train.capped_descent``), and per
    replica and step size whether two heads share a support bit after the last step."""
    from ...train.capped_descent import capped_descent, shared_support_bit
    from ...train.grid_descent import grid_descent

    base = train_config(job.k, job.d, job.m, config, job.gradient)
    grid = etas(job.k, job.d, config, job.gradient)
    if job.rule == "constant" and job.gradient == "population":
        got = grid_descent(base, grid, config.budget)
    else:
        cap = config.score_cap if job.rule == "capped" else None
        got = capped_descent(base, grid, config.budget, cap)
    return got, shared_support_bit(base, got.theta).numpy()


def train_config(
    k: int, d: int, m: int, config: Config, gradient: Gradient = "population"
) -> XorTrainConfig:
    """The replicas of one ``(k, d, m)``: seeds, start, tolerance and device of ``config``;
    ``fixed``: one set of ``config.samples`` inputs per replica."""
    return XorTrainConfig(
        d=d,
        m=m,
        k=k,
        seeds=config.seeds,
        seed=config.seed,
        success_tol=config.success_tol,
        init=initialization(k, config),
        device=config.device,
        gradient=gradient,
        samples=config.samples if gradient == "fixed" else None,
    )


def exponents(config: Config, gradient: str = "population") -> list[float]:
    """The grid's ``j``'s for ``gradient``."""
    return list(config.samples_eta_exponents if gradient == "fixed" else config.eta_exponents)


def etas(k: int, d: int, config: Config, gradient: str = "population") -> list[float]:
    """The grid's step sizes ``2^j d^k ln d``."""
    from ...configs import default_train_eta

    unit = default_train_eta(d, k, 1.0)
    return [2.0**j * unit for j in exponents(config, gradient)]


def run(config: Config) -> list[Record]:
    from ...core.device import torch_threads

    records = []
    with torch_threads(1):
        for job in jobs(config):
            got, shared = descend(job, config)
            records.append(
                {
                    **job._asdict(),
                    "samples": config.samples if job.gradient == "fixed" else None,
                    "score_cap": config.score_cap if job.rule == "capped" else None,
                    "seeds": config.seeds,
                    "budget": config.budget,
                    "eta_exponents": exponents(config, job.gradient),
                    "steps": got.steps(),
                    "one_step": got.one_step.tolist(),
                    "collapsed": shared.tolist(),
                    "init": initialization(job.k, config),
                }
            )
    return records


# --- cost (``attnsep reproduce --plan``): the work of one job ---------------------------------


def work(c: costs.Config) -> costs.Parts:
    """Every run (replica x step size) at every step of the budget. Population: ``k 2^k d m``
    each, the count of the autograd loop that ran before ``train.grid_descent``, kept because it
    still orders the jobs within about 2x and the plan fits its seconds per unit on timed jobs
    (measured on ``grid_descent``: a run-step costs about ``k d (m + 100)`` products' worth plus
    about 2.5 ms a step in Python, and only 20% to 50% of the run-steps are evaluated; counts
    built on that predicted the standard timings from the quick ones worse than this one).
    Fixed samples: ``2 k n d`` each (the products of ``train.xor_train.sample_gradient``), on
    their own grid."""
    rules = len(c.get("rules", ["constant"]))
    gradients = c.get("gradients", ["population"])
    population = fixed = 0.0
    if "population" in gradients:
        runs = [(s["k"], d, c["m"]) for s in c["series"] for d in s["d_values"]]
        runs += [(c["width_k"], c["width_d"], m) for m in c["m_values"]]
        steps = len(c["eta_exponents"]) * c["budget"]
        population = rules * steps * c["seeds"] * sum(k * 2**k * d * m for k, d, m in runs)
    if "fixed" in gradients:
        sizes = [(s["k"], d) for s in c["series"] for d in s["d_values"]]
        steps = len(c["samples_eta_exponents"]) * c["budget"]
        fixed = (
            rules
            * steps
            * c["seeds"]
            * sum(2 * k * c["samples"] * d for k, d in sizes if d <= c["samples_d_max"])
        )
    return {"population": population, "samples": fixed}


def peak(c: costs.Config) -> float:
    """The largest run's memory (runs one after another): its replicas' embeddings, data and
    trajectories (``train.memory.xor_train_peak`` of ``train_config``), the grid's ``E x G`` runs'
    query vectors and gradients (five ``H x m`` arrays a run), and the ``H x d`` score-sized rows
    of the runs evaluated together: plain GD on the population gradient
    (``train.grid_descent``) in chunks of about 48 MB (its ``CHUNK_BYTES``); the capped step and
    fixed samples (``train.capped_descent``) in chunks of whole replicas of at most ``2^22``
    numbers a score-sized array (its ``CHUNK_NUMBERS``), about sixteen such arrays (measured at
    ``d = 1024``), with fixed samples also the chunk's ``n x G x H`` projections on its data."""
    config = Config(**c)
    peaks = []
    for job in jobs(config):
        G, E, H, d = len(exponents(config, job.gradient)), config.seeds, job.k, job.d
        numbers = 5.0 * E * G * H * job.m
        if job.rule == "constant" and job.gradient == "population":
            numbers += min(6 << 20, 48 * E * G * H * d)
        else:
            chunk = min(E, max(1, (1 << 22) // (G * H * d)))
            numbers += 16 * chunk * G * H * d
            if job.gradient == "fixed":
                numbers += 2 * H * chunk * config.samples * G * H
        base = train_config(job.k, d, job.m, config, job.gradient)
        peaks.append(xor_train_peak(base) + 8 * numbers)
    return max(peaks)
