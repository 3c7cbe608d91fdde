"""A7.5b — the paper's empirical "``O(d)``" samples (SPEC A7.5, Part E), a companion entry of
A7.5a judged from the same run: ``n*(d)`` by certified success and by test accuracy, at the
fixed width and along the width schedule ``m(d)``, ``c d`` against ``c d^2`` (or steeper).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..metrics import calibration, stats
from ..metrics.stats import FixedPower, fmt_interval
from ..train.search import probe_matrix
from .base import Record
from .sample_search import GRID, analyse, run_records, series, simulate, stuck_share

PAPER, RIVAL = FixedPower(1.0), stats.POWER
RIVAL_MIN_EXPONENT = 2.0
"""The paper's law ``n* = c d`` and the rival ``n* = c d^alpha`` with ``alpha >= 2``."""
JUDGED = "test"
"""The success definition judged (the paper's experiments report test accuracy); the certified
one is reported beside it."""
MIN_SIZES = 4
"""Fewest values of ``d`` for a decision: two fitted, two predicted."""

CRITERION = (
    "A7.5b (criterion version 1, written before any A7.5b data were seen): n*(d), the smallest "
    "half-octave n whose one-empirical-step success rate reaches the target times the population "
    "step's on the same replicas, by test accuracy >= the run's test_accuracy on fresh inputs "
    "(judged) and by certified success (reported), at the fixed width and along m(d); per width "
    "c d and c d^alpha with alpha >= 2 fitted on the smaller half of the d's, judged on the "
    "larger half (intervals widened by the half-octave grid, predictions with their bootstrap "
    "band): reproduced when at every width only c d predicts, not reproduced when at every width "
    f"only c d^(>=2) does, inconclusive otherwise or with fewer than {MIN_SIZES} values of d"
)


def comparison(rows: list[Record], config: Any) -> dict[str, Any]:
    """``n*`` per ``d`` of one series (``sample_search.analyse``) and the two laws' held-out
    comparison (``stats.compare_laws``, half-octave grid, bands from the bootstrap draws);
    ``decided`` is ``None`` below ``MIN_SIZES``."""
    a = analyse(rows, config)
    decided = None
    if len(a["d"]) >= MIN_SIZES:
        draws = np.column_stack(a["draws"])
        a["laws"] = stats.compare_laws(
            PAPER, RIVAL, a["d"], a["n"], a["low"], a["high"], RIVAL_MIN_EXPONENT, GRID, draws
        )
        decided = a["laws"]["decided"]
    a["decided"] = decided
    return a


def widths(records: list[Record]) -> list[str]:
    """The widths a run measured, in the order of first appearance."""
    return list(dict.fromkeys(r["width"] for r in records))


def judge(decisions: dict[str, str | None]) -> tuple[str, str]:
    """The verdict and its reason from each width's decision on the judged definition."""
    shown = ", ".join(f"{w}: {d or 'too few d'}" for w, d in decisions.items())
    values = set(decisions.values())
    if None in values:
        return stats.INCONCLUSIVE, (
            f"the held-out test needs at least {MIN_SIZES} values of d ({shown}); "
            "the standard preset runs 9"
        )
    if values == {"paper"}:
        return stats.REPRODUCED, (
            f"at every width only c d predicts the larger d's test-accuracy n* ({shown})"
        )
    if values == {"rival"}:
        return stats.NOT_REPRODUCED, (
            f"at every width c d^alpha with alpha >= {RIVAL_MIN_EXPONENT:g} predicts the larger "
            f"d's test-accuracy n* and c d does not ({shown}): n* grows faster than O(d)"
        )
    if values == {"neither"}:
        return stats.INCONCLUSIVE, (
            f"neither c d nor c d^alpha (alpha >= {RIVAL_MIN_EXPONENT:g}) predicts the larger d's "
            f"test-accuracy n* at any width ({shown}): n* grows between the two, or too noisily"
        )
    return stats.INCONCLUSIVE, (
        f"the widths do not agree on one law alone ({shown}); more seeds or larger d would decide"
    )


def verdict(records: list[Record], config: Any) -> dict[str, Any]:
    """The A7.5b entry: the judged definition decides (``judge``); each series' ``n*`` per
    ``d``, its exponent and both laws' predictions are reported (in a simulation, which reads
    only the verdict, the judged definition alone)."""
    estimates, measured, decisions = [], [], {}
    reported = (JUDGED,) if calibration.in_simulation() else (JUDGED, "certified")
    for width in widths(records):
        for outcome in reported:
            a = comparison(series(records, width, outcome), config)
            if outcome == JUDGED:
                decisions[width] = a["decided"]
            label = f"{outcome}, {width} width"
            estimates += [
                stats.estimate(f"n* ({label}, d={int(d)})", n, lo, hi)
                for d, n, lo, hi in zip(a["d"], a["n"], a["low"], a["high"], strict=True)
            ]
            estimates.append(stats.estimate(f"exponent alpha ({label})", *a["alpha"]))
            measured.append(_measured(label, a))
    outcome, reason = judge(decisions)
    return stats.claim(outcome, reason, "; ".join(measured), CRITERION, estimates)


def _measured(label: str, a: dict[str, Any]) -> str:
    values = ", ".join(
        f"{int(d)}: {fmt_interval(n, lo, hi)}"
        for d, n, lo, hi in zip(a["d"], a["n"], a["low"], a["high"], strict=True)
    )
    text = f"{label}: n* by d {values}; alpha = {fmt_interval(*a['alpha'])}"
    if a["decided"] is not None:
        text += f"; held out: {a['decided']}"
    return text


# --- calibration (SPEC Part E) ---------------------------------------------------------------


def hypotheses(records: list[Record], config: Any) -> calibration.Hypotheses:
    """The paper: each width's test-accuracy ``n* = c d`` (``c`` fitted to the run's finite
    ``n*``); the rival: ``n* = c d^2``, the edge of the rival's region. Both with the run's
    replica noise (``calibration.log_spread`` of its test searches) and, per width and ``d``,
    its population rates and share of replicas stuck below the target."""
    shapes = {}
    for width in widths(records):
        rows = series(records, width, JUDGED)
        shapes[width] = {
            "m": {rec["d"]: rec["m"] for rec in records if rec["width"] == width},
            "rates": {r["d"]: (r["population"]["rate"], stuck_share(r)) for r in rows},
            "paper": _fitted(PAPER, rows),
            "rival": _fitted(FixedPower(RIVAL_MIN_EXPONENT), rows),
        }
    all_rows = [r for width in shapes for r in series(records, width, JUDGED)]
    spread = calibration.log_spread([probe_matrix(r["probes"]) for r in all_rows])

    def simulated(side: str):
        def draw(cfg: Any, rng: np.random.Generator) -> list[Record]:
            out = []
            for width, shape in shapes.items():
                law = shape[side]
                searches = simulate(law, spread, shape["rates"], cfg, rng)
                for rec, search in zip(run_records(searches, width, 0), searches, strict=True):
                    rec["m"] = shape["m"].get(search["d"], 0)
                    out.append(rec)
            return out

        return draw

    return calibration.Hypotheses(
        paper=simulated("paper"),
        rival=simulated("rival"),
        paper_law="n* = c d per width (c fitted to the run's test-accuracy n*)",
        rival_law="n* = c d^2 per width (c fitted to the run's test-accuracy n*)",
        noise=f"per-replica thresholds log-normal with log-spread {spread:.3g} (the run's test "
        "searches); population rates and stuck shares as measured per width and d",
    )


def _fitted(law: FixedPower, rows: Sequence[Record]):
    """``law`` fitted to the finite ``n*`` of ``rows`` (through ``n_max`` at the smallest ``d``
    when none is finite), as a function of ``d``."""
    found = [(float(r["d"]), float(r["n_star"])) for r in rows if r["n_star"] is not None]
    if not found:
        found = [(float(rows[0]["d"]), float(rows[0]["n_max"]))]
    ds, n_stars = zip(*found, strict=True)
    params = law.fit(ds, n_stars)
    return lambda d: float(law.predict(params, [d])[0])


def calibrate(records: list[Record], config: Any, candidates) -> dict[str, Any] | None:
    """A7.5b's error rates at ``config`` (``calibration.calibrate``), with ``candidates`` tried
    when they miss the goals; ``None`` when the run has no test searches to simulate from."""
    if not records:
        return None
    return calibration.calibrate(
        verdict, hypotheses(records, config), config, candidates, seed=config.seed
    )
