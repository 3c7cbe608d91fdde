"""A7.6's verdict on the transformer's side, with the FCN's check (A7.6b) as its companion: the
criterion (``config.Config``), its reason and summary (SPEC A7.6, Parts D–F)."""

from __future__ import annotations

import math
from typing import Any

from ...metrics import calibration, stats
from ..base import Record
from ..xor_width.verdict import RIVAL_MIN_ALPHA, growth_summary
from .analysis import _estimates, _num, _table, analyse
from .check import fcn_check
from .config import TRANSFORMER_MIN_D, Config

TRANSFORMER_FAIL_EXPONENT = 0.5
"""``not reproduced`` when the transformer exponent's lower bound reaches this."""
CRITERION = (
    f"claim judged on the transformer at d >= {TRANSFORMER_MIN_D} (success: test sign error "
    "<= 1% on fresh samples in >= 90% of replicas), at least 4 sizes; m* made continuous by "
    "interpolating the crossing, bootstrap 95% intervals over replicas. (i) curvature: the local "
    "log-log exponent on the larger half of the d's interval-separated below the smaller half's, "
    f"or its upper end below {RIVAL_MIN_ALPHA}, sides with polylog; its lower end >= "
    f"{RIVAL_MIN_ALPHA} with no such fall sides with the power law; (ii) held-out: a(ln d)^p and "
    f"c d^alpha (alpha >= {RIVAL_MIN_ALPHA}) fitted on the smaller half, mean "
    "|ln(predicted/measured)| on the larger half: the rival's minus the paper's error with its "
    "95% interval above 0 sides with polylog, below 0 with the power law. Reproduced when both "
    "rules side with polylog and the transformer exponent's lower bound < "
    f"{TRANSFORMER_FAIL_EXPONENT}; not reproduced when that lower bound >= "
    f"{TRANSFORMER_FAIL_EXPONENT} and the rules do not both side with polylog; inconclusive "
    "otherwise (criterion version 3). The FCN side is the check A7.6b"
)


def _measured(a: dict[str, Any]) -> str:
    from ..xor_growth_text import growth_text

    t, g = a["t"], a["growth"]
    crossings = ", ".join(f"{v:.3g}" for v in a["crossing"])
    text = (
        f"transformer (threshold m*, params 2m): {_table(t)}; interpolated crossings m* = "
        f"[{crossings}]. Exponents of params vs d: transformer "
        f"{stats.fmt_interval(_num(a['alpha'][0]), *a['alpha'][1:])}, polylog p "
        f"{stats.fmt_interval(_num(a['p'][0]), *a['p'][1:])}"
    )
    if "curvature" in g:
        text += f"; {growth_text(g)}"
    if a["excluded"]:
        text += f"; transformer d = {a['excluded']} run but not judged (collapse-limited)"
    return text + "."


def decide(a: dict[str, Any]) -> str:
    """The criterion (``Config``) on ``analyse``'s numbers."""
    favours_paper = a["growth"]["decided"] == "paper"
    contradicts = a["alpha"][1] >= TRANSFORMER_FAIL_EXPONENT
    if favours_paper and not contradicts:
        return stats.REPRODUCED
    if contradicts and not favours_paper:
        return stats.NOT_REPRODUCED
    return stats.INCONCLUSIVE


def _reason(a: dict[str, Any], outcome: str) -> str:
    from ..xor_growth_text import growth_reason

    g, tlo = a["growth"], a["alpha"][1]
    if outcome == stats.NOT_REPRODUCED:
        return (
            f"the transformer's parameters grow at least like d^{tlo:.2f} (exponent lower bound "
            f">= {TRANSFORMER_FAIL_EXPONENT}) and the growth rules do not both side with polylog"
        )
    said = "the transformer's m*: " + growth_reason(g, len(a["t"].sizes), RIVAL_MIN_ALPHA)
    if outcome == stats.REPRODUCED:
        return said
    missing = [f"d={p['d']}" for p in a["t"].points if p["m_star"] is None]
    if missing:
        said = f"the transformer never reached the target at {', '.join(missing)}"
    elif g["decided"] == "paper":
        said += f", but its exponent's lower bound {tlo:.2f} >= {TRANSFORMER_FAIL_EXPONENT}"
    where = a["separating_d"]
    if where:
        said += (
            f"; the transformer laws fitted on all sizes first differ by more than the measured "
            f"interval width at d = 2^{int(math.log2(where))}"
        )
    return said


def _summary(a: dict[str, Any], outcome: str) -> str:
    """``_reason`` in short (a claim's ``summary``)."""
    g, tlo, fail = a["growth"], a["alpha"][1], TRANSFORMER_FAIL_EXPONENT
    if outcome == stats.NOT_REPRODUCED:
        return stats.fitting(
            f"the transformer's params grow at least like d^{tlo:.2f} (>= {fail})",
            f"transformer exponent's lower bound {tlo:.2f} >= {fail}",
        )
    missing = [p["d"] for p in a["t"].points if p["m_star"] is None]
    if outcome == stats.INCONCLUSIVE and missing:
        return stats.several(
            missing,
            "the transformer never reached the target at d={}",
            "the transformer never reached the target at {} d's",
        )
    if outcome == stats.INCONCLUSIVE and g["decided"] == "paper":
        return stats.fitting(
            f"polylog by the rules, but exponent lower bound {tlo:.2f} >= {fail}",
            f"exponent lower bound {tlo:.2f} >= {fail} despite the rules",
        )
    return growth_summary(g, len(a["t"].sizes))


def verdict(records: list[Record], config: Config) -> dict:
    """A7.6 on the transformer's side, with A7.6b (``fcn_check``) as its companion; on simulated
    records (``calibration.in_simulation``) the companion is left out."""
    a = analyse(records)
    outcome = decide(a)
    g = a["growth"]
    rules = [g[k][e] for k, e in (("curvature", "larger"), ("held_out", "difference")) if k in g]
    exponents = [
        stats.estimate("transformer exponent", *a["alpha"]),
        stats.estimate("transformer polylog exponent p (m* = a (ln d)^p)", *a["p"]),
    ]
    extra: dict[str, Any] = {}
    check = None if calibration.in_simulation() else fcn_check(a)
    if check is not None:
        extra["companions"] = [check]
    return stats.claim(
        outcome,
        _reason(a, outcome),
        _measured(a),
        CRITERION,
        _estimates(a["t"]) + exponents + rules,
        summary=_summary(a, outcome),
        decided=g["decided"],
        separating_d=a["separating_d"],
        **extra,
    )
