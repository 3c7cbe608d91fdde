"""What the commands print for people: tables of strings built from each command's JSON object
(plain data), so the command line and a notebook show the same thing. Loads no numpy (the
frontier tables, which do, are in ``frontier_tables``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .text_table import TextTable, listing

VERDICT_COLORS = {
    "reproduced": "green",
    "not reproduced": "red",
    "inconclusive": "yellow",
    "incomplete": "bright_black",
    "finding": "blue",
    "confirmed": "cyan",
    "check failed": "bold red",
    "not checked": "yellow",
    "unstable": "dark_orange",
}
"""Each verdict's colour in the terminal (``report.html.BADGES`` in the report)."""


def two(values: dict[str, Any], first: str, second: str, fmt: str) -> str:
    """``first / second`` of a summary of values (``metrics.ensemble.summary``)."""
    return f"{values[first]:{fmt}} / {values[second]:{fmt}}"


def success(s: dict[str, Any]) -> str:
    return f"{s['success_rate']:.3f}  (certified error <= {s['success_tol']:g})"


def one_step(s: dict[str, Any]) -> list[TextTable]:
    """``attnsep xor one-step`` (SPEC A5, A6)."""
    gradient = s["gradient"] + ("" if s["samples"] is None else f" (n={s['samples']})")
    return [
        listing(
            "sparse parity: one gradient step",
            [
                ("d, m, heads", f"{s['d']}, {s['m']}, {s['k']}"),
                ("replicas (seed)", f"{s['seeds']} ({s['seed']})"),
                ("attention", s["attention"]),
                ("gradient", gradient),
                ("eta", f"{s['eta']:.6g}"),
                ("trainable parameters", str(s["trainable_params"])),
                ("loss before (mean / median)", two(s["loss_before"], "mean", "median", ".4g")),
                ("loss after (mean / median)", two(s["loss_after"], "mean", "median", ".4g")),
                ("success rate", success(s)),
                ("specialization rate", f"{s['specialization_rate']:.3f}"),
                ("collapse rate", f"{s['collapse_rate']:.3f}"),
                ("support mass (mean / min)", two(s["support_mass"], "mean", "min", ".4f")),
                (
                    "certified error (median / max)",
                    two(s["certified_error"], "median", "max", ".3g"),
                ),
            ],
        )
    ]


def xor_train(s: dict[str, Any]) -> list[TextTable]:
    """``attnsep xor train`` (SPEC A2, A4, A6), the figures' paths as notes."""
    steps = s["steps_to_success"]
    reached = [t for t in steps["values"] if t is not None]
    median = "not reached by half" if steps["median"] is None else f"{steps['median']:g}"
    spread = f" (range {min(reached)}-{max(reached)})" if reached else ""
    data = s["gradient"]
    if s["cube_fraction"] is not None:
        data += f", {s['cube_fraction']:g} of the cube"
    elif s["samples"] is not None:
        data += f", n={s['samples']}"
    if s["batch"] is not None:
        data += f", batch {s['batch']}"
    rows = [
        ("d, m, heads", f"{s['d']}, {s['m']}, {s['k']}"),
        ("replicas (seed)", f"{s['seeds']} ({s['seed']})"),
        ("attention", s["attention"]),
        ("gradient", data),
        ("optimizer, step size", f"{s['optimizer']}, {s['eta']:.6g}"),
        ("steps run", f"{s['steps_run']} of {s['steps']}"),
        ("wall time", f"{s['seconds']:.2f} s"),
        (
            "population loss initial / final (median)",
            f"{s['loss_initial']['median']:.4g} / {s['loss_final']['median']:.4g}",
        ),
        ("success rate (final)", success(s)),
        ("reached success at some step", f"{s['reached_rate']:.3f}"),
        ("steps to success (median)", median + spread),
        (
            "specialization / collapse (final)",
            f"{s['specialization_rate']:.3f} / {s['collapse_rate']:.3f}",
        ),
    ]
    if "test_accuracy_final" in s:
        rows.append(("test accuracy (median)", f"{s['test_accuracy_final']['median']:.4f}"))
    figures = tuple(f"figure: {path}" for path in s.get("figures", ()))
    return [listing("sparse parity: training", rows, figures)]


def xor_train_v1(r: dict[str, Any]) -> list[TextTable]:
    """``attnsep xor train-v1``: the authors' earlier 4x4 model."""
    reached = next(key for key in r if key.startswith("epochs_to_"))
    accuracy = [
        (f"median test accuracy, epoch {t}", f"{a:.4f}")
        for t, a in r["median_test_accuracy"].items()
    ]
    rows = [
        ("n, heads, trainable parameters", f"{r['n']}, {r['k']}, {r['trainable_params']}"),
        ("replicas (seed)", f"{r['seeds']} ({r['seed']})"),
        ("epochs run, wall time", f"{r['epochs_run']}, {r['seconds']:.2f} s"),
        *accuracy,
        (
            f"epochs to test accuracy {reached.removeprefix('epochs_to_')}",
            ", ".join("never" if e is None else str(e) for e in r[reached]),
        ),
    ]
    return [listing("k-parity, the 4x4 model (v1)", rows)]


def select_train(r: dict[str, Any]) -> list[TextTable]:
    """``attnsep select train``: a summary, then the length-generalization table."""
    cos = r["cos_to_ground_truth"]
    summary = listing(
        "select train",
        [
            ("d, T, q", f"{r['d']}, {r['T']}, {r['q']}"),
            ("PE (width, kind)", f"{r['pe']} ({r['pe_dim']}, {r['pe_kind']})"),
            ("trainable, objective", f"{r['trainable']}, {r['objective']}"),
            ("optimizer", r["optimizer"]),
            ("steps, batch, lr", f"{r['steps']}, {r['batch']}, {r['lr']:g}"),
            ("replicas (seed)", f"{r['seeds']} ({r['seed']})"),
            ("train loss (mean)", f"{r['train_loss']['mean']:.4g}"),
            ("cos(W, W*) (mean / min)", f"{cos['mean']:.4f} / {min(cos['values']):.4f}"),
            ("exact over tokens", r["exact_over_tokens"]),
            ("seconds", f"{r['seconds']:.1f}"),
        ],
    )
    rows = []
    for row in r["eval"]:
        exact = row["exact_loss"]
        rows.append(
            (
                str(row["T"]),
                f"{row['loss']:.4g} ± {row['stderr']:.2g}",
                f"{row['loss_per_coord']:.4g}",
                "n/a" if exact is None else f"{exact:.4g} ± {row['exact_stderr']:.2g}",
                f"{row['uniform_attention_loss']:.4g}",
            )
        )
    columns = ("T'", "loss ± stderr", "per coord", "exact ± stderr", "uniform attention")
    notes = (
        ("exact n/a: the content block of W is nonzero, so the logits depend on the tokens and "
         "the loss has no exact form over them (SPEC B3); the sampled loss stands alone",)
        if any(row["exact_loss"] is None for row in r["eval"])
        else ()
    )  # fmt: skip
    table = TextTable("length generalization (replica means)", columns, tuple(rows), notes)
    return [summary, table]


def select_bound(r: dict[str, Any]) -> list[TextTable]:
    """``attnsep select bound`` (SPEC B4): each loss as its fraction and its value."""

    def exact(name: str) -> str:
        return f"{r[name + '_fraction']} = {r[name]:.6g}"

    floor = f"{exact('fcn_loss_floor')}  [{r['fcn_loss_floor_form']}]"
    rows = [
        ("FCN loss floor", floor),
        ("uniform attention (W = 0)", exact("uniform_attention_loss")),
        ("predicting zero", exact("zero_predictor_loss")),
        ("reference losses are", r["reference_losses"]),
    ]
    return [listing(f"select bound (T={r['T']}, q={r['q']})", rows)]


def fcn_xor(r: dict[str, Any]) -> list[TextTable]:
    """``attnsep fcn xor`` (SPEC A7.6)."""
    low, high = r["success_interval"]
    rows = [
        ("d, width (params)", f"{r['d']}, {r['width']} ({r['params']})"),
        ("replicas (seed)", f"{r['seeds']} ({r['seed']})"),
        ("optimizer, loss, lr", f"{r['optimizer']}, {r['loss']}, {r['lr']:g}"),
        (
            "steps run (median / max)",
            f"{r['steps_run']['median']:g} / {max(r['steps_run']['values']):g}",
        ),
        ("test error (mean / median)", two(r["test_error"], "mean", "median", ".4f")),
        ("final test loss (mean)", f"{r['final_loss']['mean']:.4g}"),
        ("success rate (95% CI)", f"{r['success_rate']:.3f} ({low:.2f}-{high:.2f})"),
    ]
    return [listing("sparse XOR: two-layer ReLU net", rows)]


def fcn_select(r: dict[str, Any]) -> list[TextTable]:
    """``attnsep fcn select`` (SPEC B4, B5.4)."""
    rows = [
        ("d, T, q", f"{r['d']}, {r['T']}, {r['q']}"),
        ("width (Td), params", f"{r['width']} ({r['T'] * r['d']}), {r['params']}"),
        ("replicas (seed)", f"{r['seeds']} ({r['seed']})"),
        ("eval loss (mean / median)", two(r["loss"], "mean", "median", ".4g")),
        ("stderr (mean)", f"{r['stderr']['mean']:.2g}"),
        ("train loss (mean)", f"{r['train_loss']['mean']:.4g}"),
        ("FCN floor (SPEC B4)", f"{r['fcn_loss_floor']:.4g} = {r['fcn_loss_floor_exact']}"),
    ]
    return [listing("token selection: MLP on (vec X, 1_y)", rows)]


def claims(data: dict[str, Any]) -> list[TextTable]:
    """``attnsep reproduce`` and ``attnsep report``: per entry two lines that fit 80 columns:
    its id, its verdict in its colour, with ``--replicate`` how many master seeds agree on it
    (``4/5``), its criterion's power and false pass (SPEC Part E; ``-`` for a finding or a
    check without them) and its title; under it, its reason in short (at most 60 characters;
    the full reason: the report, ``attnsep report --claim ID``)."""
    replicated = any(c.get("replication") for c in data["claims"])
    rows, styles, details = [], [], []
    for c in data["claims"]:
        rates = c.get("calibration")
        shown = f"{rates['power']:.2f}/{rates['false_pass']:.2f}" if rates else "-"
        seeds = [c["replication"]["agreement"] if c.get("replication") else "-"] * replicated
        rows.append((c["claim"], c["verdict"], *seeds, shown, c["title"]))
        styles.append(
            ("bold", VERDICT_COLORS.get(c["verdict"], "green"), *[""] * len(seeds), "", "")
        )
        details.append(c.get("summary") or c.get("reason", ""))
    columns = ("claim", "verdict", *(["seeds"] * replicated), "power/fp", "title · reason")
    caption = "power/fp: the criterion's power and false pass (SPEC Part E)"
    return [
        TextTable(
            "claims",
            columns,
            tuple(rows),
            caption=caption,
            styles=tuple(styles),
            details=tuple(details),
        )
    ]


def entry(data: dict[str, Any]) -> list[TextTable]:
    """``attnsep report --claim ID``: the one entry of ``data["claims"]`` in full: its verdict
    with the seeds' verdicts, its criterion's error rates and where they were measured (SPEC
    Part E), its reason, what was measured, the criterion, the paper's sentence, the command
    and the figures."""
    (c,) = data["claims"]
    rows = [("verdict", f"{c['verdict']} ({c['kind']})")]
    if c.get("replication"):
        seeds = zip(c["replication"]["seeds"], c["replication"]["verdicts"], strict=True)
        rows.append(("seeds", ", ".join(f"{seed}: {verdict}" for seed, verdict in seeds)))
    if rates := c.get("calibration"):
        rows.append(("power / false pass", f"{rates['power']:.2f} / {rates['false_pass']:.2f}"))
        if source := rates.get("source"):
            where = f"{source['preset']} preset, master seed {source['seed']} ({source['run']})"
            rows.append(("rates measured on", where))
    rows += [
        (key, str(c[key])) for key in ("reason", "measured", "criterion", "paper") if c.get(key)
    ]
    rows += [("command", c.get("command", "")), ("figures", ", ".join(c.get("figures", [])))]
    title = f"{c['claim']}: {c['title']}"
    return [TextTable(title, ("item", "value"), tuple(rows), justify="ll", whole=1)]


def experiments(data: dict[str, Any]) -> list[TextTable]:
    """``attnsep list``: each experiment's name, claim and title."""
    rows = tuple((e["name"], e["claim"], e["title"]) for e in data["experiments"])
    return [TextTable("experiments", ("name", "claim", "reproduces"), rows, justify="lll")]


def runs(data: dict[str, Any]) -> list[TextTable]:
    """``attnsep runs list``: one row per stored job (``data``: the ``store`` and its ``runs``,
    as ``api.runs`` gives them)."""
    rows = tuple(
        (str(r["id"]), r["experiment"], r["config_hash"][:12], str(r["seed"]), r["status"])
        + (f"{r['seconds']:.2f}", str(r["records"]))
        for r in data["runs"]
    )
    columns = ("id", "experiment", "hash", "seed", "status", "seconds", "records")
    return [TextTable(data["store"], columns, rows, justify="l" * 7)]


LIMIT_WORDS = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<", "multiple_of": "a multiple of"}
LIMIT_WORDS |= {"min_length": "length >=", "max_length": "length <="}


def limits_text(limits: dict[str, Any]) -> str:
    """A field's limits (``api.show``) in words: ``>= 2``, ``length >= 1; items >= 2``."""
    parts = [f"{LIMIT_WORDS[k]} {v:g}" for k, v in limits.items() if k in LIMIT_WORDS]
    if "choices" in limits:
        parts.append("one of " + ", ".join(str(c) for c in limits["choices"]))
    inner = ("items", "keys", "values")
    return "; ".join(parts + [f"{k} {limits_text(limits[k])}" for k in inner if k in limits])


def value_text(value: Any) -> str:
    """A config value as JSON (``[64, 256]``, ``"softmax"`` without its quotes)."""
    return value if isinstance(value, str) else json.dumps(value)


def show(data: dict[str, Any]) -> list[TextTable]:
    """``attnsep show NAME``: the claim, the config's fields (type, default, limits, help), the
    values each preset sets with its jobs, estimated CPU and largest job's memory, then the
    config's description."""
    from ..core.resources import size
    from ..engine.plan import duration

    name, presets, cost = data["name"], data["presets"], data["cost"]
    tuned = ", ".join(str(seed) for seed in data["tuned_on"])
    about = (
        ("kind", data.get("kind", "claim")),
        ("paper", data["paper"]),
        ("versions", f"run {data['version']}, criterion {data['criterion_version']}"),
        ("criterion tuned on", f"master seed {tuned} (any other seed is confirmatory)"),
    )
    rows = tuple(
        (f["name"], f["type"], "(required)" if f["required"] else value_text(f["default"]))
        + (limits_text(f["limits"]), f["help"])
        for f in data["fields"]
    )
    columns = ("field", "type", "default", "limits", "help")
    title = f"config of {name} (--set FIELD=VALUE)"
    fields = TextTable(title, columns, rows, justify="lllll", whole=1)
    keys = [f["name"] for f in data["fields"] if any(f["name"] in p for p in presets.values())]
    set_rows = [
        (key, *(value_text(p[key]) if key in p else "-" for p in presets.values())) for key in keys
    ]
    set_rows.append(("jobs", *(str(cost[p]["jobs"]) for p in presets)))
    cpu = (duration(cost[p]["cpu_seconds"], cost[p]["rough"]) for p in presets)
    set_rows.append(("CPU estimate", *cpu))
    peaks = (cost[p].get("peak_bytes") for p in presets)
    set_rows.append(("largest job's memory", *("-" if b is None else size(b) for b in peaks)))
    notes = tuple(f"--preset {p}: {text}" for p, text in data["preset_help"].items())
    preset_table = TextTable(
        f"presets of {name} (- : the default)",
        ("field", *presets),
        tuple(set_rows),
        notes + ("", data["description"]),
        justify="llll",
        whole=1,
    )
    claim = TextTable(name, ("claim", f"{data['claim']}: {data['title']}"), about, justify="ll")
    return [claim, fields, preset_table]


TABLES: dict[str, Callable[[dict[str, Any]], list[TextTable]]] = {
    "show": show,
    "list": experiments,
    "runs": runs,
    "claims": claims,
    "claim": entry,
    "xor one-step": one_step,
    "xor train": xor_train,
    "xor train-v1": xor_train_v1,
    "select train": select_train,
    "select bound": select_bound,
    "fcn xor": fcn_xor,
    "fcn select": fcn_select,
}
"""Each command's tables, from its JSON object."""
