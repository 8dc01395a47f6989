"""The layers' boundary: shared code (everything outside ``travelgym/suites/``) finds suites
through the registry only. It imports no suite package and holds no suite's name as a string,
so a suite can be added, renamed or removed without touching it."""

from __future__ import annotations

import ast
from pathlib import Path

import travelgym
from travelgym.core.registry import suite_names

PACKAGE = Path(travelgym.__file__).resolve().parent
SUITES = PACKAGE / "suites"


def shared_modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if SUITES not in p.parents)


def docstring_nodes(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def violations(path: Path, names: list[str]) -> list[str]:
    """Imports of a suite package and string literals naming a suite in one module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    docs = docstring_nodes(tree)
    where = path.relative_to(PACKAGE.parent)
    found = []
    for node in ast.walk(tree):
        modules = []
        if isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module]
        elif isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        for module in modules:
            if module == "travelgym.suites" or module.startswith("travelgym.suites."):
                found.append(f"{where}:{node.lineno}: imports {module}")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            text = node.value.lower()
            for name in names:
                if name in text:
                    found.append(f"{where}:{node.lineno}: string names suite {name!r}")
    return found


def test_the_registry_lists_the_projects_suites():
    assert {"compass", "behavior2trip"} <= set(suite_names())


def test_shared_code_never_imports_or_names_a_suite():
    names = suite_names()
    found = [v for path in shared_modules() for v in violations(path, names)]
    assert not found, "\n".join(found)


def test_the_check_catches_what_it_forbids(tmp_path):
    module = tmp_path / "travelgym_bad.py"
    module.write_text('"""Mentions compass in a docstring, which is allowed."""\n'
                      "from travelgym.suites.compass import suite\n"
                      "import travelgym.suites.behavior2trip.plan\n"
                      "KIND = 'behavior2trip'\n")  # fmt: skip
    global PACKAGE
    saved, PACKAGE = PACKAGE, tmp_path
    try:
        found = violations(module, ["compass", "behavior2trip"])
    finally:
        PACKAGE = saved
    assert len(found) == 3, found


def module_graph(root: Path | None = None) -> dict[str, set[str]]:
    """travelgym's modules and the travelgym modules each imports: every import statement,
    at module level or inside a function, a method or a ``TYPE_CHECKING`` block (an import
    deferred into a function still ties the two modules together), relative ones resolved."""
    root = root or PACKAGE
    paths = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        paths[name] = path
    graph = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else [])) if node.level \
                    else node.module  # fmt: skip
                if not module:
                    continue
                subs = {f"{module}.{a.name}" for a in node.names} & set(paths)
                found |= subs or {module}  # ``from pkg import module`` needs the module
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
        graph[name] = {m for m in found if m in paths and m != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while component[-1:] != [v]:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles():
    assert cycles(module_graph()) == []


def test_the_graph_reads_imports_inside_functions_and_relative_ones(tmp_path):
    """A circle closed by an import inside a function (or a relative one) is a circle."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg import b\n")
    (pkg / "b.py").write_text("def f():\n    from pkg.c import g\n    return g\n")
    (pkg / "c.py").write_text("def g():\n    from . import a\n    return a\n")
    graph = module_graph(pkg)
    assert graph["pkg.b"] == {"pkg.c"} and graph["pkg.c"] == {"pkg.a"}
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.c"]]


def test_the_cycle_check_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_modules_stay_small():
    sizes = {p.relative_to(PACKAGE.parent): len(p.read_text().splitlines())
             for p in PACKAGE.rglob("*.py")}  # fmt: skip
    assert not {str(p): n for p, n in sizes.items() if n > 500}


def test_suites_do_not_import_each_other():
    """A suite package depends on the shared layers only, never on another suite."""
    found = []
    for suite_dir in sorted(p for p in SUITES.iterdir() if (p / "__init__.py").exists()):
        for path in suite_dir.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                module = node.module if isinstance(node, ast.ImportFrom) else None
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
                for target in filter(None, [module, *names]):
                    other = target.split(".")[2] if target.startswith("travelgym.suites.") else None
                    if other and other != suite_dir.name:
                        found.append(f"{path.relative_to(PACKAGE.parent)}: imports {target}")
    assert not found, "\n".join(found)
