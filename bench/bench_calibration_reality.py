"""Target 17: pre-registered error rates against reality (SPEC Part E).

A criterion's power is ``P(reproduced | paper's law)``, simulated once from the laws fitted to
the exploratory master seed 3 (``experiments/calibrations/NAME.json``, read here at run time).
If the simulator describes the real runs, the share of fresh master seeds that reproduce a claim
estimates the same number. Per claim, the quick preset on ``SEEDS`` (none the criterion or its
calibration saw) through ``attnsep.api.reproduce`` (jobs kept in ``STORE``, reused on a rerun);
one row per claim: the pre-registered power [95%: Wilson, widened by the parameters' spread]
against the observed ``reproduced`` share k/n [Wilson 95%], and the false fail against the ``not
reproduced`` share. *Agree*: both pairs of intervals overlap. A disagreement means the simulator
is wrong; nothing is tuned to it.
The numbers go to ``OUT``.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from common import ROOT, row

from attnsep import api
from attnsep.metrics import stats

CLAIMS = ("finite-samples", "head-specialization", "polylog-width", "separation-xor")
"""Cheap claims (seconds per seed at quick) whose quick power is neither 0 nor 1."""
PRESET = "quick"
SEEDS = tuple(range(100, 124))
"""Fresh master seeds: not 0-8 (exploratory, pre-registration, replication)."""
STORE = ROOT / "results" / "calibration_reality.sqlite"
REPORT = ROOT / "results" / "bench" / "calibration_reality"
OUT = ROOT / "results" / "bench" / "calibration_reality.json"


def overlap(a: list[float] | tuple[float, float], b: list[float] | tuple[float, float]) -> bool:
    """Whether two closed intervals share a point."""
    return a[0] <= b[1] and b[0] <= a[1]


def share(k: int, n: int) -> dict[str, Any]:
    """An observed frequency with its Wilson 95% interval."""
    return {"k": k, "n": n, "value": k / n, "interval": list(stats.wilson(k, n))}


def compare(entry: dict[str, Any]) -> dict[str, Any]:
    """One claim's comparison from its published entry (``replication`` and ``calibration``)."""
    verdicts = entry["replication"]["verdicts"]
    n = len(verdicts)
    passed = share(sum(v in stats.PASSES for v in verdicts), n)
    failed = share(sum(v in stats.FAILS for v in verdicts), n)
    out: dict[str, Any] = {
        "claim": entry["claim"],
        "name": entry["name"],
        "preset": PRESET,
        "seeds": entry["replication"]["seeds"],
        "verdicts": verdicts,
        "counts": dict(Counter(verdicts)),
        "observed_reproduced": passed,
        "observed_not_reproduced": failed,
    }
    rates = entry.get("calibration")
    if not rates:
        out.update(agree=None, why=entry.get("reason", "no pre-registered error rates"))
        return out
    for key in ("power", "false_fail"):
        out[key] = {"value": rates[key], "interval": rates["intervals"][key]}
    out["simulations"] = rates["simulations"]
    out["source"] = rates.get("source")
    out["agree_power"] = overlap(passed["interval"], rates["intervals"]["power"])
    out["agree_false_fail"] = overlap(failed["interval"], rates["intervals"]["false_fail"])
    out["agree"] = out["agree_power"] and out["agree_false_fail"]
    return out


def shown(rate: dict[str, Any]) -> str:
    low, high = rate["interval"]
    head = f"{rate['k']}/{rate['n']} = " if "k" in rate else ""
    return f"{head}{rate['value']:.2f} [{low:.2f}, {high:.2f}]"


def source(where: dict[str, Any] | None) -> str:
    if not where:
        return "an unnamed run"
    return (
        f"master seed {where['seed']} ({where['preset']}, criterion version "
        f"{where['criterion_version']})"
    )


def bench_row(c: dict[str, Any]) -> dict[str, Any]:
    label = f"17 {c['claim']} {c['name']}: pre-registered power vs {len(c['seeds'])} real seeds"
    counts = ", ".join(f"{v} {k}" for k, v in sorted(c["counts"].items()))
    if c["agree"] is None:
        return row(label, shown(c["observed_reproduced"]), "none", None, "-", None, c["why"])
    power = c["power"]["value"]
    ratio = c["observed_reproduced"]["value"] / power if power else None
    note = (
        f"reproduced {shown(c['observed_reproduced'])} vs power {shown(c['power'])}; not "
        f"reproduced {shown(c['observed_not_reproduced'])} vs false fail "
        f"{shown(c['false_fail'])}; verdicts: {counts}; rates: {c['simulations']} simulations "
        f"per law, fitted on {source(c['source'])}; seeds {c['seeds'][0]}-{c['seeds'][-1]}"
    )
    return row(
        label,
        f"reproduced {shown(c['observed_reproduced'])}",
        f"power {shown(c['power'])}",
        ratio,
        "intervals overlap (power, false fail)",
        c["agree"],
        note,
    )


def run() -> list[dict]:
    REPORT.mkdir(parents=True, exist_ok=True)
    done = api.reproduce(
        PRESET,
        list(CLAIMS),
        seeds=list(SEEDS),
        store=STORE,
        out=REPORT,
        executor=api.executor("process", workers=1),
    )
    entries = {e["name"]: e for e in done.claims}
    comparisons = [compare(entries[name]) for name in CLAIMS]
    OUT.write_text(
        json.dumps(
            {"preset": PRESET, "seeds": list(SEEDS), "store": str(STORE), "claims": comparisons},
            indent=1,
        )
        + "\n"
    )
    return [bench_row(c) for c in comparisons]


if __name__ == "__main__":
    for r in run():
        print(f"{r['benchmark']}: agree={r['met']}\n    {r['note']}")
    print(f"wrote {OUT}")
