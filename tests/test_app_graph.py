"""The app-level import graph points downward: no cycle, lazy imports included; `common` imports no app.

Every module of every app is parsed with `ast`: module-level imports, imports inside functions and methods, and
`importlib.import_module("x")` / `import_module("x")` calls with a literal name all count. `python -m
tests.test_app_graph` prints the edges (with the module and line of the first import behind each).
"""

from __future__ import annotations

import ast
import functools
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPS = (
    "accounts",
    "annotation",
    "archive",
    "audit",
    "common",
    "config",
    "demo",
    "endpoints",
    "evaluation",
    "exports",
    "multichoice",
    "review",
    "validation",
    "wikiqa",
)
# `config` is the top (settings, celery, urls, wsgi): it may import apps; an app reads settings through Django.
TOP = "config"
BOTTOM = "common"


@dataclass(frozen=True)
class Import:
    source: str  # the importing app
    target: str  # the imported app
    module: str  # the importing module's dotted name
    line: int
    lazy: bool  # inside a function or method


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(module: str, is_package: bool, level: int, name: str | None) -> str:
    """The absolute dotted name of `from <level dots><name> import …` inside `module`."""
    if not level:
        return name or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, name] if name else base)


def _imported_names(tree: ast.AST, module: str, is_package: bool) -> Iterator[tuple[str, int, bool]]:
    """(dotted name, line, lazy) for every import in the tree."""

    def visit(node: ast.AST, lazy: bool) -> Iterator[tuple[str, int, bool]]:
        for child in ast.iter_child_nodes(node):
            inner = lazy or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield alias.name, child.lineno, lazy
            elif isinstance(child, ast.ImportFrom):
                base = _resolve(module, is_package, child.level, child.module)
                yield base, child.lineno, lazy
                # `from review import services` names the submodule; `from django.conf import settings` does not
                for alias in child.names:
                    yield f"{base}.{alias.name}", child.lineno, lazy
            elif isinstance(child, ast.Call) and _is_import_module(child.func) and (name := _literal(child)):
                yield name, child.lineno, True
            yield from visit(child, inner)

    yield from visit(tree, False)


def _literal(call: ast.Call) -> str | None:
    first = call.args[0] if call.args else None
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None


def _is_import_module(func: ast.expr) -> bool:
    if isinstance(func, ast.Attribute):
        return func.attr == "import_module"
    return isinstance(func, ast.Name) and func.id == "import_module"


@functools.cache
def _app_modules() -> tuple[tuple[str, Path, ast.Module], ...]:
    """Each app's modules (migrations included), parsed once per process: (app, path, tree)."""
    return tuple(
        (app, path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        for app in APPS
        for path in sorted((ROOT / app).rglob("*.py"))
    )


def app_imports() -> list[Import]:
    """Every import from one app into another, in every module of every app (migrations included)."""
    found: list[Import] = []
    for app, path, tree in _app_modules():
        module = _module_name(path)
        seen: set[tuple[str, int]] = set()
        for name, line, lazy in _imported_names(tree, module, path.name == "__init__.py"):
            target = name.split(".")[0]
            if target in APPS and target != app and (target, line) not in seen:
                seen.add((target, line))
                found.append(Import(app, target, module, line, lazy))
    return found


def app_graph(imports: list[Import] | None = None) -> dict[tuple[str, str], list[Import]]:
    """(importing app, imported app) → the imports behind that edge."""
    edges: dict[tuple[str, str], list[Import]] = {}
    for found in app_imports() if imports is None else imports:
        edges.setdefault((found.source, found.target), []).append(found)
    return dict(sorted(edges.items()))


def cycles(edges: dict[tuple[str, str], list[Import]]) -> list[list[str]]:
    """The strongly connected components with more than one app (Tarjan), each sorted."""
    graph: dict[str, list[str]] = {app: [] for app in APPS}
    for source, target in edges:
        graph[source].append(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def connect(app: str) -> None:
        index[app] = low[app] = len(index)
        stack.append(app)
        for target in graph[app]:
            if target not in index:
                connect(target)
                low[app] = min(low[app], low[target])
            elif target in stack:
                low[app] = min(low[app], index[target])
        if low[app] == index[app]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == app:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for app in APPS:
        if app not in index:
            connect(app)
    return sorted(found)


def describe(edges: dict[tuple[str, str], list[Import]]) -> list[str]:
    lines = []
    for (source, target), imports in edges.items():
        first = imports[0]
        lazy = sum(found.lazy for found in imports)
        lines.append(
            f"{source} -> {target}  ({len(imports)} import(s), {lazy} lazy; first {first.module}:{first.line})"
        )
    return lines


def _where(imports: list[Import]) -> str:
    return ", ".join(f"{found.module}:{found.line}{' (lazy)' if found.lazy else ''}" for found in imports)


def test_the_parser_sees_lazy_relative_and_import_module_imports() -> None:
    tree = ast.parse(
        "from . import models\n"
        "from .views import page\n"
        "def f():\n"
        "    from review.services import x\n"
        "    import importlib\n"
        "    importlib.import_module('audit.services')\n"
        "class C:\n"
        "    def m(self):\n"
        "        import exports.api\n"
    )
    names = {(name, lazy) for name, _, lazy in _imported_names(tree, "annotation.services", False)}
    assert ("annotation.models", False) in names
    assert ("annotation.views.page", False) in names
    assert ("review.services.x", True) in names
    assert ("audit.services", True) in names
    assert ("exports.api", True) in names


def test_the_cycle_finder_finds_a_cycle() -> None:
    edge = Import("a", "b", "a.x", 1, False)
    graph = {("annotation", "review"): [edge], ("review", "audit"): [edge], ("audit", "annotation"): [edge]}
    assert cycles(graph) == [["annotation", "audit", "review"]]
    assert cycles({("annotation", "common"): [edge]}) == []


def test_no_cycle_between_apps() -> None:
    edges = app_graph()
    # config is the top and sits in every cycle it closes; those imports are checked on their own below
    below = {edge: imports for edge, imports in edges.items() if TOP not in edge}
    found = cycles(below)
    detail = [
        f"{source} -> {target}: {_where(imports)}"
        for (source, target), imports in below.items()
        if any(source in cycle and target in cycle for cycle in found)
    ]
    assert not found, f"import cycles between apps {found}:\n" + "\n".join(detail)


def private_imports() -> list[str]:
    """`from <other app>.<module> import _name`: one app leaning on another's private helper."""
    found = []
    for app, path, tree in _app_modules():
        module = _module_name(path)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                target = node.module.split(".")[0]
                for alias in node.names:
                    if target in APPS and target != app and alias.name.startswith("_"):
                        found.append(f"{module}:{node.lineno} imports {node.module}.{alias.name}")
    return found


def test_no_app_imports_another_apps_private_names() -> None:
    # The dataset card's text helpers are shared by the other kinds' cards (the release writer's part).
    allowed = {"exports.formats.card._md", "exports.formats.card._q", "exports.formats.card._size_category"}
    assert [found for found in private_imports() if found.split(" imports ")[1] not in allowed] == []


def test_common_imports_no_app() -> None:
    edges = app_graph()
    upward = {target: imports for (source, target), imports in edges.items() if source == BOTTOM}
    assert not upward, "common/ imports " + "; ".join(f"{t}: {_where(i)}" for t, i in upward.items())


def test_no_app_imports_config() -> None:
    edges = app_graph()
    upward = {source: imports for (source, target), imports in edges.items() if target == TOP}
    assert not upward, "apps import config (use django.conf.settings): " + "; ".join(
        f"{s}: {_where(i)}" for s, i in upward.items()
    )


if __name__ == "__main__":
    edges = app_graph()
    print("\n".join(describe(edges)))
    print("cycles (config aside):", cycles({edge: found for edge, found in edges.items() if TOP not in edge}))
    print("cycles (all):", cycles(edges))
    sys.exit(0)
