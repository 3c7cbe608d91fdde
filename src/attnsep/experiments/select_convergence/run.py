"""B5.1's jobs and records: one (width, seed) a job, B5.1's and B5.1b's (``paper``), and the
cost and memory of a job (SPEC B5.1; ``bench/bench_select_convergence.py``)."""

from __future__ import annotations

from ...configs import SelectionTrainConfig
from ...train.memory import selection_evaluation_peak, selection_peak
from .. import costs
from ..base import Record
from ..select_common import evaluation_loss, family_record, train_and_evaluate
from . import paper
from .config import Config, steps_at


def split(config: Config) -> list[Config]:
    """One job per (width, seed) of B5.1, and one per (width, seed) of the paper's setting."""
    return [
        config.model_copy(update={"pe_dims": [m], "seeds": [s], "paper_widths": []})
        for m in config.pe_dims
        for s in config.seeds
    ] + [
        config.model_copy(update={"pe_dims": [], "seeds": [s], "paper_widths": [m]})
        for m in config.paper_widths
        for s in config.seeds
    ]


def training(config: Config, m_p: int, seed: int) -> SelectionTrainConfig:
    """B5.1's training run at width ``m_p``: its steps (:func:`~.config.steps_at`) and the
    config's precision of the products."""
    return config.training(m_p, seed, products=config.products, steps=steps_at(config.steps, m_p))


def run_width(config: Config, m_p: int, seed: int) -> Record:
    """One (width, seed) of B5.1: train the position block for the width's steps
    (:func:`~.config.steps_at`), evaluate it exactly over the tokens, and the family's best
    beside it."""
    train_config = training(config, m_p, seed)
    out = train_and_evaluate(train_config, [config.T], config.eval_size)
    loss, stderr, path = evaluation_loss(out["eval"][0])
    family = family_record(config.T, config.q, m_p, config.d, config.family_samples, seed)
    return {
        "pe_dim": m_p,
        "seed": seed,
        "steps": train_config.steps,
        "loss": loss,
        "stderr": stderr,
        "path": path,
        "train_loss": out["train_loss"],
        "cos": out["cos"],
        "uniform": out["eval"][0]["uniform"],
        "family": family["loss"],
        "family_stderr": family["stderr"],
        "family_alpha": family["alpha"],
    }


def run(config: Config) -> list[Record]:
    records = []
    for m in config.paper_widths:
        for seed in config.replica_seeds:
            records += paper.run_width(config, m, seed)
    for m in config.pe_dims:
        for seed in config.replica_seeds:
            records.append(run_width(config, m, seed))
    return records


# --- cost (``attnsep reproduce --plan``): the work of one job ---------------------------------


def b51_work(c: costs.Config, m: int) -> float:
    """One B5.1 job at width ``m``: the width's law-drawn steps (:func:`~.config.steps_at`,
    :func:`costs.law_training`), the family's best (:func:`costs.family_best`) and the
    evaluation (:func:`costs.explicit_eval`). The products dominate from ``m_p ≈ 512`` on
    (``B m²`` against ``B m``): a step grows like ``m³`` there, like ``m²`` below."""
    family = costs.family_best(c["family_samples"], m, [c["T"]], [])
    training = costs.law_training({**c, "steps": steps_at(c["steps"], m)}, m)
    return training + family + costs.explicit_eval(c["eval_size"], [c["T"]], m)


def paper_work(c: costs.Config, m: int) -> float:
    """One B5.1b job at width ``m``: ``paper_steps_per_dim · m`` steps of ``paper_batch``
    sequences, each with its two products (``2 (d + m) m`` multiply-adds), ``(q + 1) m`` normal
    draws and :data:`costs.SGD_TOKEN_OVERHEAD` per token (its tokens, the softmax; measured:
    6400 at ``m_p = 2``), and :data:`costs.STEP` per step (measured: 1 ms)."""
    per_sequence = 2 * (c["d"] + m) * m + costs.DRAW * (c["q"] + 1) * m
    per_sequence += costs.SGD_TOKEN_OVERHEAD * c["T"]
    return c["paper_steps_per_dim"] * m * (c["paper_batch"] * per_sequence + costs.STEP)


def work(c: costs.Config) -> costs.Parts:
    """B5.1's runs (:func:`b51_work`) and B5.1b's (:func:`paper_work`; ``paper_widths``,
    absent from older configs), in multiply-adds."""
    parts = {"": len(c["seeds"]) * sum(b51_work(c, m) for m in c["pe_dims"])}
    widths = c.get("paper_widths", [])
    if widths:
        parts["paper-setting"] = len(c["seeds"]) * sum(paper_work(c, m) for m in widths)
    return parts


# --- memory (``Experiment.peak``): the most one job holds ------------------------------------


def training_bytes(train: SelectionTrainConfig) -> float:
    """One training run's memory. With stochastic PE drawn by law (``train.selection``): a
    step's ``Workspace`` (the subset's encodings ``B x q x m_p``, the ``B x m_p`` and
    ``B x rows`` arrays, their float32 copies), its draws and softmax off the subset (about a
    dozen ``B x T``), a full-``W`` step's tokens (``B x T x d``, three copies) and ``W``. Else
    ``train.memory.selection_peak``: an explicit step's encodings and graph, ``6 T (d +
    m_p)`` numbers per sequence, which a law-drawn step never holds."""
    if train.pe != "stochastic" or train.pe_draws != "law":
        return selection_peak(train)
    population = train.objective == "population"
    size = train.d + train.pe_dim
    rows = train.pe_dim if population else size
    tokens = 0 if population else 3 * train.T * train.d
    sequence = (train.q + 4) * train.pe_dim + 3 * rows + 12 * train.T + tokens
    return 8.0 * train.seeds * (train.batch * sequence + 3 * size**2 + train.steps)


def evaluation_bytes(train: SelectionTrainConfig, lengths: list[int], size: int) -> float:
    """The evaluation's memory (``train.memory.selection_evaluation_peak``) and, with stochastic
    PE, one more copy of its encodings: ``StochasticPE.draw`` holds the drawn blocks, their
    stack and the normalized copy at once."""
    extra = size * max(lengths) * train.pe_dim * train.seeds if train.pe == "stochastic" else 0
    return selection_evaluation_peak(train, lengths, size) + 8.0 * extra


def family_bytes(samples: int, T: int, q: int, m_p: int) -> float:
    """The ``W = αI`` family at length ``T`` (``exact.family``): a draw's subset encodings
    (``samples x q x m_p``), then the fit and eval draws' products and a search step's softmax
    (a few ``samples x T`` arrays)."""
    return 8.0 * samples * (q * m_p + 8 * T)


def run_bytes(
    train: SelectionTrainConfig, lengths: list[int], eval_size: int, family_samples: int
) -> float:
    """One run (``select_common.train_and_evaluate``, then the family beside it at the longest
    of ``lengths`` when ``family_samples``): its parts run one after another, each freeing its
    arrays, so the run holds the largest."""
    family = family_samples and family_bytes(family_samples, max(lengths), train.q, train.pe_dim)
    return max(training_bytes(train), evaluation_bytes(train, lengths, eval_size), family)


def peak(c: costs.Config) -> float:
    """The widest run's memory (:func:`run_bytes`). The evaluation dominates: its encodings,
    ``eval_size x T x m_p`` (``paper_eval_size`` for B5.1b), three copies as they are drawn
    (``train.memory.selection_evaluation_peak`` and one more), against a law-drawn step's
    ``batch x (q + 7) m_p``."""
    config = Config(**c)
    runs = [(training(config, m, 0), config.eval_size) for m in config.pe_dims]
    runs += [(paper.training(config, m), config.paper_eval_size) for m in config.paper_widths]
    return max(run_bytes(t, [config.T], n, config.family_samples) for t, n in runs)
