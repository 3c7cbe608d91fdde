"""Turn stored records into claims (figure + verdict) for a reproduction (SPEC A7, B5, C)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..engine.jobs import Job, jobs_for
from ..engine.store import Store
from ..experiments import base


def command_for(name: str, preset: str) -> str:
    return f"attnsep reproduce --{preset} --only {name}"


def planned_jobs(names: list[str], preset: str) -> dict[str, list[Job]]:
    """Each experiment's jobs for ``preset``."""
    return {name: jobs_for(name, base.get(name).config(preset)) for name in names}


def build_claims(store: Store, names: list[str], preset: str, out: Path) -> list[dict[str, Any]]:
    """One claim per experiment from the jobs the store holds; figures go to ``out``."""
    claims = []
    for name, jobs in planned_jobs(names, preset).items():
        exp = base.get(name)
        config = exp.config(preset)
        rows = {row["config_hash"]: row for row in store.rows(name, [j.key for j in jobs])}
        finished = [rows[j.key] for j in jobs if j.key in rows and rows[j.key]["status"] == "done"]
        claim: dict[str, Any] = {
            "claim": exp.claim,
            "name": name,
            "title": exp.title,
            "paper": exp.paper,
            "section": exp.section,
            "command": command_for(name, preset),
            "preset": preset,
            "config": config.model_dump(mode="json"),
            "jobs": len(jobs),
            "jobs_done": len(finished),
            "seconds": round(sum(r["seconds"] for r in finished), 3),
        }
        if len(finished) < len(jobs):
            errors = [
                rows[j.key]["error"].splitlines()[0]
                for j in jobs
                if j.key in rows and rows[j.key]["status"] == "failed"
            ]
            claim.update(
                measured=f"{len(finished)} of {len(jobs)} jobs finished"
                + (f"; first error: {errors[0]}" if errors else ""),
                verdict="incomplete",
                reason="not every job of this claim has finished; rerun the command to resume",
                estimates=[],
                figures=[],
            )
        else:
            records = [rec for row in finished for rec in row["records"]]
            claim.update(exp.verdict(records, config))
            claim.setdefault("reason", claim.get("criterion", ""))
            claim.setdefault("estimates", [])
            claim["figures"] = [
                str(p.relative_to(out)) for p in exp.figure(records, config, out / "figures")
            ]
        claims.append(claim)
    return claims
