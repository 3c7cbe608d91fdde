"""B5.4's jobs and records: per setting the trained FCNs at each grid width beside the floor, and
the transformer's bisection for ``m_p*`` (SPEC B5.4, Part D); the cost of a job."""

from __future__ import annotations

from ...configs import POSITION_LR_PER_DIM, SelectionFCNConfig, SelectionTrainConfig, default
from ...metrics import stats
from ...train.memory import fcn_peak, selection_peak
from ...train.search import smallest_passing
from .. import costs
from ..base import Record
from .config import PASS_RATE, TARGET, Config, Setting, widths


def selector_lr(T: int, d: int, m_p: int) -> float:
    """``POSITION_LR_PER_DIM · m_p · max(1, T / (2d))`` (*choice*).

    At uniform attention the population loss's slope along ``W = αI`` is about ``2d / T``
    (it is ``d`` times the per-coordinate loss), so the plain rate, measured at ``d = 10,
    T = 20`` (``T / 2d = 1``), barely moves ``α`` at ``d = 2, T = 64`` in 300 steps (``α ≈ 0.5``
    where the target needs ``α ≈ ln(1.24 T / q) ≈ 3.7``). Scaling by ``T / (2d)`` restores the
    pace; measured: 300 steps reach 0.03–0.1 × uniform at ``(T, d, q, m_p)`` = ``(64, 2, 2,
    32)``, ``(24, 4, 2, 20)``, ``(16, 4, 1, 8)``, ``(128, 2, 2, 48)``, stable throughout.
    """
    return POSITION_LR_PER_DIM * m_p * max(1.0, T / (2 * d))


def split(config: Config) -> list[Config]:
    jobs = []
    for s in config.settings:
        if "fcn" in config.kinds:
            one = {"settings": [s], "kinds": ["fcn"]}
            jobs += [
                config.model_copy(update={**one, "width_fractions": [f]})
                for f in config.width_fractions
            ]
        if "transformer" in config.kinds:
            jobs.append(config.model_copy(update={"settings": [s], "kinds": ["transformer"]}))
    return jobs


def _fcn_records(config: Config, setting: Setting) -> list[Record]:
    from ...exact.selection_bounds import fcn_bottleneck_loss, uniform_attention_loss
    from ...train.fcn import train_selection

    T, d, q = setting
    uniform = float(uniform_attention_loss(T, q, d))
    records = []
    for w in widths(setting, config.width_fractions):
        cfg = SelectionFCNConfig(
            d=d,
            T=T,
            q=q,
            width=w,
            seeds=config.fcn_replicas,
            steps=config.fcn_steps,
            seed=config.seed,
            dtype=config.fcn_dtype,
        )
        result = train_selection(cfg)
        floor = float(fcn_bottleneck_loss(T, q, d, w))
        records += [
            fcn_record(
                setting, w, e, float(result.loss[e]), float(result.stderr[e]), floor, uniform
            )
            for e in range(config.fcn_replicas)
        ]
    return records


def fcn_record(
    setting: Setting, width: int, replica: int, loss: float, stderr: float, floor: float,
    uniform: float,
) -> Record:  # fmt: skip
    """One trained FCN's record: its loss and standard error beside the floor at its width."""
    T, d, q = setting
    return {
        "model": "fcn", "T": T, "d": d, "q": q, "width": width, "replica": replica,
        "loss": loss, "stderr": stderr, "floor": floor, "uniform": uniform,
    }  # fmt: skip


def _transformer_record(config: Config, setting: Setting) -> Record:
    from ...exact.selection_bounds import uniform_attention_loss
    from ...metrics.selection import law_exact_loss
    from ...train.selection import train

    T, d, q = setting
    uniform = float(uniform_attention_loss(T, q, d))
    losses: dict[int, list[float]] = {}

    def evaluate(m_p: int) -> list[bool]:
        cfg = SelectionTrainConfig(
            d=d,
            T=T,
            q=q,
            pe_dim=m_p,
            trainable="position",
            objective="population",
            steps=config.selector_steps,
            batch=config.batch,
            lr=selector_lr(T, d, m_p),
            seeds=config.selector_replicas,
            seed=config.seed,
        )
        W_pp = train(cfg).W[:, d:, d:]
        exact, _ = law_exact_loss(W_pp, d, q, T, cfg.pe_kind, config.seed, config.eval_size)
        losses[m_p] = [float(v) for v in exact]
        return [v <= TARGET * uniform for v in losses[m_p]]

    m_p, probes = smallest_passing(evaluate, PASS_RATE, start=1, limit=T * d)
    return {
        "model": "transformer",
        "T": T,
        "d": d,
        "q": q,
        "m_p": m_p,
        "width": None if m_p is None else d + m_p,
        "uniform": uniform,
        "loss": None if m_p is None else stats.median(losses[m_p]),
        "probes": [{**p.as_record(), "losses": losses[p.size]} for p in probes],
    }


def run(config: Config) -> list[Record]:
    records: list[Record] = []
    for setting in config.settings:
        if "fcn" in config.kinds:
            records += _fcn_records(config, setting)
        if "transformer" in config.kinds:
            records.append(_transformer_record(config, setting))
    return records


# --- cost (``attnsep reproduce --plan``): the work of one job ---------------------------------


def work(c: costs.Config) -> costs.Parts:
    """The FCNs' Adam steps (:func:`costs.fcn_steps`) and the transformer's
    law-drawn population steps over its search's probes."""
    batch = default(SelectionFCNConfig, "batch")
    fcn = transformer = 0.0
    for T, d, q in c["settings"]:
        if "fcn" in c["kinds"]:
            for w in widths((T, d, q), c["width_fractions"]):
                fcn += costs.fcn_steps(c["fcn_steps"], c["fcn_replicas"], batch, T * d + T, w)
        if "transformer" in c["kinds"]:
            m_star = 4 * q * costs.ln(T)
            transformer += (
                c["selector_replicas"]
                * costs.probes(T * d)
                * c["selector_steps"]
                * c["batch"]
                * (T + (q + 1) * m_star + 2 * m_star**2)
            )
    return {"transformer": transformer, "fcn": fcn}


def peak(c: costs.Config) -> float:
    """The widest FCN's training memory (``train.memory.fcn_peak``), or the
    transformer's at the widest PE its search may try, ``m_p = Td``
    (``train.memory.selection_peak``, an upper bound: the search stops at the first width
    that passes)."""
    fcn = [
        fcn_peak(SelectionFCNConfig(d=d, T=T, q=q, width=w, seeds=c["fcn_replicas"], steps=1))
        for T, d, q in c["settings"]
        for w in widths((T, d, q), c["width_fractions"])
        if "fcn" in c["kinds"]
    ]
    transformer = [
        selection_peak(SelectionTrainConfig(
            d=d, T=T, q=q, pe_dim=T * d, trainable="position", objective="population",
            steps=1, batch=c["batch"], seeds=c["selector_replicas"],
        ))
        for T, d, q in c["settings"]
        if "transformer" in c["kinds"]
    ]  # fmt: skip
    return max(fcn + transformer, default=0.0)
