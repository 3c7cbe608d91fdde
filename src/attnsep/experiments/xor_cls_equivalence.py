"""A3 — the standard one-layer transformer with a CLS token trains like the query-vector model
(SPEC A3; SPEC Part G, item 3).

The CLS block of ``models.cls_transformer`` (CLS token at position 0, tokens
``[x_i e_content ; v_i]``, full ``W_Q``, ``W_K``, ``W_V`` per head, SPEC A3's structural mask)
and the query-vector model of SPEC A2 are trained side by side from the same state mapped
through ``theta_h = W_K,hᵀ W_Q,h e_cls`` (orthogonal key blocks), the CLS block on its query
side, each by its own autograd, for ``steps`` steps of size ``eta = eta_scale d^2 ln d``
(``train.cls_descent``). Per step and replica: both losses and both attention rows; the rounding
twin (one ulp off at the start) and the control (``W_Q`` and ``W_K`` trained) beside them.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Literal

import numpy as np
from pydantic import Field, model_validator

from ..metrics import calibration, stats
from . import costs, plotting
from .base import Experiment, ExperimentConfig, Record, register

CUBE_D_MAX = 10
"""The largest ``d`` at which the ``cube`` loss runs (the CLS forward on all ``2^d`` inputs)."""
TOLERANCE = 1e-9
"""Reproduced at or below: ``4.5e6`` units of float64 rounding (``2^-52``) on quantities of
order 1 (losses ``<= 2``, attention weights in ``[0, 1]``)."""
MISMATCH = 1e-6
"""Not reproduced above: the size of a real mismatch (the control's smallest deviation in the
runs is ``1e-4`` at ``eta_scale = 1``)."""
CONDITIONED = 1e-12
"""A replica is *conditioned* when its rounding twin stays within this: the trajectory
amplifies a one-ulp start by at most about ``4500``, so a rounding-level deviation of the CLS
path stays far below ``TOLERANCE``; chaotic trajectories (oscillating, collapsed replicas) are
reported and left out."""
MIN_CONDITIONED = 0.5
"""The share of conditioned replicas (per size) below which a size cannot decide."""

Dim = Annotated[int, Field(ge=2, le=4096)]
Width = Annotated[int, Field(ge=1, le=512)]
Loss = Literal["population", "cube"]


class Config(ExperimentConfig):
    """Side-by-side gradient descent of the CLS transformer and the query-vector model (SPEC A3;
    SPEC Part G, item 3), at each ``(d, m)`` of ``sizes`` and each loss of ``losses``
    (``cube`` only at ``d <= 10``).

    Measured per replica: the largest deviation ``D`` over the ``steps + 1`` evaluations of
    ``|L_cls - L_qv|`` and ``max_{h,i} |gamma_cls - gamma_qv|`` (absolute; both quantities are
    of order 1); the rounding twin's deviation ``T`` (the query-vector model started one ulp,
    ``2^-52`` relative, off ``theta_0``); the control's deviation ``C`` (the CLS block trained on
    ``W_Q`` and ``W_K``: a wrong map of the training step).

    Criterion (written before any number was seen), on the *conditioned* replicas
    (``T <= 1e-12``: the trajectory amplifies rounding at most about 4500-fold; chaotic ones are
    counted and reported, not judged): **reproduced** when every size has at least half of its
    replicas conditioned, the largest ``D`` over all of them is ``<= 1e-9`` (``4.5e6`` float64
    rounding units on order-1 quantities) and the control's deviation exceeds ``1e-6`` on every
    conditioned replica (the run could have shown a mismatch); **not reproduced** when some
    conditioned replica has ``D > 1e-6`` (the size of a real mismatch: the control's); else
    **inconclusive** (deviations between the two, too few conditioned replicas, or a control
    that does not show its mismatch: then a larger ``steps`` or smaller ``eta_scale`` decides).
    Reported with intervals: per size the largest ``D`` (bootstrap over replicas), the share
    conditioned (Wilson), the control's smallest deviation (bootstrap).
    """

    sizes: list[tuple[Dim, Width]] = Field(
        default=[(8, 4), (16, 8), (64, 16)], min_length=1, description="(d, m) pairs."
    )
    losses: list[Loss] = Field(
        default=["population", "cube"], min_length=1, description="Losses trained on."
    )
    seeds: int = Field(default=8, ge=1, le=4096, description="Replicas per size and loss.")
    steps: int = Field(default=10, ge=1, le=10_000, description="Gradient steps.")
    eta_scale: float = Field(
        default=1.0, gt=0, le=1e3, description="eta = eta_scale d^2 ln d (SPEC A5's form)."
    )

    @model_validator(mode="after")
    def _some_job(self):  # noqa: ANN202
        if not jobs_of(self):
            raise ValueError(f"the cube loss alone needs some d <= {CUBE_D_MAX}, got {self.sizes}")
        return self


CRITERION = (
    "on the conditioned replicas (rounding twin, one ulp off at the start, within 1e-12 of the "
    "query-vector trajectory): reproduced when every size has >= half its replicas conditioned, "
    "the largest deviation D (loss and attention, absolute, over all steps) is <= 1e-9 (4.5e6 "
    "float64 rounding units) and the control (W_Q and W_K trained) deviates by > 1e-6 on every "
    "conditioned replica; not reproduced when some conditioned replica has D > 1e-6; "
    "inconclusive otherwise"
)


def jobs_of(config: Config) -> list[tuple[int, int, str]]:
    """``(d, m, loss)`` of every job: each size with each loss (``cube`` where ``d <= 10``)."""
    return [
        (d, m, loss)
        for d, m in config.sizes
        for loss in config.losses
        if loss == "population" or d <= CUBE_D_MAX
    ]


def split(config: Config) -> list[Config]:
    return [
        config.model_copy(update={"sizes": [(d, m)], "losses": [loss]})
        for d, m, loss in jobs_of(config)
    ]


def eta(d: int, scale: float) -> float:
    return scale * d * d * math.log(d)


def run(config: Config) -> list[Record]:
    from ..core.rng import stream_seed
    from ..train.cls_descent import side_by_side

    out = []
    for d, m, loss in jobs_of(config):
        step = eta(d, config.eta_scale)
        seed = stream_seed(config.seed, d, m)
        r = side_by_side(seed, config.seeds, d, m, config.steps, step, loss)
        dev = np.maximum(r.loss_dev, r.attn_dev)
        control = np.maximum(r.control_loss_dev, r.control_attn_dev)
        cond = r.twin_dev.max(axis=0) <= CONDITIONED
        shown = cond if cond.any() else np.ones_like(cond)
        out.append(
            {
                "d": d,
                "m": m,
                "loss": loss,
                "seeds": config.seeds,
                "steps": config.steps,
                "eta": step,
                "dev": dev.max(axis=0).tolist(),
                "loss_dev": r.loss_dev.max(axis=0).tolist(),
                "attn_dev": r.attn_dev.max(axis=0).tolist(),
                "twin": r.twin_dev.max(axis=0).tolist(),
                "control": control.max(axis=0).tolist(),
                "final_loss": r.loss[-1].tolist(),
                "curve_dev": dev[:, shown].max(axis=1).tolist(),
                "curve_twin": r.twin_dev[:, shown].max(axis=1).tolist(),
                "curve_control": np.median(control, axis=1).tolist(),
                "curve_loss": np.median(r.loss, axis=1).tolist(),
            }
        )
    return out


def label(r: Record) -> str:
    return f"d={r['d']}, m={r['m']}, {r['loss']}"


def analyse(r: Record) -> dict:
    """One size's numbers: the conditioned replicas, their largest deviation and the control's
    smallest, each with its bootstrap 95% interval over the conditioned replicas."""
    dev, twin, control = (np.asarray(r[k], dtype=float) for k in ("dev", "twin", "control"))
    cond = twin <= CONDITIONED
    out: dict = {"n": int(cond.sum()), "seeds": len(dev), "chaotic_max_dev": None}
    if (~cond).any():
        out["chaotic_max_dev"] = float(dev[~cond].max())
    if not cond.any():
        return out
    for key, values, largest in (("max_dev", dev[cond], True), ("control", control[cond], False)):
        out[key] = extreme(values, largest)
    return out


def extreme(values: np.ndarray, largest: bool) -> tuple[float, float, float]:
    """The largest (or smallest) value and its bootstrap 95% interval over replicas (the
    interval's far end is the value itself: no resample exceeds it)."""

    def pick(draw: list[np.ndarray]) -> float:
        return float(draw[0].max() if largest else draw[0].min())

    value = pick([values])
    return stats.holding(value, *stats.interval(stats.bootstrap([values], pick)))


def estimates_of(r: Record, a: dict) -> list[dict]:
    out = [stats.rate_estimate(f"conditioned share ({label(r)})", a["n"], a["seeds"])]
    if a["n"]:
        out.append(stats.estimate(f"largest deviation D ({label(r)})", *a["max_dev"]))
        out.append(stats.estimate(f"control's smallest deviation ({label(r)})", *a["control"]))
    return out


def _decide(rows: list[tuple[Record, dict]]) -> tuple[str, str, str]:
    """The verdict, its reason and the reason in short (``CRITERION``)."""
    judged = [(r, a) for r, a in rows if a["n"]]
    worst = max(judged, key=lambda p: p[1]["max_dev"][0], default=None)
    if worst is not None and worst[1]["max_dev"][0] > MISMATCH:
        dev = f"{worst[1]['max_dev'][0]:.2g} > {MISMATCH:g}"
        return (
            stats.NOT_REPRODUCED,
            f"at {label(worst[0])} a conditioned replica deviates by {dev}: the CLS block does "
            "not train like the query-vector model",
            stats.fitting(f"deviation {dev} at {label(worst[0])}", f"a replica deviates by {dev}"),
        )
    few = [label(r) for r, a in rows if a["n"] < max(1, MIN_CONDITIONED * a["seeds"])]
    if few or worst is None:
        return (
            stats.INCONCLUSIVE,
            f"fewer than half the replicas are conditioned at {', '.join(few)}: a smaller "
            "eta_scale or fewer steps keep the trajectories away from chaos and would decide",
            stats.several(
                few,
                "under half the replicas conditioned at {}",
                "under half the replicas conditioned at {} sizes",
            )
            if few
            else "fewer than half the replicas are conditioned",
        )
    weak = min(judged, key=lambda p: p[1]["control"][0])
    top = worst[1]["max_dev"][0]
    control = f"{weak[1]['control'][0]:.2g}"
    if top > TOLERANCE:
        return (
            stats.INCONCLUSIVE,
            f"the largest deviation {top:.2g} (at {label(worst[0])}) is above {TOLERANCE:g} but "
            f"not above {MISMATCH:g}",
            f"largest deviation {top:.2g} > {TOLERANCE:g} but not > {MISMATCH:g}",
        )
    if weak[1]["control"][0] <= MISMATCH:
        return (
            stats.INCONCLUSIVE,
            f"deviations stay <= {top:.2g}, but the control deviates by only {control} at "
            f"{label(weak[0])}: the steps there could not show a mismatch; a smaller eta_scale "
            "or more steps would",
            stats.fitting(
                f"control deviates by only {control} at {label(weak[0])}",
                f"the control deviates by only {control} <= {MISMATCH:g}",
            ),
        )
    return (
        stats.REPRODUCED,
        f"on {sum(a['n'] for _, a in judged)} conditioned replicas over {len(rows)} sizes and "
        f"losses the largest deviation of loss and attention is {top:.2g} <= {TOLERANCE:g}, "
        f"while the control (W_Q and W_K trained) deviates by >= {control}",
        f"largest deviation {top:.2g} <= {TOLERANCE:g}; control's >= {control}",
    )


def verdict(records: list[Record], config: Config) -> dict:
    rows = [(r, analyse(r)) for r in sorted(records, key=lambda r: (r["loss"], r["d"]))]
    estimates = [e for r, a in rows for e in estimates_of(r, a)]
    measured = "; ".join(
        f"{label(r)}: {a['n']}/{a['seeds']} conditioned"
        + ("" if a["chaotic_max_dev"] is None else f" (chaotic max D {a['chaotic_max_dev']:.2g})")
        for r, a in rows
    )
    measured += "; " + "; ".join(
        stats.fmt_estimate(e) for e in estimates if "share" not in e["name"]
    )
    verdict_, reason, summary = _decide(rows)
    criterion = CRITERION + f" ({config.steps} steps of eta = {config.eta_scale:g} d^2 ln d)"
    return stats.claim(verdict_, reason, measured, criterion, estimates, summary=summary)


# --- the criterion's error rates (SPEC Part E) ------------------------------------------------


def _log_fit(values: list[float]) -> tuple[float, float]:
    """Mean and standard deviation of ``log10`` (zeros at ``1e-20``; at least 0.1 spread)."""
    logs = np.log10(np.maximum(np.asarray(values, dtype=float), 1e-20))
    return float(logs.mean()), max(0.1, float(logs.std(ddof=1)) if len(logs) > 1 else 0.1)


def hypotheses(records: list[Record], config: Config) -> calibration.Hypotheses:
    """SPEC Part E: the paper's side draws each replica's deviation from the log-normal fitted to
    the conditioned replicas' ``D`` (rounding level), the rival from the control's log-normal
    (the mismatch a wrong map of the step gives); both draw conditioned replicas at the pooled
    measured share (chaotic ones with twin ``1e-8``) and the control from its fit."""
    dev, twin, control = ([x for r in records for x in r[k]] for k in ("dev", "twin", "control"))
    cond = [i for i, t in enumerate(twin) if t <= CONDITIONED]
    if not cond:
        raise ValueError("no conditioned replica to fit the rounding level to")
    share = len(cond) / len(twin)
    paper_fit = _log_fit([dev[i] for i in cond])
    twin_fit, control_fit = _log_fit([twin[i] for i in cond]), _log_fit(control)

    def simulate(fit: tuple[float, float]):
        def draw(cfg: Config, rng: np.random.Generator) -> list[Record]:
            out = []
            for d, m, loss in jobs_of(cfg):
                n = cfg.seeds
                ok = rng.random(n) < share
                t = np.where(ok, np.minimum(10 ** rng.normal(*twin_fit, n), CONDITIONED), 1e-8)
                row = {"d": d, "m": m, "loss": loss, "seeds": n, "twin": t.tolist()}
                row["dev"] = (10 ** rng.normal(*fit, n)).tolist()
                row["control"] = (10 ** rng.normal(*control_fit, n)).tolist()
                out.append(row)
            return out

        return draw

    return calibration.Hypotheses(
        paper=simulate(paper_fit),
        rival=simulate(control_fit),
        paper_law=f"deviations at the rounding level: log10 D ~ N({paper_fit[0]:.2f}, "
        f"{paper_fit[1]:.2f}) (fitted to the conditioned replicas)",
        rival_law=f"a wrong map of the step: log10 D ~ N({control_fit[0]:.2f}, "
        f"{control_fit[1]:.2f}) (the control's, W_Q and W_K trained)",
        noise=f"conditioned share {share:.2f} (binomial per replica), twin and control "
        "log-normal as measured",
    )


# --- figure and cost ------------------------------------------------------------------------


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    """Left: per size and step the largest deviation over the conditioned replicas (solid), their
    twin's (dashed), the control's median (dotted); right: each replica's ``D`` against its twin,
    with the tolerance, the mismatch level and the conditioning limit."""
    path = out / "cls_equivalence.png"
    floor = 1e-20
    with plotting.figure(path, ncols=2) as (_, (left, right)):
        for i, r in enumerate(sorted(records, key=lambda r: (r["loss"], r["d"]))):
            color = f"C{i % 10}"
            if "curve_dev" in r:
                steps = np.arange(len(r["curve_dev"]))
                for key, style in (
                    ("curve_dev", "-"),
                    ("curve_twin", "--"),
                    ("curve_control", ":"),
                ):
                    left.plot(steps, np.maximum(r[key], floor), style, color=color)
                left.plot([], [], "-", color=color, label=label(r))
            right.scatter(
                np.maximum(r["twin"], floor), np.maximum(r["dev"], floor), s=10, color=color
            )
            right.scatter(
                np.maximum(r["twin"], floor),
                np.maximum(r["control"], floor),
                s=10,
                marker="x",
                color=color,
                label=f"{label(r)} (x: control)",
            )
        for ax in (left, right):
            ax.set_yscale("log")
            ax.axhline(TOLERANCE, color="g", lw=0.8, ls="--")
            ax.axhline(MISMATCH, color="r", lw=0.8, ls="--")
            ax.legend(fontsize=6)
        right.set_xscale("log")
        right.axvline(CONDITIONED, color="grey", lw=0.8)
        left.set_xlabel("step (solid: CLS vs query-vector; dashed: twin; dotted: control)")
        left.set_ylabel("max |deviation| of loss and attention (conditioned)")
        right.set_xlabel("rounding twin's deviation T (conditioned left of the grey line)")
        right.set_ylabel("deviation D per replica (dots), control (x)")
        left.set_title("CLS transformer vs query-vector model (green 1e-9, red 1e-6)", fontsize=9)
    return [path]


def _job_sizes(c: costs.Config) -> list[float]:
    """Per job of a stored config: inputs x heads x (d+1) x (d+m+3), a score array's size."""
    return [
        (2**d if loss == "cube" else 1) * 2 * (d + 1) * (d + m + 3)
        for d, m in c["sizes"]
        for loss in c["losses"]
        if loss == "population" or d <= CUBE_D_MAX
    ]


def work(c: costs.Config) -> float:
    """Per step, four trajectories, each a ``(d+1) x (d+1)`` attention per head and input."""
    return sum(4.0 * c["steps"] * c["seeds"] * n for n in _job_sizes(c))


def peak(c: costs.Config) -> float:
    """About ten float64 arrays of the scores' size (tokens, Q, K, scores, their grads):
    measured, a population job's resident memory grew by 0.75 GB at ``d = 256`` and 2.6 GB
    at ``d = 512`` (64 seeds, beyond a tiny job's 0.2 GB), against 0.75 and 2.85 GB here."""
    return max(80.0 * c["seeds"] * n for n in _job_sizes(c))


EXPERIMENT = register(
    Experiment(
        work=work,
        peak=peak,
        name="cls-equivalence",
        claim="A3",
        title="A CLS-token transformer trains like the query-vector model",
        paper="The authors prove this simplified model is mathematically equivalent to a "
        "standard single-layer Transformer with a CLS token and structural masking, where the "
        "learning dynamics of the attention matrices reduce to the evolution of the query "
        "vectors.",
        config_type=Config,
        run=run,
        figure=figure,
        verdict=verdict,
        split=split,
        hypotheses=hypotheses,
        tuned_on=(0, 3),
        presets={
            "quick": {"sizes": [(8, 4), (16, 8), (64, 16)], "seeds": 8, "steps": 10},
            "standard": {
                "sizes": [(6, 4), (8, 4), (16, 8), (64, 16), (128, 20), (256, 24)],
                "seeds": 32,
                "steps": 20,
            },
            "full": {
                "sizes": [(8, 4), (10, 6), (16, 8), (64, 16), (256, 24), (512, 28), (1024, 32)],
                "seeds": 64,
                "steps": 40,
            },
        },
    )
)
