# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Add your own claim
#
# Every claim attnsep reproduces is an *experiment*: a typed config with presets, a `run`
# that turns one job into plain records, a `verdict` that judges the records against a
# criterion written down beforehand, and a `figure`. Register one and the whole engine
# takes it: `list_experiments`, `run_experiment`, `sweep` and `reproduce` with its report
# and its store, where a job already computed is never computed again.
#
# Each built-in claim is a package under `attnsep/experiments/`, one file per part:
#
# ```
# experiments/select_fixed_pe/
#   __init__.py     the claim in words, and its registration
#   config.py       the typed config and its presets (pure data)
#   run.py          split into jobs, run one job into records, its work and peak memory
#   verdict.py      the criterion, written before the numbers, and the verdict
#   calibration.py  the laws the criterion's power and false pass are measured on
#   figure.py       the figure
# ```
#
# This notebook writes the same parts, in that order, in its cells.
#
# Our claim, beside SPEC B4: with **ideal orthonormal** encodings, the selector at
# `W = αI` on the position block has the loss
# `L_T(α) = d T (T − q) / (q (q e^α + T − q)²)`. Random unit encodings of width `m_p` are
# only nearly orthogonal; **the claim is that their loss approaches `L_T(α)` as `m_p`
# grows**, to within 15% at `m_p = 512`.

# %%
import shutil
import tempfile
from pathlib import Path

import torch
from pydantic import Field

import attnsep
from attnsep.exact.selection_bounds import orthonormal_loss
from attnsep.experiments import plotting
from attnsep.experiments.base import Experiment, InputLength, Positive, SubsetConfig, register
from attnsep.metrics import stats
from attnsep.models import Selector
from attnsep.positional_encodings import StochasticPE
from attnsep.tasks.selection import TokenSelection, sts

# %% [markdown]
# ## The config (`config.py`)
#
# A pydantic subclass of the experiments' base config (`ExperimentConfig`; `SubsetConfig`
# adds the check `q <= T`): unknown keys, wrong types, NaN and infinity are one-line errors,
# and every field has its default. The criterion goes in the docstring, written before any
# number is seen.


# %%
class Config(SubsetConfig):
    """Loss of ``W = alpha I`` (position block) on random unit encodings vs ``L_T(alpha)``.

    Criterion: the relative gap ``(L - L_T) / L_T`` at the largest ``m_p``, with a 95% interval
    over ``seeds`` batches, decides: reproduced when its upper end is <= ``tolerance`` and the
    gap shrinks from the smallest to the largest ``m_p``; not reproduced when its lower end is
    above ``tolerance``; inconclusive otherwise (more seeds would decide).
    """

    T: InputLength = 8
    q: Positive = 2
    d: Positive = 4
    alpha: float = Field(default=3.0, ge=0, le=20)
    m_p_values: list[Positive] = Field(default=[8, 32, 128, 512], min_length=1)
    seeds: Positive = Field(default=8, ge=2)
    batch: Positive = 256
    tolerance: float = Field(default=0.15, gt=0)


# %% [markdown]
# ## Jobs and records (`run.py`)
#
# `split` cuts a config into independent jobs (here one per width); `run` computes one job
# and returns plain, JSON-able records. It uses the public `Selector` module (tutorial 4)
# and the library's task and encodings; the data come from named random streams, so a job's
# records depend on its config only, whatever executor runs it.


# %%
def split(config: Config) -> list[Config]:
    return [config.model_copy(update={"m_p_values": [m_p]}) for m_p in config.m_p_values]


def run(config: Config) -> list[dict]:
    task = TokenSelection(config.d, config.T, config.q)
    records = []
    for m_p in config.m_p_values:
        model = Selector(config.d, m_p, trainable="position")
        with torch.no_grad():
            model.W[config.d :, config.d :] = config.alpha * torch.eye(m_p, dtype=torch.float64)
        encodings = StochasticPE(config.seed, config.seeds, m_p)
        data = task.sample(config.seed, config.seeds, config.batch, ("claim",))
        P = encodings.draw(("claim",), config.batch, config.T)
        for e in range(config.seeds):  # one batch per seed
            with torch.no_grad():
                f, _ = model(data.X[e], P[e], data.y[e])
            loss = (f - sts(data.X[e], data.y[e])).pow(2).sum(dim=-1).mean().item()
            records.append({"m_p": m_p, "replica": e, "loss": loss})
    return records


# %% [markdown]
# ## The verdict (`verdict.py`) and the figure (`figure.py`)
#
# `verdict` returns `reproduced`, `not reproduced` or `inconclusive` with its reason
# (`stats.claim` adds what was measured, the criterion and the estimates with their
# intervals; the report shows them all). The terminal shows each claim's reason in short, at
# most 60 characters: pass `summary=` for a long reason; this one is short enough to be its
# own. `figure` writes PNGs into the folder it is given.


# %%
def gaps(records: list[dict], config: Config) -> dict[int, tuple[float, float, float]]:
    """Per width: the relative gap to ``L_T(alpha)`` and its 95% interval."""
    exact = orthonormal_loss(config.alpha, config.T, config.q, config.d)
    out = {}
    for m_p in sorted({r["m_p"] for r in records}):
        losses = torch.tensor([r["loss"] for r in records if r["m_p"] == m_p])
        mean, se = losses.mean().item(), (losses.std() / len(losses) ** 0.5).item()
        out[m_p] = tuple(
            (value - exact) / exact for value in (mean, mean - 1.96 * se, mean + 1.96 * se)
        )
    return out


def verdict(records: list[dict], config: Config) -> dict:
    found = gaps(records, config)
    widest = max(found)
    gap, low, high = found[widest]
    shrinks = found[widest][0] < found[min(found)][0]
    measured = "; ".join(f"m_p={m}: gap {stats.fmt_interval(*g)}" for m, g in found.items())
    where = f"at m_p={widest} the gap is {gap:.3f} [{low:.3f}, {high:.3f}]"
    if low > config.tolerance:
        outcome, reason = stats.NOT_REPRODUCED, f"{where}, above {config.tolerance}"
    elif high <= config.tolerance and shrinks:
        outcome, reason = stats.REPRODUCED, f"{where}, within {config.tolerance}, shrinking"
    elif not shrinks:
        outcome, reason = stats.INCONCLUSIVE, f"{where}, but not below m_p={min(found)}'s"
    else:
        outcome, reason = stats.INCONCLUSIVE, f"{where}: more seeds would decide"
    estimates = [stats.estimate(f"relative gap, m_p={m}", *g) for m, g in found.items()]
    criterion = " ".join((Config.__doc__ or "").split("Criterion: ")[1].split())
    return stats.claim(outcome, reason, measured, criterion, estimates)


def figure(records: list[dict], config: Config, out: Path) -> list[Path]:
    path = out / "orthonormal_gap.png"
    found = gaps(records, config)
    with plotting.figure(path) as (_, (ax,)):
        widths = list(found)
        ax.errorbar(
            widths,
            [g[0] for g in found.values()],
            yerr=plotting.bar_lengths(*zip(*found.values(), strict=True)),
            marker="o",
            capsize=3,
        )
        ax.axhline(config.tolerance, color="grey", ls="--", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("encoding width m_p")
        ax.set_ylabel("(L - L_T(alpha)) / L_T(alpha)")
    return [path]


# %% [markdown]
# ## Register it (`__init__.py`)
#
# One `register(Experiment(...))`: a name, the claim's label, a title, the paper's (here our)
# statement, the config type with its presets, `work=` (the work of one job from its stored
# config, which `reproduce_plan` scales into a time estimate) and `peak=` (the most memory in
# bytes one job holds, here every seed's tokens and encodings twice over: a run that cannot
# fit this machine is refused before it starts, and `attnsep show` prints it). `section`
# puts it in its own part of the report.

# %%
register(
    Experiment(
        name="orthonormal-gap",
        claim="X1",
        title="Random encodings approach the orthonormal loss",
        paper="With random unit encodings of width m_p, W = alpha I has a loss within 15% of the "
        "orthonormal closed form L_T(alpha) at m_p = 512 (SPEC B4).",
        config_type=Config,
        run=run,
        figure=figure,
        verdict=verdict,
        split=split,
        presets={"quick": {}, "standard": {"seeds": 32}},
        work=lambda c: c["seeds"] * c["batch"] * sum((c["T"] + m) * m for m in c["m_p_values"]),
        peak=lambda c: 16.0 * c["seeds"] * c["batch"] * c["T"] * (c["d"] + max(c["m_p_values"])),
        section="my claims",
    )
)
attnsep.list_experiments()[["name", "claim", "title"]].tail(3)

# %% [markdown]
# ## Run it through the engine
#
# `run_experiment` runs its jobs into a store and judges them; `reproduce(names=[...])` (the
# command line's `attnsep reproduce --only NAME`) also writes the report (`index.html`,
# `claims.json`, the figures). Both run here with `executor="inline"`: the `process` and
# `ray` executors start fresh interpreters that load only attnsep's own experiments (even
# when yours lives in a module of your own), so an experiment registered this way runs in
# this process only; asked to run it elsewhere, they stop with an error that says so.

# %%
folder = Path(tempfile.mkdtemp())
store = folder / "runs.sqlite"
result = attnsep.run_experiment("orthonormal-gap", store=store, executor="inline")
print(result.verdict, "-", result.outcome["reason"])
result.to_frame().groupby("m_p")["loss"].agg(["mean", "std"])

# %%
reproduction = attnsep.api.reproduce(
    "quick", names=["orthonormal-gap"], executor="inline", out=folder / "report", store=store
)
print(f"computed {reproduction.computed} jobs, {reproduction.cached} from the store")
print(reproduction.to_frame()[["claim", "verdict", "reason"]].to_string(index=False))
print(sorted(p.name for p in (folder / "report").rglob("*.*")))

# %% [markdown]
# The criterion can fail: ask for a tighter tolerance than the widths reach (the tolerance
# is part of the jobs' config, so these are new jobs with the same records).

# %%
strict = attnsep.run_experiment(
    "orthonormal-gap", config={"tolerance": 0.01}, store=store, executor="inline"
)
print(strict.verdict, "-", strict.outcome["reason"])

# %% [markdown]
# A sweep over the config's fields works the same way, into the same store
# (`attnsep.experiments.unregister("orthonormal-gap")` would remove the experiment).

# %%
swept = attnsep.sweep("orthonormal-gap", {"alpha": [1.0, 2.0]}, store=store, executor="inline")
print(swept.summary())
shutil.rmtree(folder)

# %% [markdown]
# ## Making it built in
#
# To ship the claim with attnsep (so that the `process` and `ray` executors run it too), put
# the cells above into a package `experiments/orthonormal_gap/` with the files shown at the
# top, add its entry (package, name, claim, title, the paper's sentence, companions) to
# `experiments/built_ins.py`, and register it with that entry, as every built-in claim does:
#
# ```python
# from ..base import from_package, register
# from . import config, figure, run, verdict
#
# EXPERIMENT = register(from_package("orthonormal-gap", config, run, verdict, figure))
# ```
#
# `from_package` takes the entry, `config.Config` and `config.PRESETS`, `run.run`,
# `run.split`, `run.work`, `run.peak`, `verdict.verdict`, `figure.figure` (and
# `calibration.hypotheses` when a `calibration` module is given); any other setting
# (`version`, `kind`, `section`, `tuned_on`, ...) is a keyword.
#
# `attnsep list` reads the entries of `built_ins.py` without importing any claim, and a test
# holds each package's registration to its entry.
