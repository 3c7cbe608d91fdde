"""A7.6 / Part D — FFNNs need Omega(d) parameters, the one-step transformer polylog(d).

For each ``d``, each model's threshold (``xor_thresholds.transformer_xor`` and ``fcn_xor``):
the smallest knob (``m`` for the transformer, ``2m`` parameters; the hidden width for the
two-layer ReLU net, ``width (d + 2) + 1`` parameters) at which at least 90% of the replicas
reach test sign error <= 1% on fresh samples. Thresholds, parameter counts and the power-law
exponents of parameters vs ``d`` carry bootstrap intervals over the replicas
(``xor_thresholds.XorFrontier``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from pydantic import Field, model_validator

from ..configs import XorFCNConfig, default
from ..metrics import stats
from . import plotting
from .base import Device, Experiment, ExperimentConfig, InputLength, Record, register

if TYPE_CHECKING:
    from .xor_thresholds import XorFrontier

FCN_MIN_EXPONENT = 0.8
TRANSFORMER_MAX_EXPONENT = 0.25
TRANSFORMER_FAIL_EXPONENT = 0.5
LABELS = {"transformer": "attention, one step (2m)", "fcn": "two-layer ReLU (width·(d+2)+1)"}


class Config(ExperimentConfig):
    """Sizes: the transformer at ``d_values``, the FCN at ``fcn_d_values``; ``seeds`` replicas
    per probe, the same replicas at every probe of a size; the FCN trains by SGD for at most
    ``fcn_steps`` steps (``train.fcn``, early stopping).

    Success (both models, SPEC Part D A7.6): a replica succeeds when its test sign error on
    8192 fresh samples is <= 1% (FCN: after SGD training; transformer: after its one population
    step, ``f(x) = -(gamma_1 . x)(gamma_2 . x)``). A size's threshold is the smallest knob whose
    success rate is >= 0.9. Parameters needed: ``2m`` (transformer), ``width (d + 2) + 1`` (FCN).
    Exponent: ``alpha`` of ``params = c d^alpha`` fitted on all of a model's sizes, with a 95%
    bootstrap interval over the replicas (a draw in which a size is not reached counts +inf).

    Criterion (written before any standard-size numbers were seen): reproduced when the FCN
    exponent's lower bound is >= 0.8 and the transformer exponent's upper bound is <= 0.25;
    not reproduced when the transformer exponent's lower bound is >= 0.5; inconclusive
    otherwise, and also when a model has fewer than two sizes or never reaches the target at
    some size within its knob limit (``m <= 512``, ``width <= 4096``): no exponent is measured.
    """

    d_values: list[InputLength] = Field(default=[16, 32, 64, 128])
    fcn_d_values: list[InputLength] = Field(default=[16, 32, 64, 128])
    seeds: int = Field(default=64, ge=1)
    fcn_steps: int = Field(default=default(XorFCNConfig, "steps"), ge=1)
    device: Device = "cpu"

    @model_validator(mode="after")
    def _has_sizes(self):  # noqa: ANN202
        if not (self.d_values or self.fcn_d_values):
            raise ValueError("d_values and fcn_d_values are both empty")
        return self


def split(config: Config) -> list[Config]:
    """One job per model and size, the costly ones (FCN, large ``d``) first."""
    fcn = [{"d_values": [], "fcn_d_values": [d]} for d in sorted(config.fcn_d_values)[::-1]]
    transformer = [{"d_values": [d], "fcn_d_values": []} for d in sorted(config.d_values)[::-1]]
    return [config.model_copy(update=u) for u in fcn + transformer]


def run(config: Config) -> list[Record]:
    from . import xor_thresholds as xt

    transformer = [
        {
            "model": "transformer",
            "seed": config.seed,
            **xt.transformer_xor(d, config.seeds, config.seed, device=config.device),
        }
        for d in config.d_values
    ]
    fcn = [
        {
            "model": "fcn",
            "seed": config.seed,
            **xt.fcn_xor(
                d, config.seeds, config.seed, steps=config.fcn_steps, device=config.device
            ),
        }
        for d in config.fcn_d_values
    ]
    return transformer + fcn


def _bars(values: list, lows: list, highs: list) -> np.ndarray:
    """Error-bar lengths below and above (an unbounded upper end is drawn to twice the value)."""
    lo = [np.nan if x is None else x for x in lows]
    hi = [2 * y if x is None else x for x, y in zip(highs, values, strict=True)]
    return plotting.bar_lengths(values, lo, hi)


def figure(records: list[Record], config: Config, out: Path) -> list[Path]:
    from . import xor_thresholds as xt

    path = out / "separation_xor.png"
    fits = {m: xt.frontier_of(records, m) for m in xt.KNOBS}
    with plotting.figure(path, ncols=2, width=5.5, height=4.5) as (_, (ax, wx)):
        for model, f in fits.items():
            rows = [p for p in f.points if p["params"] is not None]
            if not rows:
                continue
            ds = [p["d"] for p in rows]
            values = [p["params"] for p in rows]
            bars = _bars(values, [p["params_low"] for p in rows], [p["params_high"] for p in rows])
            value, low, high = f.exponent()
            label = f"{LABELS[model]}: α = {stats.fmt_interval(_num(value), low, high, 2)}"
            handle = ax.errorbar(ds, values, yerr=bars, marker="o", capsize=3, ls="none")
            if math.isfinite(value):
                grid = np.geomspace(min(ds), max(ds), 50)
                params = stats.POWER.fit(ds, values)
                ax.plot(grid, stats.POWER.predict(params, grid), color=handle[0].get_color())
            handle.set_label(label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_xlabel("input length d")
        ax.set_ylabel("trainable parameters needed")
        ax.set_title("Sparse XOR: parameters for 90% of replicas at sign error ≤ 1%", fontsize=9)
        ax.legend(fontsize=8)
        rows = [p for p in fits["fcn"].points if p["width_star"] is not None]
        if rows:
            widths = [p["width_star"] for p in rows]
            bars = _bars(
                widths, [p["width_star_low"] for p in rows], [p["width_star_high"] for p in rows]
            )
            wx.errorbar([p["d"] for p in rows], widths, yerr=bars, marker="o", capsize=3)
        wx.set_xscale("log", base=2)
        wx.set_xlabel("input length d")
        wx.set_ylabel("FCN hidden width needed")
        wx.set_ylim(bottom=0)
        wx.set_title("FCN hidden width needed (parameters: width·(d+2)+1)", fontsize=9)
    return [path]


def _num(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _estimates(f: XorFrontier) -> list[dict]:
    knob = f.knob
    out = []
    for p in f.points:
        at = f"{f.model} d={p['d']}"
        out.append(stats.estimate(f"{at} {knob}", p[knob], p[f"{knob}_low"], p[f"{knob}_high"]))
        out.append(stats.estimate(f"{at} params", p["params"], p["params_low"], p["params_high"]))
        if p["success_rate"] is not None:
            out.append(
                stats.estimate(
                    f"{at} success rate at {knob}",
                    p["success_rate"],
                    p["success_low"],
                    p["success_high"],
                )
            )
    out.append(stats.estimate(f"{f.model} exponent", *f.exponent()))
    return out


def _table(f: XorFrontier) -> str:
    knob = f.knob
    return "; ".join(
        f"d={p['d']}: {knob}={stats.fmt_interval(p[knob], p[f'{knob}_low'], _up(p, knob), 6)}, "
        f"params={stats.fmt_interval(p['params'], p['params_low'], _up(p, 'params'), 6)}"
        for p in f.points
    )


def _up(point: dict, key: str) -> float:
    """The upper bound; ``None`` stands for ``inf``: not reached in some bootstrap draws."""
    high = point[f"{key}_high"]
    return math.inf if high is None else high


def _first_layer(fcn: XorFrontier) -> str:
    rows = [p for p in fcn.points if p["width_star"] is not None]
    if not rows:
        return "the FCN never reached the target"
    lows = [p["width_star_low"] for p in rows]
    highs = [p["width_star_high"] for p in rows]
    high = "inf" if None in highs else f"{max(highs):g}"
    return (
        f"the FCN's growth comes from its dense first layer: its width* stays within "
        f"{min(w for w in lows if w is not None):g}–{high} (intervals) over d={rows[0]['d']}–"
        f"{rows[-1]['d']} while width·(d+2)+1 grows from {rows[0]['params']:g} to "
        f"{rows[-1]['params']:g}"
    )


def verdict(records: list[Record], config: Config) -> dict:
    from . import xor_thresholds as xt

    t = xt.frontier_of(records, "transformer")
    f = xt.frontier_of(records, "fcn")
    (tv, tlo, thi), (fv, flo, fhi) = t.exponent(), f.exponent()
    measured = (
        f"transformer (threshold m*, params 2m): {_table(t)}. FCN (threshold width*, params "
        f"width·(d+2)+1): {_table(f)}. Exponents of params vs d: transformer "
        f"{stats.fmt_interval(_num(tv), tlo, thi)}, FCN {stats.fmt_interval(_num(fv), flo, fhi)}"
        f"; {_first_layer(f)}."
    )
    criterion = (
        f"reproduced when the FCN parameter exponent's lower bound >= {FCN_MIN_EXPONENT} and the "
        f"transformer's upper bound <= {TRANSFORMER_MAX_EXPONENT}; not reproduced when the "
        f"transformer exponent's lower bound >= {TRANSFORMER_FAIL_EXPONENT} (95% bootstrap "
        "intervals; success: test sign error <= 1% on fresh samples in >= 90% of replicas)"
    )
    sizes = sorted({*t.sizes, *f.sizes})
    missing = [
        f"the {m.model} at d={p['d']}" for m in (t, f) for p in m.points if p[m.knob] is None
    ]
    if len(t.sizes) < 2 or len(f.sizes) < 2:
        verdict_, reason = stats.INCONCLUSIVE, "each model needs at least two sizes d for a fit."
    elif missing:
        verdict_ = stats.INCONCLUSIVE
        reason = (
            f"{', '.join(missing)} never reached the target within the knob limit, so its "
            "exponent is not measured; a larger limit or more seeds would decide."
        )
    elif tlo >= TRANSFORMER_FAIL_EXPONENT:
        verdict_ = stats.NOT_REPRODUCED
        reason = (
            f"the transformer's parameters grow at least like d^{tlo:.2f} "
            f"(exponent lower bound >= {TRANSFORMER_FAIL_EXPONENT}), not polylog(d)."
        )
    elif flo >= FCN_MIN_EXPONENT and thi <= TRANSFORMER_MAX_EXPONENT:
        verdict_ = stats.REPRODUCED
        reason = (
            f"the FCN's parameters grow at least like d^{flo:.2f} while the transformer's "
            f"exponent is at most {thi:.2f}."
        )
    else:
        wide = []
        if not flo >= FCN_MIN_EXPONENT:
            wide.append(f"the FCN exponent's lower bound ({flo:.2f}) is below {FCN_MIN_EXPONENT}")
        if not thi <= TRANSFORMER_MAX_EXPONENT:
            wide.append(
                f"the transformer exponent's upper bound ({thi:.2f}) is above "
                f"{TRANSFORMER_MAX_EXPONENT}"
            )
        larger = sizes[-1] * sizes[-1] // sizes[0]  # twice the log-range halves the interval
        verdict_ = stats.INCONCLUSIVE
        reason = (
            f"{' and '.join(wide)} at d={sizes[0]}–{sizes[-1]}; sizes up to d={larger} "
            "(twice the log-range) or more seeds would decide."
        )
    return stats.claim(verdict_, reason, measured, criterion, _estimates(t) + _estimates(f))


EXPERIMENT = register(
    Experiment(
        name="separation-xor",
        claim="A7.6",
        title="FFNNs need Ω(d) parameters, attention polylog(d)",
        paper="Feed-forward nets need a number of parameters linear in d to learn sparse XOR, "
        "while "
        "the two-head transformer needs only polylog(d).",
        config_type=Config,
        run=run,
        figure=figure,
        verdict=verdict,
        split=split,
        version=4,  # 3: one success definition, bootstrap; 4: FCN sets from the task sampler
        presets={
            "quick": {"d_values": [16, 32, 64, 128], "fcn_d_values": [16, 32], "seeds": 8},
            "standard": {
                "d_values": [16, 32, 64, 128, 256, 512, 1024],
                "fcn_d_values": [16, 32, 64, 128, 256],
                "seeds": 64,
            },
            "full": {
                "d_values": [16, 32, 64, 128, 256, 512, 1024],
                "fcn_d_values": [16, 32, 64, 128, 256, 512, 1024],
                "seeds": 64,
                "device": "auto",
            },
        },
    )
)
