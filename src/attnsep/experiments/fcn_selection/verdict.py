"""B5.4's verdict from the records: a check that no trained FCN goes below the floor, with both
models' widths needed reported beside it (SPEC B5.4, Parts D, F; the criterion in
``config.Config``)."""

from __future__ import annotations

import math
import warnings

import numpy as np

from ...metrics import calibration, stats
from ...train.search import probe_matrix
from ..base import Record
from .config import PASS_RATE, TARGET, Config, Setting

TRANSFORMER_SHARE = 0.25
"""Reported beside the check: the transformer's width needed against ``TRANSFORMER_SHARE · Td``."""
MARGIN = 3.0
"""A net is below the floor when its loss + ``MARGIN`` s.e. < the floor (SPEC Part D)."""

CRITERION = (
    f"a check: confirmed when no trained FCN has loss + {MARGIN:g} s.e. < the floor at its width "
    "and at least one trained FCN is narrower than Td (a positive floor); check failed otherwise "
    "(the floor is a theorem: a net below it is a bug in attnsep); the FCN's and the "
    f"transformer's widths needed (loss <= {TARGET} x uniform) reported beside, the latter "
    f"against {TRANSFORMER_SHARE} Td (criterion version 3)"
)


def setting_of(r: Record) -> Setting:
    """The record's setting ``(T, d, q)``."""
    return (r["T"], r["d"], r["q"])


def _fcn_width_needed(nets: list[Record]) -> tuple[float, float, float]:
    """Smallest grid width whose mean loss over the nets is ``≤ TARGET × uniform``, with its
    bootstrap interval over the nets (replica ``e`` of every width resampled together)."""
    grid = sorted({r["width"] for r in nets})
    replicas = sorted({r["replica"] for r in nets})
    goal = TARGET * nets[0]["uniform"]
    loss = {(r["replica"], r["width"]): r["loss"] for r in nets}
    table = np.array([[loss.get((e, w), math.nan) for w in grid] for e in replicas])

    def needed(means: np.ndarray) -> np.ndarray:
        passing = means <= goal
        return np.where(
            passing.any(axis=-1), np.asarray(grid, float)[passing.argmax(axis=-1)], math.inf
        )

    rng = np.random.default_rng(0)
    rows = stats.resample_rows(len(table), rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a width no resampled net reached
        draws = needed(np.nanmean(table[rows], axis=1))
    return (float(needed(np.nanmean(table, axis=0))), *stats.interval(draws))


def _transformer_width(record: Record) -> tuple[float, float, float]:
    """``d + m_p*`` and its bootstrap interval (``inf`` when never reached)."""
    if not record["probes"]:
        return math.inf, math.inf, math.inf
    sizes, outcomes = probe_matrix(record["probes"])
    point, draws = stats.threshold_draws(sizes, outcomes, PASS_RATE)
    low, high = stats.interval(draws)
    return point + record["d"], low + record["d"], high + record["d"]


def summarize(records: list[Record]) -> list[dict]:
    """Per setting: the nets, their worst margin to the floor, and both widths needed."""
    out = []
    for setting in sorted({setting_of(r) for r in records}):
        T, d, q = setting
        nets = [r for r in records if r["model"] == "fcn" and setting_of(r) == setting]
        narrow = [r for r in nets if r["width"] < T * d]
        selector = next(
            (r for r in records if r["model"] == "transformer" and setting_of(r) == setting), None
        )
        closest = min(narrow, key=lambda r: r["loss"] / r["floor"], default=None)
        out.append(
            {
                "setting": setting,
                "Td": T * d,
                "nets": nets,
                "narrow": len(narrow),
                "below": below_floor(nets),
                "closest": closest,
                "fcn": _fcn_width_needed(nets) if nets else None,
                "transformer": None if selector is None else _transformer_width(selector),
                "selector": selector,
            }
        )
    return out


def setting_name(setting: Setting) -> str:
    """The setting as the texts and figure name it."""
    T, d, q = setting
    return f"(T={T}, d={d}, q={q})"


def _row_estimates(row: dict) -> list[dict]:
    """One setting's estimates: ``Td``, both widths needed, the lowest FCN loss / floor."""
    name, Td = setting_name(row["setting"]), row["Td"]
    out = [stats.estimate(f"Td {name}", Td, Td, Td)]
    if row["fcn"] is not None:
        top = max(r["width"] for r in row["nets"])
        label = f"FCN width needed {name} (grid up to {top}; n/a: not reached)"
        out.append(stats.estimate(label, *row["fcn"]))
    if row["transformer"] is not None:
        out.append(stats.estimate(f"transformer width needed {name}", *row["transformer"]))
    c = row["closest"]
    if c is not None:
        ratio, half = c["loss"] / c["floor"], 1.96 * c["stderr"] / c["floor"]
        label = f"lowest FCN loss / floor {name} (w={c['width']})"
        out.append(stats.estimate(label, ratio, ratio - half, ratio + half))
    return out


def below_floor(nets: list[Record]) -> list[Record]:
    """The nets whose loss + ``MARGIN`` s.e. is below the floor at their width."""
    return [r for r in nets if r["loss"] + MARGIN * r["stderr"] < r["floor"]]


def _transformer_note(rows: list[dict]) -> str:
    """Per setting whether the transformer's width needed has its upper end ``<=
    TRANSFORMER_SHARE · Td`` (reported, not decided on)."""
    notes = []
    for row in rows:
        if row["transformer"] is not None:
            ok = row["transformer"][2] <= TRANSFORMER_SHARE * row["Td"]
            notes.append(f"{setting_name(row['setting'])} {'yes' if ok else 'no'}")
    if not notes:
        return ""
    return f"; transformer width needed (upper end) <= {TRANSFORMER_SHARE} Td: " + ", ".join(notes)


def verdict(records: list[Record], config: Config) -> dict:
    nets = [r for r in records if r["model"] == "fcn"]
    below, checked = below_floor(nets), sum(r["floor"] > 0 for r in nets)
    result = stats.CHECK_FAILED if below or not checked else stats.CONFIRMED
    if calibration.in_simulation():
        return stats.claim(result, "simulated", "", CRITERION, [], summary="simulated")
    rows = summarize(records)
    estimates, parts = [], []
    for row in rows:
        found = _row_estimates(row)
        estimates += found
        text = [f"{len(row['nets'])} nets, {len(row['below'])} below the floor by 3 s.e."]
        text += [stats.fmt_estimate(e) for e in found[1:]]
        parts.append(f"{setting_name(row['setting'])}, Td = {row['Td']}: " + "; ".join(text))
    measured = ("; ".join(parts) if parts else "no records") + _transformer_note(rows)
    texts: tuple[str, ...]
    if below:
        worst = min(below, key=lambda r: r["loss"] - r["floor"])
        reason = (
            f"{len(below)} trained FCN(s) went below the floor by 3 s.e., e.g. width "
            f"{worst['width']} at {setting_name(setting_of(worst))}: loss {worst['loss']:.4g} ± "
            f"{worst['stderr']:.2g} < floor {worst['floor']:.4g}; the floor is a theorem (SPEC "
            "B4), so this is a bug in attnsep (the floor, the loss's evaluation or its standard "
            "error), not a verdict on the paper"
        )
        texts = (
            f"{len(below)} FCN(s) below the floor by 3 s.e., e.g. width {worst['width']}",
            f"{len(below)} FCN(s) below the floor by 3 s.e.: a bug in attnsep",
        )
    elif not checked:
        reason = (
            "no trained FCN is narrower than Td, where the floor is positive: nothing was "
            "checked (the settings' width grid needs a fraction below 1)"
        )
        texts = ("no trained FCN is narrower than Td: nothing was checked",)
    else:
        reason = (
            f"none of the {checked} trained FCNs narrower than Td (in {len(rows)} settings) is "
            "below the floor by 3 s.e., as the theorem says"
        )
        texts = (
            f"no FCN narrower than Td below the floor by 3 s.e. ({checked} nets)",
            f"none of {checked} FCNs below the floor by 3 s.e.",
        )
    summary = stats.fitting(*texts)
    return stats.claim(result, reason, measured, CRITERION, estimates, summary=summary)
