"""The API reference and the experiment pages as they render: the site is built
once, with the real ``mkdocs.yml``'s mkdocstrings options and hooks but only ``api.md`` and
the generated experiment pages (no tutorials executed), and its HTML is read back.

The reference must state each parameter's own type, default and description (griffe renders
``seeds, seed`` on one docstring line as two parameters with one type and one text), show
default values rather than the code that computes them (``default(OneStepConfig, "m")``,
``DEFAULT_PATH``: ``docs/griffe_defaults.py``), carry no Sphinx role (``:func:``), list every
public function of ``attnsep.api`` and every public member of each result type; each
experiment page lists its config's fields, its presets and its criterion.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path, PurePath
from typing import Any

import pytest

pytest.importorskip("mkdocs")
pytest.importorskip("mkdocstrings_handlers.python")
yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
ROLE = re.compile(r":(?:func|class|meth|mod|data|attr|obj):\S")  # `x` renders as <code>
CONSTANT = re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\b[A-Z]{4,}\b")
"""A constant's name (``DEFAULT_PATH``, ``EVAL_SIZE``, ``FOLDER``) where a value belongs."""
RESULT_TYPES = {
    "attnsep.results": None,  # every public dataclass the package exports
    "attnsep.report.reproduction": ("Reproduction",),
}


# ------------------------------------------------------------------------ a small HTML tree


@dataclasses.dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node | str] = dataclasses.field(default_factory=list)

    def text(self) -> str:
        parts = [c if isinstance(c, str) else c.text() for c in self.children]
        return " ".join("".join(parts).split()) if self.tag == "#root" else "".join(parts)

    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def walk(self):
        for child in self.children:
            if isinstance(child, Node):
                yield child
                yield from child.walk()

    def elements(self) -> list[Node]:
        return [c for c in self.children if isinstance(c, Node)]


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}


class Tree(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(path: Path) -> Node:
    tree = Tree()
    tree.feed(path.read_text(encoding="utf-8"))
    return tree.root


def squash(text: str) -> str:
    return " ".join(text.split())


def documented(page: Node) -> dict[str, Node]:
    """Each documented object's ``div.doc-object`` by its anchor (``attnsep.api.sweep``)."""
    out = {}
    for node in page.walk():
        if node.tag == "div" and "doc-object" in node.classes():
            heading = next((c for c in node.elements() if re.fullmatch(r"h\d", c.tag)), None)
            if heading is not None and heading.attrs.get("id"):
                out[heading.attrs["id"]] = node
    return out


def signature(obj: Node) -> str:
    found = [c for c in obj.elements() if "doc-signature" in c.classes()]
    return squash(found[0].text()) if found else ""


def sections(obj: Node) -> dict[str, list[list[str]]]:
    """The object's own tables (``Parameters:``, ``Returns:``, ...): their rows' cells."""
    contents = next((c for c in obj.elements() if "doc-contents" in c.classes()), None)
    out: dict[str, list[list[str]]] = {}
    title = None
    for child in contents.elements() if contents else []:
        if child.tag == "p" and any("doc-section-title" in n.classes() for n in child.walk()):
            title = squash(child.text()).rstrip(":")
        elif child.tag == "table" and title:
            rows = [n for n in child.walk() if n.tag == "tr" and "doc-section-item" in n.classes()]
            out[title] = [
                [squash(td.text()) for td in r.elements() if td.tag == "td"] for r in rows
            ]
            title = None
    return out


# ------------------------------------------------------------------------ the site


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference and the experiment pages, built once with ``mkdocs build --strict``."""
    tmp = tmp_path_factory.mktemp("apiref")
    docs = tmp / "docs"
    docs.mkdir()
    for name in ("api.md", "SPEC.md"):  # the experiment pages link to SPEC.md
        (docs / name).write_text((DOCS / name).read_text(encoding="utf-8"), encoding="utf-8")
    (docs / "index.md").write_text("# attnsep\n", encoding="utf-8")  # the site's home
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    mkdocstrings = next(p for p in config["plugins"] if isinstance(p, dict) and "mkdocstrings" in p)
    python = mkdocstrings["mkdocstrings"]["handlers"]["python"]
    python["paths"] = [str(ROOT / p) for p in python["paths"]]
    options = python["options"]
    options["extensions"] = [
        str(ROOT / e) if str(e).endswith(".py") else e for e in options.get("extensions", [])
    ]
    config.update(
        docs_dir=str(docs),
        site_dir=str(tmp / "site"),
        nav=["index.md", {"API reference": "api.md"}, {"Experiments": "experiments/index.md"}],
        plugins=["search", mkdocstrings],
        hooks=[str(ROOT / h) for h in config["hooks"]],
        extra_css=[],
        strict=True,
    )
    for key in ("exclude_docs", "not_in_nav"):
        config.pop(key, None)
    config_file = tmp / "mkdocs.yml"
    config_file.write_text(yaml.safe_dump(config), encoding="utf-8")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config_file)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    return tmp / "site"


@pytest.fixture(scope="module")
def api_page(site: Path) -> Node:
    return parse(site / "api.html")


@pytest.fixture(scope="module")
def objects(api_page: Node) -> dict[str, Node]:
    return documented(api_page)


def public_api_functions() -> list[str]:
    """``attnsep.api``'s public functions: defined there, or re-exported (``import x as x``)."""
    tree = ast.parse((ROOT / "src" / "attnsep" / "api" / "__init__.py").read_text(encoding="utf-8"))
    names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    names += [
        a.name for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names if a.asname
    ]
    api = importlib.import_module("attnsep.api")
    return [n for n in names if not n.startswith("_") and inspect.isfunction(getattr(api, n))]


def value_text(value: Any) -> str:
    """A default as the reference shows it (``repr``; a path as ``Path('...')``)."""
    return f"Path({value.as_posix()!r})" if isinstance(value, PurePath) else repr(value)


# ------------------------------------------------------------------------ the reference


def test_every_public_function_is_in_the_reference(objects: dict[str, Node]) -> None:
    missing = [n for n in public_api_functions() if f"attnsep.api.{n}" not in objects]
    assert not missing, f"docs/api.md leaves out attnsep.api's {missing}"


def test_no_code_where_a_value_belongs(api_page: Node, objects: dict[str, Node]) -> None:
    text = api_page.text()
    assert "default(" not in text
    role = ROLE.search(text)
    assert role is None, f"a Sphinx role: ...{text[role.start() - 80 : role.end() + 40]}..."
    for anchor, obj in objects.items():
        sig = signature(obj)
        for default in re.findall(r"=\s*([^,()]+(?:\([^)]*\))?)", sig):
            assert not CONSTANT.search(default), f"{anchor}: default {default!r} in {sig}"
        for row in sections(obj).get("Parameters", []):
            assert not CONSTANT.search(row[-1]), f"{anchor}: {row}"


def test_each_parameter_has_its_own_type_default_and_text(objects: dict[str, Node]) -> None:
    """Every function's table lists exactly its parameters, each with the annotation and the
    default of its own signature and a description no other parameter shares."""
    api = importlib.import_module("attnsep.api")
    for name in public_api_functions():
        function = getattr(api, name)
        params = inspect.signature(function).parameters
        rows = sections(objects[f"attnsep.api.{name}"]).get("Parameters", [])
        shown = {row[0].lstrip("*"): row for row in rows}
        assert list(shown) == list(params), f"{name}: documents {list(shown)}, takes {list(params)}"
        texts = [row[2] for row in rows]
        shared = {t for t in texts if texts.count(t) > 1}
        assert not shared, f"{name}: parameters share a description: {shared}"
        for pname, param in params.items():
            _, kind, _, default = shown[pname]
            assert squash(kind).replace(" ", "") == str(param.annotation).replace(" ", ""), (
                f"{name}({pname}): shown as {kind!r}, annotated {param.annotation!r}"
            )
            if param.kind is param.VAR_KEYWORD:
                continue
            expected = "required" if param.default is param.empty else value_text(param.default)
            assert default == expected, f"{name}({pname}): default {default!r}, is {expected!r}"


def test_sweep_and_train_selector_read_right(objects: dict[str, Node]) -> None:
    from attnsep.configs import EVAL_SIZE, SelectionTrainConfig, default

    rows = {r[0]: r for r in sections(objects["attnsep.api.sweep"])["Parameters"]}
    assert rows["executor"][1:4:2] == ["str | Executor", "'inline'"]
    assert rows["store"][1:4:2] == ["str | Path", "Path('results/attnsep.sqlite')"]
    rows = {r[0]: r for r in sections(objects["attnsep.api.executor"])["Parameters"]}
    assert rows["address"][1:4:2] == ["str | None", "None"]
    assert rows["workers"][1:4:2] == ["int | None", "None"]
    rows = {r[0]: r for r in sections(objects["attnsep.api.train_selector"])["Parameters"]}
    assert rows["seed"][3] == "0"
    assert rows["seeds"][3] == repr(default(SelectionTrainConfig, "seeds"))
    assert rows["pe_dim"][3] == repr(default(SelectionTrainConfig, "pe_dim"))
    sig = signature(objects["attnsep.api.train_selector"])
    assert f"eval_size: int = {EVAL_SIZE}," in sig


def result_types() -> list[tuple[str, type]]:
    """``(documented path, class)`` of every result type the reference shows."""
    found = []
    for module_name, names in RESULT_TYPES.items():
        module = importlib.import_module(module_name)
        public = getattr(module, "__all__", list(vars(module))) if names is None else names
        for name in public:
            value = getattr(module, name)
            if inspect.isclass(value) and dataclasses.is_dataclass(value):
                found.append((f"{module_name}.{name}", value))
    return found


def test_every_member_of_each_result_type(objects: dict[str, Node]) -> None:
    types = result_types()
    assert {t.__name__ for _, t in types} >= {"XorStepResult", "SweepResult", "XorTrainResult"}
    for path, cls in types:  # its heading may be the page's own
        assert any(a == path or a.startswith(f"{path}.") for a in objects), f"{path} not shown"
        members = [f.name for f in dataclasses.fields(cls)]
        members += [n for n in vars(cls) if not n.startswith("_") and n not in members]
        missing = [m for m in members if f"{path}.{m}" not in objects]
        assert not missing, f"{path}: {missing} not rendered"


# ------------------------------------------------------------------------ the experiment pages


def test_a_page_per_experiment(site: Path) -> None:
    from attnsep.experiments import base, catalog

    index = parse(site / "experiments" / "index.html").text()
    for item in catalog():
        name = item["name"]
        experiment = base.get(name)
        page = parse(site / "experiments" / f"{name}.html")
        text = page.text()
        assert f"{name}.html" in (site / "experiments" / "index.html").read_text(encoding="utf-8")
        assert item["claim"] in index and item["claim"] in text
        assert f"criterion version {experiment.criterion_version}" in text
        tables = [n for n in page.walk() if n.tag == "table"]
        heads = [[squash(th.text()) for th in t.walk() if th.tag == "th"] for t in tables]
        fields = tables[heads.index(["Field", "Type", "Default", "Limits", "Description"])]
        listed = [squash(r.elements()[0].text()) for r in fields.walk() if r.tag == "tr"][1:]
        assert listed == list(experiment.config_type.model_fields), name
        assert ["Field", "Default", "quick", "standard", "full"] in heads
        cost = tables[heads.index(["Preset", "Jobs", "CPU", "From (jobs)"])]
        assert [squash(r.elements()[0].text()) for r in cost.walk() if r.tag == "tr"][1:] == [
            "quick",
            "standard",
            "full",
        ]
        assert "default(" not in text and not ROLE.search(text)


def test_the_site_links_resolve(site: Path) -> None:
    sys.path.insert(0, str(DOCS))
    try:
        links = importlib.import_module("check_site_links")
    finally:
        sys.path.remove(str(DOCS))
    assert links.broken_links(site) == []
