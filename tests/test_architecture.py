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
