"""Part C's widths as plain JSON (``summary``), the table ``api.frontier_select`` returns and
``report.frontier_tables`` prints (SPEC Parts C, E)."""

from __future__ import annotations

import math
from typing import Any

from ...metrics import stats
from ..base import Record
from .config import Config
from .run import fcn_params
from .verdict import analyse


def _transformer_point(T: int, q: int, d: int, width: tuple[float, float, float]) -> dict:
    """``m_p* = width - d``, the width and the parameters ``m_p*^2``, each with its interval
    (``width`` is ``(value, low, high)``); ``None`` for ``inf`` (not reached)."""
    m_star = [w - d for w in width]
    out: dict[str, Any] = {"T": T, "q": q}
    for key, values in (("m_star", m_star), ("width", width), ("params", [m * m for m in m_star])):
        for suffix, x in zip(("", "_low", "_high"), values, strict=True):
            out[key + suffix] = int(x) if math.isfinite(x) else None
    return out


def summary(records: list[Record], config: Config) -> dict[str, Any]:
    """``analyse`` as plain JSON, ``{"d", "target", "transformer", "fcn", "fit"}``: per
    ``(T, q)`` the transformer's ``m_p*``, its width ``d + m_p*`` and its trained parameters
    ``m_p*^2`` (the position block), each with its bootstrap 95% interval; the FCN's proven
    minimum first-layer width and its parameters (exact); per ``q`` the fitted slope ``b`` in
    ``ln T``, exponent ``alpha`` and polylog power ``p`` of ``d + m_p*``, the held-out decision
    between ``a + b (ln T)^p`` and ``c T^alpha`` (``None`` with fewer than 3 ``T``'s), and the
    FCN bound's growth."""
    d = config.d
    out: dict[str, Any] = {"d": d, "target": config.target, "transformer": [], "fcn": []}
    out["fit"] = []
    for q, s in analyse(records, config).items():
        columns = zip(s["T"], s["m"], s["low"], s["high"], s["fcn"], strict=True)
        for T, width, low, high, fcn in columns:
            out["transformer"].append(_transformer_point(int(T), q, d, (width, low, high)))
            out["fcn"].append(
                {"T": int(T), "q": q, "width": fcn, "params": fcn_params(int(T), d, fcn)}
            )
        g = s["fcn_growth"]
        out["fit"].append(
            {
                "q": q,
                "transformer": {
                    "slope_ln_T": stats.estimate("b", *s["b"]),
                    "exponent": stats.estimate("alpha", *s["alpha"]),
                    "polylog_exponent": stats.estimate("p", *s["p"]),
                    "held_out": None if s["comparison"] is None else s["comparison"]["decided"],
                },
                "fcn": {
                    "exponent": stats.finite_or_none(g["alpha"]),
                    "slope": stats.finite_or_none(g["slope"]),
                    "affine": g["affine"],
                },
            }
        )
    return out
