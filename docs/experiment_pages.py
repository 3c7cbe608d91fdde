"""The documentation's experiment pages: one per registered experiment, made from the code.

A MkDocs hook (``hooks:`` in ``mkdocs.yml``), so every build writes them from the experiments
as they are and nothing generated is kept in the repository: ``on_config`` puts them in the
nav in place of the entry ``experiments/index.md``, ``on_files`` adds them to the build as
generated files. Each page ``experiments/<name>.md`` shows the experiment's claim and the
paper's statement, how to run it, its config's description and criterion (the config's
docstring), each field of the config (type, default, limits, description), the presets, the
versions, and each preset's jobs with their estimated CPU time (``attnsep reproduce --plan``'s
estimate from the published timings, no calibration). ``experiments/index.md`` lists them all.

To read the pages without a build::

    PYTHONPATH=src python docs/experiment_pages.py OUT_FOLDER
"""

from __future__ import annotations

import argparse
import inspect
import json
import re
import sys
import tempfile
import types
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

INDEX = "experiments/index.md"
TITLE = "Experiments"
PRESETS = ("quick", "standard", "full")
ROLE = re.compile(r":(?:func|class|meth|mod|data|attr|obj):`~?([^`]+)`")
LIMITS = (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<"), ("multiple_of", "multiple of"))


# ------------------------------------------------------------------------ text helpers


def markdown_doc(doc: str | None) -> str:
    """A docstring as Markdown: dedented, Sphinx roles (``:func:`x```) as code (```x```), and a
    line that would open a quote or a heading (``>= 0.9`` wrapped to a line's start) escaped."""
    text = ROLE.sub(lambda m: f"`{m.group(1)}`", inspect.cleandoc(doc or ""))
    return re.sub(r"^(\s*)([>#])", r"\1\\\2", text, flags=re.MULTILINE)


def cell(text: str) -> str:
    """``text`` for a table cell: one line, ``|`` escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def code(text: str) -> str:
    """``text`` as inline code in a table cell: one line (a ``|`` in a code span does not split
    the cell), backticks inside it doubled around."""
    text = " ".join(str(text).split())
    fence = "``" if "`" in text else "`"
    pad = " " if "`" in text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def value_json(value: Any) -> str:
    """A config value as it is written in a config file or ``--set`` (JSON)."""
    from pydantic_core import to_jsonable_python

    return json.dumps(to_jsonable_python(value), ensure_ascii=False)


# ------------------------------------------------------------------------ a config's fields


def type_text(tp: Any) -> str:
    """A field's type as a reader writes it: ``list[int]``, ``'fixed' | 'schedule'``."""
    origin, args = get_origin(tp), get_args(tp)
    if origin is Annotated:
        return type_text(args[0])
    if origin is Literal:
        return " | ".join(repr(a) for a in args)
    if origin in (Union, types.UnionType):
        return " | ".join(type_text(a) for a in args)
    if origin is not None:
        name = getattr(origin, "__name__", str(origin))
        return f"{name}[{', '.join('...' if a is Ellipsis else type_text(a) for a in args)}]"
    if tp is type(None):
        return "None"
    return getattr(tp, "__name__", str(tp))


def constraints(metadata: list[Any]) -> list[str]:
    """The limits among a field's (or an item type's) metadata: ``≥ 2``, ``at least 1 item``,
    ``a registered attention map``."""
    out: list[str] = []
    for item in metadata:
        if type(item).__name__ == "FieldInfo":  # Field(...) inside Annotated[...]
            out += constraints(list(item.metadata))
            continue
        for name, sign in LIMITS:
            value = getattr(item, name, None)
            if value is not None:
                out.append(f"{sign} {value:g}" if isinstance(value, float) else f"{sign} {value}")
        if type(item).__name__ == "MinLen":
            out.append(f"at least {item.min_length} item{'s' if item.min_length != 1 else ''}")
        if type(item).__name__ == "MaxLen":
            out.append(f"at most {item.max_length} items")
        check = getattr(item, "func", None)
        if type(check).__name__ == "Registered":
            out.append(f"a registered {check.label} name")
    return list(dict.fromkeys(out))


def nested_limits(tp: Any, where: str = "") -> list[str]:
    """The limits inside a field's type: its items' (``each ≥ 2``), a mapping's keys' and
    values'."""
    origin, args = get_origin(tp), get_args(tp)
    if origin is Annotated:
        own = [f"{where}{c}" for c in constraints(list(args[1:]))]
        return own + nested_limits(args[0], where)
    if origin in (Union, types.UnionType):
        return [c for a in args for c in nested_limits(a, where)]
    if origin is dict and len(args) == 2:
        return nested_limits(args[0], "keys ") + nested_limits(args[1], "values ")
    if origin in (list, tuple, set, frozenset):
        return [c for a in args if a is not Ellipsis for c in nested_limits(a, "each ")]
    return []


def field_rows(config_type: Any) -> list[str]:
    """The config's fields as Markdown table rows: name, type, default, limits, description."""
    rows = []
    for name, info in config_type.model_fields.items():
        if info.is_required():
            default = "required"
        else:
            default = code(value_json(info.get_default(call_default_factory=True)))
        limits = constraints(list(info.metadata)) + nested_limits(info.annotation)
        text = info.description or ""
        rows.append(
            f"| `{name}` | {code(type_text(info.annotation))} | {default} | "
            f"{cell(', '.join(dict.fromkeys(limits)))} | {cell(text)} |"
        )
    return rows


def preset_rows(experiment: Any) -> list[str]:
    """The fields a preset sets, each preset's value beside the default (``·``: the default)."""
    config_type = experiment.config_type
    typed = {preset: experiment.config(preset) for preset in PRESETS}
    defaults = {
        name: info.get_default(call_default_factory=True)
        for name, info in config_type.model_fields.items()
        if not info.is_required()
    }
    rows = []
    for name in config_type.model_fields:
        values = {p: getattr(typed[p], name) for p in PRESETS}
        shown = [value_json(v) for v in values.values()]
        base = value_json(defaults[name]) if name in defaults else None
        if all(s == base for s in shown):
            continue
        cells = [code(s) if s != base else "·" for s in shown]
        rows.append(f"| `{name}` | {code(base) if base else 'required'} | {' | '.join(cells)} |")
    return rows


# ------------------------------------------------------------------------ the plan


@cache
def plans() -> dict[str, dict[str, Any]]:
    """Per preset, per experiment: jobs and estimated CPU seconds with the estimate's sources,
    from the published timings and the cost model (no calibration, no store)."""
    from attnsep import api
    from attnsep.engine.plan import describe_sources, duration

    out: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as folder:
        missing = Path(folder) / "none.sqlite"  # no store: every job is to run
        for preset in PRESETS:
            found = api.reproduce_plan(preset, store=missing, executor="inline", calibration=0)
            out[preset] = {
                e.name: {
                    "jobs": len(e.costs),
                    "cpu": duration(e.cpu, e.rough),
                    "from": describe_sources(e),
                }
                for e in found.experiments
            }
    return out


# ------------------------------------------------------------------------ the pages


def claim_link(claim: str, docs_dir: Path | None) -> str:
    """A link to the claim's page of the reproduction (``claims/<claim>.md``) when it exists."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", claim).strip(".-")
    if docs_dir is not None and (docs_dir / "claims" / f"{stem}.md").exists():
        return f" The last reproduction's verdict: [claim {claim}](../claims/{stem}.md)."
    return ""


def experiment_page(name: str, docs_dir: Path | None = None) -> str:
    from attnsep.experiments import base

    e = base.get(name)
    module = sys.modules.get(e.config_type.__module__)
    stated = getattr(module, "CRITERION", None)
    lines = [
        f"# {name}: {e.title}",
        "",
        f"Claim **{e.claim}** of [SPEC](../SPEC.md) ({e.section}).{claim_link(e.claim, docs_dir)}",
        "",
        f"> {cell(e.paper)}",
        "",
        "## Run it",
        "",
        "```bash",
        f"attnsep reproduce --quick --only {name}     # or --standard, --full",
        f"attnsep sweep {name} --grid FIELD=V1,V2 --set FIELD=V",
        "```",
        "",
        "```python",
        "import attnsep",
        "",
        f'result = attnsep.run_experiment("{name}", "quick", config={{...}})',
        "result.verdict, result.to_frame()",
        "```",
        "",
        "([`run_experiment`][attnsep.api.run_experiment], [`sweep`][attnsep.api.sweep]; "
        "`config` and `--set` take the fields below.)",
        "",
        "## Config and criterion",
        "",
        f"`{e.config_type.__module__}.{e.config_type.__qualname__}`: criterion version "
        f"**{e.criterion_version}**, results version {e.version}; the criterion was tuned on "
        f"master seed{'s' if len(e.tuned_on) != 1 else ''} "
        f"{', '.join(map(str, e.tuned_on))} (a run on any other seed is confirmatory).",
        "",
        markdown_doc(e.config_type.__doc__),
        "",
    ]
    if isinstance(stated, str):
        lines += ["The report states the criterion as:", "", f"> {cell(stated)}", ""]
    if e.verdict.__doc__:
        where = f"{e.verdict.__module__}.{e.verdict.__qualname__}"
        lines += [f"The verdict function (`{where}`): {markdown_doc(e.verdict.__doc__)}", ""]
    lines += [
        "Error rates: "
        + (
            "the criterion's power and false-pass rate are measured by simulation from the "
            "paper's law and its rival (SPEC Part E)."
            if e.hypotheses is not None
            else "none: this claim is a finding, not a test of a law."
        ),
        "",
        "## Fields",
        "",
        "| Field | Type | Default | Limits | Description |",
        "|---|---|---|---|---|",
        *field_rows(e.config_type),
        "",
        "## Presets",
        "",
        "The fields each preset sets (values as in a config file; `·`: the default).",
        "",
        "| Field | Default | quick | standard | full |",
        "|---|---|---|---|---|",
        *preset_rows(e),
        "",
        "## Cost",
        "",
        "Jobs and estimated CPU time per preset, as `attnsep reproduce --plan --calibration 0` "
        "estimates them with an empty store: from the published timings (a 2-core CPU machine "
        "shared with other work) or the cost model fitted to them.",
        "",
        "| Preset | Jobs | CPU | From (jobs) |",
        "|---|---|---|---|",
    ]
    for preset in PRESETS:
        p = plans()[preset][name]
        lines.append(f"| {preset} | {p['jobs']} | {p['cpu']} | {cell(p['from'])} |")
    lines.append("")
    if any(plans()[preset][name]["cpu"] == "unknown" for preset in PRESETS):
        lines += [
            "*unknown*: neither the published timings nor the cost model cover these jobs; "
            f"`attnsep reproduce --plan --only {name}` times a few of them on your machine.",
            "",
        ]
    if e.work is not None and e.work.__doc__:
        where = f"{e.work.__module__}.{e.work.__qualname__}"
        lines += [f"The work of one job (`{where}`): {markdown_doc(e.work.__doc__)}", ""]
    return "\n".join(lines)


def index_page() -> str:
    from attnsep.experiments import base, catalog

    lines = [
        f"# {TITLE}",
        "",
        "Every registered experiment: one claim of the papers made runnable (SPEC A7, B5, C). "
        "Each page gives the claim, how to run it, the config's fields and presets, the "
        "criterion that judges it and what each preset costs. These pages are generated from "
        "the code at every build (`docs/experiment_pages.py`).",
        "",
        "| Experiment | Claim | Title | Criterion version | quick | standard |",
        "|---|---|---|---|---|---|",
    ]
    for item in catalog():
        name = item["name"]
        e = base.get(name)
        cost = {p: plans()[p][name] for p in ("quick", "standard")}
        lines.append(
            f"| [{name}]({name}.md) | {item['claim']} | {cell(item['title'])} | "
            f"{e.criterion_version} | "
            + " | ".join(f"{c['jobs']} jobs, {c['cpu']}" for c in cost.values())
            + " |"
        )
    lines += ["", "CPU times: see each page's *Cost*.", ""]
    return "\n".join(lines)


def pages(docs_dir: Path | None = None) -> dict[str, str]:
    """Path under ``docs/`` -> Markdown: the index and one page per experiment."""
    from attnsep.experiments import catalog

    out = {INDEX: index_page()}
    for item in catalog():
        out[f"experiments/{item['name']}.md"] = experiment_page(item["name"], docs_dir)
    return out


def nav_entries() -> list[Any]:
    """The nav section: the index, then one entry per experiment (``name (claim)``)."""
    from attnsep.experiments import catalog

    return [INDEX] + [
        {f"{item['name']} ({item['claim']})": f"experiments/{item['name']}.md"}
        for item in catalog()
    ]


# ------------------------------------------------------------------------ the MkDocs hook


def _expand(nav: list[Any]) -> bool:
    """Replace the entry naming ``INDEX`` in ``nav`` (in place) by the section of pages."""
    for i, entry in enumerate(nav):
        if entry == INDEX:
            nav[i] = {TITLE: nav_entries()}
            return True
        if isinstance(entry, dict):
            for title, value in entry.items():
                if value == INDEX:
                    nav[i] = {title: nav_entries()}
                    return True
                if isinstance(value, list) and _expand(value):
                    return True
    return False


def on_config(config: Any) -> Any:
    if config.nav is not None:
        _expand(config.nav)
    return config


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for path, text in pages(Path(config.docs_dir)).items():
        if files.get_file_from_path(path) is None:
            files.append(File.generated(config, path, content=text))
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder to write experiments/*.md into")
    args = parser.parse_args(argv)
    for path, text in pages(Path(__file__).resolve().parent).items():
        target = args.out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
