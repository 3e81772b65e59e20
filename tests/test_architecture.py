"""ARCHITECTURE.md stays true: every path and name it gives in backticks exists, its data-flow
table names real store tables, and the import rules it states hold for the whole tree
(imports inside functions and TYPE_CHECKING blocks included)."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import sys
import tomllib
from collections.abc import Iterable
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
PACKAGES = ("curate", "annotate", "mmrb_eval")
PLACEHOLDER = "NAME"  # "curate/formats/NAME.py": where a new one goes


def _spans(text: str) -> list[str]:
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)  # the layer diagram
    return re.findall(r"`([^`\n]+)`", text)


SPANS = _spans(DOC)


def _is_path(span: str) -> bool:
    return bool(re.fullmatch(r"[\w./*-]+", span)) and ("/" in span or bool(re.search(r"\.(py|toml|md)$", span)))


# -- the tree as source -------------------------------------------------------------------
def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _sources() -> dict[str, tuple[Path, ast.Module]]:
    files = [p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))] + [ROOT / "app.py"]
    return {_module_name(p): (p, ast.parse(p.read_text(encoding="utf-8"))) for p in files}


def _imports(module: str) -> list[tuple[int, str]]:
    """(line, imported module) of every import statement anywhere in the module. ``from X
    import y`` counts as X.y when that is a module of the project, else as X."""
    path, tree = _sources()[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for a in node.names:
                sub = f"{mod}.{a.name}"
                out.append((node.lineno, sub if sub in _sources() or _is_installed_module(sub) else mod))
    return out


def _is_installed_module(name: str) -> bool:
    """Whether a library's ``a.b.c`` is a module, found on disk without importing anything."""
    top, *rest = name.split(".")
    spec = importlib.util.find_spec(top) if top not in sys.modules else sys.modules[top].__spec__
    if spec is None or not spec.submodule_search_locations or not rest:
        return False
    for folder in map(Path, spec.submodule_search_locations):
        path = folder.joinpath(*rest)
        if path.with_suffix(".py").exists() or (path / "__init__.py").exists():
            return True
    return False


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _violations(modules: Iterable[str], forbidden: tuple[str, ...]) -> list[str]:
    return [
        f"{m} line {n} imports {target}"
        for m in modules
        for n, target in _imports(m)
        if any(_under(target, f) for f in forbidden)
    ]


def _in(prefixes: tuple[str, ...]) -> list[str]:
    return [m for m in _sources() if any(_under(m, p) for p in prefixes)]


def _outside(prefixes: tuple[str, ...]) -> list[str]:
    return [m for m in _sources() if not any(_under(m, p) for p in prefixes)]


@cache
def _defined_names() -> frozenset[str]:
    """Every function, class, module-level or class-level name, module, and Literal value."""
    names: set[str] = set()
    for module, (_, tree) in _sources().items():
        names.update(module.split("."))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
            elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Literal":
                names.update(
                    c.value for c in ast.walk(node.slice) if isinstance(c, ast.Constant) and isinstance(c.value, str)
                )
    return frozenset(names)


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    if parts[0] == "Store":
        from curate.store import Store

        return len(parts) == 2 and hasattr(Store, parts[1])
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


# -- what the document names ---------------------------------------------------------------
def test_every_path_in_backticks_exists():
    paths = [s for s in SPANS if _is_path(s) and PLACEHOLDER not in s and "*" not in s]
    assert len(paths) > 60
    missing = sorted({p for p in paths if not (ROOT / p).exists()})
    assert missing == [], missing


def test_every_dotted_name_resolves():
    dotted = [
        s for s in SPANS if re.fullmatch(r"(curate|annotate|mmrb_eval|Store|sqlalchemy|streamlit|typing)(\.\w+)+", s)
    ]
    assert len(dotted) > 30
    assert [d for d in dotted if not _resolves(d)] == []


def test_every_code_name_is_defined_in_the_tree():
    # bare names that look like code (CamelCase, UPPER_CASE, snake_case): a class, function,
    # constant, field, module or Literal value of the project
    names = [s for s in SPANS if re.fullmatch(r"[A-Za-z_]\w*", s) and s != PLACEHOLDER and (s != s.lower() or "_" in s)]
    assert len(names) > 30
    assert sorted({n for n in names if n not in _defined_names()}) == []


def _flow_rows() -> list[list[str]]:
    section = DOC.split("## Data flow", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip().strip("|").split("|") for line in section.splitlines() if line.startswith("|")]
    return [[c.strip() for c in r] for r in rows[2:]]  # without the header and its rule


def test_the_data_flow_names_real_tables_and_every_table_is_named():
    from curate.store import schema

    tables = set(schema.metadata.tables)
    rows = _flow_rows()
    assert [r[0] for r in rows][:2] == ["ingest", "sample"] and rows[-1][0] == "leaderboard"
    written = {s for r in rows for s in _spans(r[-1]) if re.fullmatch(r"[a-z_]+", s)}
    assert written and written <= tables, written - tables
    assert tables <= set(SPANS), f"tables ARCHITECTURE.md does not name: {sorted(tables - set(SPANS))}"


def test_the_commands_it_describes_are_the_registered_ones():
    from curate.cli import STAGES

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    commands = project["entry-points"]["mmrb.commands"]
    assert set(commands) == set(STAGES) and len(STAGES) == len(set(STAGES))
    for target in commands.values():
        assert (ROOT / (target.replace(".", "/") + ".py")).exists(), target
    flow_skins = {s.split()[1] for r in _flow_rows() for s in _spans(r[1]) if s.startswith("mmrb ")}
    assert flow_skins <= set(STAGES)


# -- the import rules it states ------------------------------------------------------------
def test_the_import_scan_sees_the_tree():
    # the rules below mean something only if the scan finds imports, lazy ones included
    lazy = [t for _, t in _imports("curate.commands.ingest")]
    assert "curate.commands.common" in lazy and "curate.ingest" in lazy
    assert any(_under(t, "streamlit") for _, t in _imports("annotate.label_ui"))
    assert "curate.store.schema" in [t for _, t in _imports("curate.store.items")]
    assert len(_sources()) > 120


def test_curate_never_imports_streamlit_annotate_or_mmrb_eval():
    assert _violations(_in(("curate",)), ("streamlit", "annotate", "mmrb_eval")) == []


def test_mmrb_eval_never_imports_streamlit_or_annotate():
    assert _violations(_in(("mmrb_eval",)), ("streamlit", "annotate")) == []


def test_only_the_store_speaks_sql():
    outside = _outside(("curate.store",))
    internals = tuple(f"curate.store.{m}" for m in ("schema", "engine", "base", "migrations", "rows"))
    assert _violations(outside, internals + ("sqlite3", "psycopg")) == []
    # sqlalchemy outside the store: its error classes only
    stray = [
        f"{m} line {n} imports {t}"
        for m in outside
        for n, t in _imports(m)
        if _under(t, "sqlalchemy") and not _under(t, "sqlalchemy.exc")
    ]
    assert stray == []
    users = {m for m in outside for _, t in _imports(m) if _under(t, "sqlalchemy")}
    assert users == {"curate.assign", "annotate.outage"}  # as ARCHITECTURE.md names them


def _project_imports_outside(modules: Iterable[str], allowed: tuple[str, ...]) -> list[str]:
    return [
        f"{m} line {n} imports {t}"
        for m in modules
        for n, t in _imports(m)
        if any(_under(t, p) for p in PACKAGES) and not any(_under(t, a) for a in allowed)
    ]


def test_the_store_imports_no_stage():
    # nothing of curate/judging/ either: the runner imports the store, never the other way round
    allowed = ("curate.store", "curate.model", "curate.images", "curate.errors")
    allowed += ("curate.seeding",)  # the short hash of sampling parameters (params_key)
    allowed += ("curate.lookalike",)  # each stored id's look-alike skeleton (id_skeleton)
    assert _project_imports_outside(_in(("curate.store",)), allowed) == []


def test_formats_know_nothing_of_store_importer_or_scoring():
    allowed = ("curate.formats", "curate.model", "curate.errors", "curate.seeding", "curate.judging.records")
    allowed += ("curate.wording",)  # plural forms in its messages
    assert _project_imports_outside(_in(("curate.formats",)), allowed) == []


def test_the_model_imports_nothing_of_the_project():
    assert _violations(["curate.model"], PACKAGES) == []


def test_no_core_module_imports_the_skin():
    skin = ("curate.cli", "curate.commands", "annotate.commands", "mmrb_eval.commands")
    assert _violations(_outside(skin), skin) == []


@pytest.mark.parametrize(
    "module",
    [
        "annotate.admin",
        "annotate.adjudication",
        "annotate.auth",
        "annotate.clock",
        "annotate.form",
        "annotate.queue",
        "annotate.outage",
        "annotate.sessions",
        *_in(("annotate.labelstudio", "annotate.commands")),
    ],
)
def test_the_app_rules_never_import_streamlit(module: str) -> None:
    assert _violations([module], ("streamlit",)) == []


def test_the_readme_layout_links_here():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    layout = readme.split("## Layout", 1)[1].split("\n## ", 1)[0]
    assert "](ARCHITECTURE.md)" in layout


def test_no_fallback_for_a_missing_dependency():
    # every library the packages import is a dependency in pyproject.toml: a branch for its
    # absence (``except ImportError``) can never run
    caught = [
        f"{module} line {node.lineno}"
        for module, (_, tree) in _sources().items()
        for node in ast.walk(tree)
        if isinstance(node, ast.ExceptHandler)
        and any(
            isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError")
            for n in ast.walk(node.type or ast.Tuple(elts=[]))
        )
    ]
    assert caught == []


def test_no_text_names_the_old_layout():
    # benches run as modules (python -m bench.NAME), and the evaluator is mmrb_eval, not evaluate
    import subprocess

    files = subprocess.run(["git", "ls-files", "*.py", "*.md", "run"], cwd=ROOT, capture_output=True, text=True)
    old = re.compile(r"python3? bench/\w+\.py|(?<![\w./])evaluate\.(?!py\b)[a-z_]+")
    found = [
        f"{name}:{n}: {m.group(0)}"
        for name in files.stdout.split()
        if name != "tests/test_architecture.py" and (ROOT / name).exists()  # deleted, not yet committed
        for n, line in enumerate((ROOT / name).read_text(encoding="utf-8").splitlines(), 1)
        for m in old.finditer(line)
    ]
    assert found == []


def test_no_import_cycle_between_modules():
    # imports inside functions count: a cycle hidden by a deferred import is still a cycle
    graph = {m: {t for _, t in _imports(m) if t in _sources() and t != m} for m in _sources()}
    cycles = [c for c in _strongly_connected(graph) if len(c) > 1]
    assert cycles == []


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, edges = work[-1]
            w = next(edges, None)
            if w is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        x = stack.pop()
                        on_stack.discard(x)
                        comp.append(x)
                        if x == v:
                            break
                    out.append(sorted(comp))
            elif w not in index:
                index[w] = low[w] = len(index)
                stack.append(w)
                on_stack.add(w)
                work.append((w, iter(sorted(graph[w]))))
            elif w in on_stack:
                low[v] = min(low[v], index[w])
    return out


# the skins: commands and page scripts import what a command or page needs when it runs
SKINS = ("curate.cli", "curate.commands", "annotate.commands", "mmrb_eval.commands", "annotate.views", "app")


def test_every_deferred_import_outside_the_skins_says_why():
    # An import inside a function of the core is kept only for start-up time (a heavy
    # library, or `--help` and the app's start not loading what they do not use), and a
    # comment on it, or on the line just above its group, says so
    silent = []
    for m in _outside(SKINS):
        path, tree = _sources()[m]
        lines = path.read_text(encoding="utf-8").splitlines()
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            previous = None
            for node in ast.walk(fn):
                if not isinstance(node, ast.Import | ast.ImportFrom) or node in (previous,):
                    continue
                line = node.lineno
                said = "#" in lines[line - 1] or lines[line - 2].strip().startswith("#")
                grouped = previous is not None and previous.end_lineno == line - 1
                if not (said or grouped):
                    silent.append(f"{path.relative_to(ROOT)}:{line}: {lines[line - 1].strip()}")
                previous = node
    assert silent == [], "\n".join(silent)
