"""B5.3d — the randomized-positional-encoding protocol: train on mixed lengths up to 40, test up
to 500 (SPEC B5.3, Part G, item B5.3d), a *finding* beside B5.3.

The protocol is that of Ruoss et al. (2023, "Randomized Positional Encodings Boost Length
Generalization of Transformers"): training sequences of every length up to 40 (here each step
one length uniform in ``[q + 1, 40]`` for its whole batch, ``train.selection_lengths``), test
lengths up to 500. Both PE modes train the position block by gradient descent on the loss exact
over the tokens (SPEC B3) for the same steps at the same width ``m_p``, the rate scaled to the
rank each spans (``select_common.ScaledTraining``: ``m_p``, or ``min(m_p, 40)`` for a fixed
table). Fixed PE: one table for positions ``1..500``, of which training reads only the first 40;
stochastic PE: this paper's encoding, a fresh random unit vector per position of every sequence
(SPEC B2). Beside stochastic PE: the ``W = αI`` family at the trained ``α`` (the trained
position block's mean diagonal, ``tr W_pp / m_p``) at every test length, one independent draw
of the family's products per seed (``select_common.family_loss_at``).

Names: this paper's "stochastic positional encoding" (fresh random encodings per sequence) is not
the stochastic positional encoding of Liutkus et al. (2021, "Relative positional encoding for
Transformers with linear complexity"), a relative encoding for linear-complexity attention
drawn from random features of a positional kernel; nor is it Ruoss et al.'s randomized encoding
(the sorted positions of a random subset of a longer range): only their protocol is borrowed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field, model_validator

from ..configs import FAMILY_SAMPLES, POSITION_LR_PER_DIM, PEMode, Seed
from ..metrics import stats
from . import costs, plotting
from .base import Experiment, Record, register
from .select_common import ScaledTraining, fmt_mean, mean_bars, mean_estimate, seed_mean

Length = Annotated[int, Field(ge=2, le=65_536)]
PES: tuple[PEMode, ...] = ("stochastic", "fixed")


class Config(ScaledTraining):
    """Per PE mode and seed: train on lengths uniform in ``[shortest, T]`` (``T`` the longest,
    40 as in the protocol), evaluate at every ``eval_lengths`` on the fixed set of ``eval_size``
    sequences per length (exact over the tokens).

    Reported (a finding, SPEC Part G, item B5.3d; no verdict): per mode and test length the mean
    over seeds of the loss relative to uniform attention, ``d (T' − q) / (q T')``, with the
    interval ``mean ± 2 s.e.``; the ``W = αI`` family at the trained ``α`` relative to uniform
    and stochastic PE over it (``± 2 s.e.`` of the per-seed ratios); fixed / stochastic per
    test length; the trained ``α`` and ``cos(W, W*)`` of stochastic PE.
    """

    d: int = Field(default=10, ge=1, le=1024)
    T: int = Field(default=40, ge=2, le=4096)
    """The longest training length (40 in the protocol)."""
    q: int = Field(default=3, ge=1, le=1024)
    shortest: int | None = Field(default=None, ge=1, le=4096)
    """The shortest training length; ``None``: ``q + 1``."""
    seeds: list[Seed] = Field(default=[0, 1, 2, 3], min_length=1, max_length=256)
    steps: int = Field(default=600, ge=1, le=100_000)
    batch_per_dim: float = Field(default=4.0, gt=0, le=64)
    lr_per_dim: float = Field(default=3 * POSITION_LR_PER_DIM, gt=0, le=100)
    pe_dim: int = Field(default=64, ge=1, le=4096)
    """Positional-encoding width ``m_p`` of both modes."""
    eval_lengths: list[Length] = Field(default=[40, 60, 100, 200, 500], min_length=1)
    """Test lengths; a fixed table holds ``max(eval_lengths)`` positions (at least ``T``)."""
    pes: list[Literal["stochastic", "fixed"]] = Field(default=list(PES), min_length=1)
    eval_size: int = Field(default=128, ge=2, le=8192)
    family_samples: int = Field(default=FAMILY_SAMPLES, ge=2, le=1_000_000)

    @model_validator(mode="after")
    def _lengths(self):  # noqa: ANN202
        shortest = self.first
        if not self.q <= shortest <= self.T:
            raise ValueError(f"shortest must be in [q, T] = [{self.q}, {self.T}], got {shortest}")
        short = [t for t in self.eval_lengths if t < self.q]
        if short:
            raise ValueError(f"eval_lengths must be >= q = {self.q}, got {short}")
        return self

    @property
    def first(self) -> int:
        """The shortest training length."""
        return self.q + 1 if self.shortest is None else self.shortest

    @property
    def positions(self) -> int:
        """Rows of a fixed PE table."""
        return max(self.T, *self.eval_lengths)


RULE = (
    "B5.3d, a finding (no verdict): train on lengths uniform in [shortest, T] (T = 40, the "
    "randomized-PE protocol of Ruoss et al. 2023), test at T' up to 500; per PE mode and T', the "
    "mean over seeds of the loss exact over the tokens on eval_size fixed sequences, relative to "
    "uniform attention, ± 2 s.e.; beside stochastic PE the W = alpha I family at the trained "
    "alpha (tr W_pp / m_p) and stochastic / family per seed, ± 2 s.e."
)


def split(config: Config) -> list[Config]:
    """One job per (PE mode, seed)."""
    return [
        config.model_copy(update={"pes": [pe], "seeds": [s]})
        for pe in config.pes
        for s in config.seeds
    ]


def _one_run(config: Config, pe: PEMode, seed: int) -> list[Record]:
    from ..exact.selection_bounds import uniform_attention_loss
    from ..metrics.selection import cos_to_ground_truth, evaluate_lengths
    from ..tasks.selection import TokenSelection
    from ..train.selection_lengths import train_mixed_lengths
    from .select_common import family_loss_at

    m, d, q = config.pe_dim, config.d, config.q
    training = config.training(m, seed, pe, config.positions if pe == "fixed" else None)
    result, lengths = train_mixed_lengths(training, config.first)
    rows = evaluate_lengths(
        result.W,
        TokenSelection.of(training),
        result.encodings,
        config.eval_lengths,
        seed,
        config.eval_size,
    )
    alpha = float(result.W[0, d:, d:].diagonal().mean())
    base = {
        "pe": pe,
        "seed": seed,
        "train_lengths": [config.first, config.T],
        "mean_train_length": float(np.mean(lengths)),
        "alpha": alpha,
        "cos": float(cos_to_ground_truth(result.W, d)[0]),
        "train_loss": float(result.train_loss[0]),
    }
    out = []
    for row in rows:
        exact = row.exact is not None
        loss = row.exact if row.exact is not None else row.loss
        stderr = row.exact_stderr if row.exact_stderr is not None else row.stderr
        record = {
            **base,
            "T": row.length,
            "loss": float(loss[0]),
            "stderr": float(stderr[0]),
            "path": "exact" if exact else "sampled",
            "uniform": float(uniform_attention_loss(row.length, q, d)),
        }
        if pe == "stochastic":
            record["family"] = family_loss_at(
                alpha, row.length, q, m, d, config.family_samples, seed
            )[0]
        out.append(record)
    return out


def run(config: Config) -> list[Record]:
    """Per (mode, seed, test length) one record."""
    return [r for pe in config.pes for s in config.replica_seeds for r in _one_run(config, pe, s)]


def summarize(records: list[Record]) -> dict[int, dict[str, Any]]:
    """Per test length: uniform's loss, each mode's :func:`seed_mean` (``None`` without seeds),
    the family at the trained ``α`` and the per-seed ratios stochastic / family and fixed /
    stochastic (the two modes' runs paired by seed)."""
    out: dict[int, dict[str, Any]] = {}
    for t in sorted({r["T"] for r in records}):
        here = [r for r in records if r["T"] == t]
        by = {pe: [r for r in here if r["pe"] == pe] for pe in PES}
        row: dict[str, Any] = {"uniform": here[0]["uniform"]}
        for pe in PES:
            row[pe] = seed_mean([r["loss"] for r in by[pe]]) if by[pe] else None
        stochastic = by["stochastic"]
        row["family"] = seed_mean([r["family"] for r in stochastic]) if stochastic else None
        row["over_family"] = (
            seed_mean([r["loss"] / r["family"] for r in stochastic]) if stochastic else None
        )
        paired = {r["seed"]: r["loss"] for r in stochastic}
        ratios = [r["loss"] / paired[r["seed"]] for r in by["fixed"] if r["seed"] in paired]
        row["fixed_over_stochastic"] = seed_mean(ratios) if ratios else None
        out[t] = row
    return out


def _estimates(rows: dict[int, dict[str, Any]], records: list[Record]) -> list[dict]:
    out = []
    for t, row in rows.items():
        u = row["uniform"]
        for pe in PES:
            if row[pe] is not None:
                out.append(mean_estimate(f"{pe} PE loss / uniform (T'={t})", row[pe], u))
        if row["family"] is not None:
            out.append(
                mean_estimate(f"family at the trained alpha / uniform (T'={t})", row["family"], u)
            )
            out.append(
                mean_estimate(
                    f"stochastic / family at the trained alpha (T'={t})", row["over_family"]
                )
            )
        if row["fixed_over_stochastic"] is not None:
            out.append(mean_estimate(f"fixed / stochastic (T'={t})", row["fixed_over_stochastic"]))
    for key, name in (("alpha", "trained alpha"), ("cos", "cos(W, W*)")):
        first = min(rows, default=0)  # one value per run: its record at the first length
        values = [r[key] for r in records if r["pe"] == "stochastic" and r["T"] == first]
        if values:
            out.append(mean_estimate(f"stochastic PE {name}", seed_mean(values)))
    return out


def verdict(records: list[Record], config: Config) -> dict:
    """The finding (``stats.FINDING``): the numbers of :func:`summarize` with their intervals."""
    rows = summarize(records)
    shown = []
    for t, row in rows.items():
        parts = [f"{pe} {fmt_mean(row[pe], row['uniform'])}" for pe in PES if row[pe] is not None]
        if row["family"] is not None:
            parts.append(f"family at the trained alpha {fmt_mean(row['family'], row['uniform'])}")
        shown.append(f"T'={t}: " + ", ".join(parts) + " x uniform")
    measured = (
        f"d={config.d}, q={config.q}, m_p={config.pe_dim}, trained on lengths "
        f"[{config.first}, {config.T}] for {config.steps} steps; " + "; ".join(shown)
    )
    return stats.claim(
        stats.FINDING,
        _reason(rows),
        measured,
        RULE,
        _estimates(rows, records),
        summary=_summary(rows),
    )


def _reason(rows: dict[int, dict[str, Any]]) -> str:
    if not rows:
        return "no test length was measured"
    lengths = list(rows)
    near, far = rows[lengths[0]], rows[lengths[-1]]
    parts = []
    for pe in PES:
        if near[pe] is not None:
            parts.append(
                f"{pe} PE {fmt_mean(near[pe], near['uniform'])} x uniform at T' = {lengths[0]} "
                f"and {fmt_mean(far[pe], far['uniform'])} at {lengths[-1]}"
            )
    text = "; ".join(parts)
    if far["over_family"] is not None:
        text += (
            f"; stochastic PE over the W = alpha I family at its trained alpha "
            f"{fmt_mean(far['over_family'])} at T' = {lengths[-1]}"
        )
    return text


def _summary(rows: dict[int, dict[str, Any]]) -> str:
    """The headline of :func:`_reason`: each mode's loss / uniform at the longest test length."""
    if not rows:
        return "no test length was measured"
    near, (t, far) = rows[min(rows)], max(rows.items())
    ratios = {
        pe: f"{far[pe]['mean'] / far['uniform']:.3g}x"
        for pe in PES
        if near[pe] is not None and far[pe] is not None
    }
    if not ratios:
        return f"no PE mode measured at T' = {t}"

    def listed(tag: str) -> str:
        return ", ".join(f"{pe}{tag} {r}" for pe, r in ratios.items())

    return stats.fitting(
        f"at T' = {t}: {listed(' PE')} uniform",
        f"at T' = {t}: {listed('')} uniform",
        f"T'={t}: {listed('')} uniform",
    )


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    """Each mode's loss / uniform against the test length (± 2 s.e.), the family at the trained
    ``α``, uniform attention, and the training range shaded."""
    path = out / "randomized_pe.png"
    rows = summarize(records)
    with plotting.figure(path) as (_, (ax,)):
        for pe, marker in (("stochastic", "o"), ("fixed", "s")):
            shown = [t for t in rows if rows[t][pe] is not None]
            if shown:
                ratios = [_scaled(rows[t][pe], rows[t]["uniform"]) for t in shown]
                mean_bars(ax, shown, ratios, marker=marker, label=f"{pe} PE (± 2 s.e.)")
        shown = [t for t in rows if rows[t]["family"] is not None]
        if shown:
            ax.plot(
                shown,
                [rows[t]["family"]["mean"] / rows[t]["uniform"] for t in shown],
                ":",
                color="black",
                label="W = αI at the trained α",
            )
        ax.axhline(1.0, color="grey", ls="--", lw=0.8, label="uniform attention")
        ax.axvspan(config.first, config.T, color="grey", alpha=0.15, label="training lengths")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("test length T'")
        ax.set_ylabel(f"loss / uniform ({config.eval_size} sequences per T')")
        ax.set_title(f"d={config.d}, q={config.q}, m_p={config.pe_dim}")
        ax.legend(fontsize=7)
    return [path]


def _scaled(summary: dict[str, float], scale: float) -> dict[str, float]:
    return {k: v / scale for k, v in summary.items()}


# --- cost and memory of one job -----------------------------------------------------------


def work(c: costs.Config) -> float:
    """Training (explicit steps at the mean length for a fixed table, law-drawn for stochastic
    PE), the evaluation at every test length, and the family at each for stochastic PE."""
    m, lengths = c["pe_dim"], c["eval_lengths"]
    shortest = c["shortest"] if c.get("shortest") is not None else c["q"] + 1
    per_seed = 0.0
    for pe in c["pes"]:
        per_seed += costs.explicit_eval(c["eval_size"], lengths, m)
        if pe == "fixed":
            per_seed += costs.explicit_training(c, m, (shortest + c["T"]) // 2)
        else:
            per_seed += costs.law_training(c, m)
            per_seed += costs.family_best(c["family_samples"], m, [], lengths)
    return len(c["seeds"]) * per_seed


def peak(c: costs.Config) -> float:
    """One run's training and evaluation memory, its larger mode (``SelectionTrainConfig``)."""
    config = Config(**c)
    return max(
        config.training(config.pe_dim, 0, pe, config.positions).peak_bytes()
        + config.training(config.pe_dim, 0, pe).evaluation_bytes(
            config.eval_lengths, config.eval_size
        )
        for pe in config.pes
    )


EXPERIMENT = register(
    Experiment(
        work=work,
        peak=peak,
        name="randomized-pe",
        claim="B5.3d",
        title="Stochastic vs fixed PE, trained on T <= 40, tested to T = 500",
        paper="Experiments show fixed-PE transformers fail to reach zero OOD loss while "
        "stochastic-PE transformers extrapolate to unseen lengths.",
        config_type=Config,
        run=run,
        figure=figure,
        verdict=verdict,
        split=split,
        kind="finding",
        tuned_on=(0, 3),
        presets={
            "quick": {
                "d": 4,
                "q": 2,
                "pe_dim": 32,
                "steps": 200,
                "eval_size": 32,
                "family_samples": 256,
            },
            "standard": {"pe_dim": 128, "steps": 600, "seeds": [0, 1, 2, 3, 4, 5, 6, 7]},
            "full": {
                "pe_dim": 256,
                "steps": 1200,
                "eval_lengths": [40, 60, 100, 200, 500, 1000],
                "seeds": list(range(16)),
            },
        },
    )
)
