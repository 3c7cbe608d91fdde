"""B5.3's jobs and records: one (PE mode, seed) or (corollary width, seed) a job, trained at ``T``
and evaluated at every ``T'`` beside the ``W = αI`` family, and the cost of a job (SPEC B5.3)."""

from __future__ import annotations

from .. import costs
from ..base import Record
from ..select_common import evaluation_loss, family_loss_at, family_record, train_and_evaluate
from ..select_convergence.run import run_bytes
from . import corollary
from .config import Config


def split(config: Config) -> list[Config]:
    """One job per (PE mode, seed) of B5.3 and per (width, seed) of B5.3c (``pes`` empty; the
    width B5.3's stochastic runs train at is read from their records, ``corollary.covered``)."""
    main = [
        config.model_copy(update={"pes": [pe], "seeds": [s], "corollary_widths": []})
        for pe in config.pes
        for s in config.seeds
    ]
    return main + [
        config.model_copy(update={"pes": [], "seeds": [s], "corollary_widths": [w]})
        for w in corollary.widths_to_run(config)
        for s in config.seeds
    ]


def _family(config: Config, lengths: list[int], seed: int) -> list[Record]:
    """The family's best at each ``T'``, and its loss at ``T'`` with ``α`` best for ``T``."""
    m, n = config.pe_dim, config.family_samples
    best = {t: family_record(t, config.q, m, config.d, n, seed) for t in {config.T, *lengths}}
    alpha = best[config.T]["alpha"]
    return [
        {
            "pe": "family",
            **best[t],
            "train_alpha": alpha,
            "at_train_alpha": family_loss_at(alpha, t, config.q, m, config.d, n, seed)[0],
        }
        for t in lengths
    ]


def run(config: Config) -> list[Record]:
    lengths = [config.T * f for f in config.factors]
    records = []
    for pe in config.pes:
        for seed in config.replica_seeds:
            positions = max(lengths) if pe == "fixed" else None
            out = train_and_evaluate(
                config.training(config.pe_dim, seed, pe, positions), lengths, config.eval_size
            )
            for i, row in enumerate(out["eval"]):
                loss, stderr, path = evaluation_loss(row)
                records.append(
                    {
                        "pe": pe,
                        "seed": seed,
                        "T": row["T"],
                        "loss": loss,
                        "stderr": stderr,
                        "path": path,
                        "uniform": row["uniform"],
                        "cos": out["cos"],
                        **({"step_losses": out["losses"]} if i == 0 else {}),  # B5.3b
                    }
                )
            if pe == "stochastic":  # the yardstick beside the stochastic runs, same seeds
                records += _family(config, lengths, seed)
    for width in corollary.widths_to_run(config):
        for seed in config.replica_seeds:
            records += corollary.run_width(config, width, seed)
    return records


def work(c: costs.Config) -> float:
    """B5.3's runs per PE mode and B5.3c's per width (``corollary_widths``, absent before
    version 3), counted as select-convergence counts its runs: training at ``T`` (law-drawn
    steps for the stochastic PE, explicit ones over ``max T'`` positions for the fixed one),
    evaluation at every ``T'`` (explicit encodings), and for the stochastic runs the family's
    best at ``T`` and every ``T'`` with one more evaluation at each ``T'``."""
    T, lengths, m_p = c["T"], [c["T"] * f for f in c["factors"]], c["pe_dim"]
    per_seed = 0.0
    for pe in c["pes"]:
        per_seed += costs.explicit_eval(c["eval_size"], lengths, m_p)
        if pe == "stochastic":
            per_seed += costs.law_training(c, m_p)
            per_seed += costs.family_best(c["family_samples"], m_p, [T, *lengths], lengths)
        else:
            per_seed += costs.explicit_training(c, m_p, T)
    far = c.get("corollary_factor", 4) * T
    per_seed += sum(
        costs.law_training(c, m)
        + costs.explicit_eval(c["eval_size"], [T, far], m)
        + costs.family_best(c["family_samples"], m, [T], [far])
        for m in c.get("corollary_widths", [])
    )
    return len(c["seeds"]) * per_seed


def peak(c: costs.Config) -> float:
    """The largest run's memory (``select_convergence.run_bytes``: training, evaluation and the
    family one after another). A stochastic run's evaluation at ``max T'`` dominates (its
    encodings ``eval_size x max T' x m_p``, three copies as drawn); a fixed run's training is
    ``train.memory.selection_peak`` (explicit steps on the table); B5.3c's runs are
    stochastic ones at their widths, evaluated at ``T`` and ``corollary_factor x T``."""
    config = Config(**c)
    lengths = [config.T * f for f in config.factors]
    runs = [
        (config.training(config.pe_dim, 0, pe, max(lengths) if pe == "fixed" else None), lengths)
        for pe in config.pes
    ]
    far = [config.T, corollary.far_length(config)]
    runs += [(config.training(w, 0), far) for w in corollary.widths_to_run(config)]
    return max(
        run_bytes(t, ts, config.eval_size, config.family_samples if t.pe == "stochastic" else 0)
        for t, ts in runs
    )
